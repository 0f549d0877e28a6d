"""Host-side cost of a warm launch, per call, without a GPU.

Each row launches one ten-argument kernel (6 arrays, 4 scalars, 1 constexpr) the way user
code does — `kernel[grid](...)`, `kernel.run(..., grid=...)`, an `@autotune`d kernel —
with stand-in arrays (torch-, CuPy- and `__cuda_array_interface__`-like objects whose
attributes are Python here, C in the real frameworks) and a loaded kernel whose
cuLaunchKernel is a no-op.  Everything tilecc does per call runs: binding, the warm key,
the cache lookup, the grid, packing the argument block, the stream, the driver call.

    PYTHONPATH=. python benchmarks/bench_launch_host.py [--number N] [--repeat R] [--match S]

The numbers are the best of R repeats of N calls, in µs per call; compare runs of one
machine only.  Only public entry points and `tilecc.runtime.launch._build` (the loader,
replaced by the stand-in) are used, so the script measures any version of the launch
path alike.
"""

from __future__ import annotations

import argparse
import sys
import timeit
import types

import tilecc
import tilecc.language as tl

BASE = 0x7F0000000000


def ten(a, b, c, d, e, f, n, m, k, alpha, BLOCK: tl.constexpr):
    pass


class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


F32 = FakeDtype("float32")


class Tensor:
    """What the launch path reads of a torch CUDA tensor."""

    def __init__(self, ptr, device=0):
        self.ptr, self.dtype, self.index = ptr, F32, device
        self.device = types.SimpleNamespace(type="cuda", index=device)

    def data_ptr(self):
        return self.ptr

    def get_device(self):
        return self.index


Tensor.__module__ = "torch"


class CuPyArray:
    """What the launch path reads of a CuPy array."""

    def __init__(self, ptr, device=0):
        import numpy as np

        self._mem = types.SimpleNamespace(ptr=ptr, device_id=device)
        self.dtype = np.dtype("<f4")
        self.device = types.SimpleNamespace(id=device)

    @property
    def data(self):  # a MemoryPointer: .ptr, .device_id
        return self._mem

    @property
    def __cuda_array_interface__(self):
        return {"data": (self._mem.ptr, False), "typestr": "<f4", "shape": (64,), "version": 3}


CuPyArray.__module__ = "cupy._core.core"


class CAIArray:
    """Any other device array: the CUDA array interface only."""

    def __init__(self, ptr, device=0):
        self.ptr = ptr
        self.device = types.SimpleNamespace(id=device)

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "typestr": "<f4", "shape": (64,), "version": 3}


class NoOpKernel:
    """A loaded kernel whose cuLaunchKernel does nothing."""

    def __init__(self, num_warps, device_id):
        self.handle, self.threads, self.device_id = 0x1234, num_warps * 32, device_id
        self.shared_bytes = 0
        self.launch_kernel = lambda *a: None

    def relaunch(self, error, *args):
        raise error


def install_stand_ins() -> None:
    """Stand-in torch and CuPy modules, and a loader that returns `NoOpKernel`s."""
    torch = types.ModuleType("torch")
    torch.Tensor = Tensor
    torch.version = types.SimpleNamespace(hip=None)
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda dev: 0x7000 + dev)
    cupy = types.ModuleType("cupy")
    stream = types.SimpleNamespace(ptr=0x9000)
    cupy.cuda = types.SimpleNamespace(get_current_stream=lambda dev: stream)
    sys.modules["torch"] = torch
    sys.modules["cupy"] = cupy

    from tilecc.runtime import launch as L

    L._build = lambda jit_fn, specs, num_warps, debug, backend, device_id, num_stages=None, \
        **more: NoOpKernel(num_warps, device_id)  # (more: other launch options given)


def cases() -> dict:
    """label -> a no-argument function that makes one warm launch."""

    def arrays(make):
        return [make(BASE + i * 4096) for i in range(6)]

    ts, cs, os_ = arrays(Tensor), arrays(CuPyArray), arrays(CAIArray)
    k1, k2, k3, k4, k5, k6, k7, k8 = (tilecc.jit(ten) for _ in range(8))

    def grid(meta):
        return (tilecc.cdiv(meta["n"], meta["BLOCK"]),)

    tuned = tilecc.autotune(configs=[tilecc.Config({"BLOCK": 1024}, num_warps=4)],
                            key=["n"])(tilecc.jit(ten))
    return {
        "torch, kernel[(1,)](..., BLOCK=)": lambda: k1[(1,)](*ts, 1024, 3, 5, 0.5, BLOCK=1024),
        "torch, + num_warps=8": lambda: k2[(1,)](*ts, 1024, 3, 5, 0.5, BLOCK=1024,
                                                  num_warps=8),
        "torch, every argument by keyword": lambda: k3[(1,)](
            a=ts[0], b=ts[1], c=ts[2], d=ts[3], e=ts[4], f=ts[5], n=1024, m=3, k=5,
            alpha=0.5, BLOCK=1024),
        "torch, callable grid": lambda: k4[grid](*ts, 1024, 3, 5, 0.5, BLOCK=1024),
        "torch, kernel.run(..., grid=(1,))": lambda: k5.run(*ts, 1024, 3, 5, 0.5, grid=(1,),
                                                            warmup=False, BLOCK=1024),
        "torch, @autotune (one config), callable grid": lambda: tuned[grid](*ts, 1024, 3, 5,
                                                                             0.5),
        "CuPy, kernel[(1,)](..., BLOCK=)": lambda: k6[(1,)](*cs, 1024, 3, 5, 0.5, BLOCK=1024),
        "__cuda_array_interface__, kernel[(1,)]": lambda: k7[(1,)](*os_, 1024, 3, 5, 0.5,
                                                                   BLOCK=1024),
        "torch, a float beyond fp32 (saturated)": lambda: k8[(1,)](*ts, 1024, 3, 5, 1e300,
                                                                   BLOCK=1024),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20000, help="calls per repeat")
    parser.add_argument("--repeat", type=int, default=7, help="repeats; the best is kept")
    parser.add_argument("--match", default="", help="only the rows whose label contains this")
    args = parser.parse_args()
    install_stand_ins()
    rows = []
    for label, launch in cases().items():
        if args.match not in label:
            continue
        for _ in range(3):  # the first launch compiles (here: loads the stand-in)
            launch()
        best = min(timeit.repeat(launch, number=args.number, repeat=args.repeat))
        rows.append((label, best / args.number * 1e6))
    scale = min(timeit.repeat(types.SimpleNamespace, number=args.number, repeat=args.repeat))
    rows.append(("(a no-op Python call, for scale)", scale / args.number * 1e6))
    width = max(len(label) for label, _ in rows)
    print(f"{'warm launch, host side':<{width}}  µs/call")
    print(f"{'-' * width}  -------")
    for label, us in rows:
        print(f"{label:<{width}}  {us:7.2f}")


if __name__ == "__main__":
    main()
