"""Host-side cost of a warm launch, per call, per kind of argument.

With a GPU (torch with CUDA, and CuPy): per argument kind — torch tensors, CuPy arrays,
`__cuda_array_interface__` objects, DLPack objects, NumPy scalars, torch tensors and CuPy
arrays in turn on one kernel — tilecc's warm launch of a ten-argument kernel minus a CuPy
RawKernel launch of the same generated source (CuPy arrays and NumPy scalars, as RawKernel
takes them), in µs, timed in interleaved batches in one process; where Triton is
installed, also tilecc's launch minus Triton's of tutorial 09's persistent matmul with
three host-side TensorDescriptors (an argument kind RawKernel has no counterpart for).

Without one (or with --stand-ins): each row launches the same kernel the way user code
does — `kernel[grid](...)`, `kernel.run(..., grid=...)`, an `@autotune`d kernel — with
stand-in arrays (torch-, CuPy-, `__cuda_array_interface__`- and DLPack-like objects whose
attributes are Python here, C in the real frameworks) and a loaded kernel whose
cuLaunchKernel is a no-op.  Everything tilecc does per call runs: binding, the warm key,
the cache lookup, the grid, packing the argument block, the stream, the driver call.
The "per argument" rows then give the host work of one argument of each kind, in ns
(a launch of many of them, less one of as many Python ints, per argument).

    python benchmarks/bench_launch_host.py [--stand-ins] [--number N] [--repeat R]
        [--match S]

measures this tree's tilecc (with PYTHONPATH set: the tilecc found there, e.g. an older
version's tree).  The numbers are the best of R repeats (interleaved rounds on the GPU) of N calls, in µs
per call; compare runs of one machine only.  Only public entry points and
`tilecc.runtime.launch._build` (the loader, replaced by the stand-in) are used, so the
script measures any version of the launch path alike.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import struct
import sys
import timeit
import types

if "PYTHONPATH" not in os.environ:  # `python benchmarks/bench_launch_host.py`: this tree's
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tilecc  # noqa: E402
import tilecc.language as tl  # noqa: E402

BASE = 0x7F0000000000


def ten(a, b, c, d, e, f, n, m, k, alpha, BLOCK: tl.constexpr):
    pass


def three_descriptors(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr):
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


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_CAPSULE_NAME = b"dltensor"  # (kept alive: the capsule points at it)


class DLPackArray:
    """Any other device array: DLPack only.  Each `__dlpack__` exports a new capsule over
    one DLManagedTensor (float32, one dimension of `n`; no deleter): an exporter that
    costs about one C call, so that a launch's own reading of capsules shows."""

    def __init__(self, ptr, device=0, n=64):
        self.device_id = device
        self._shape = (ctypes.c_int64 * 1)(n)
        self._tensor = ctypes.create_string_buffer(struct.pack(
            "=QiiiBBHQQQQQ", ptr, 2, device, 1, 2, 32, 1, ctypes.addressof(self._shape), 0, 0,
            0, 0))  # data, device, ndim, dtype, shape, strides, byte offset, ctx, deleter

    def __dlpack__(self, stream=None):
        return _new_capsule(ctypes.addressof(self._tensor), _CAPSULE_NAME, None)

    def __dlpack_device__(self):
        return (2, self.device_id)


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

    import numpy as np

    ts, cs, os_ = arrays(Tensor), arrays(CuPyArray), arrays(CAIArray)
    ds = arrays(DLPackArray)
    k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11 = (tilecc.jit(ten) for _ in range(11))
    scalars = (np.int32(1024), np.int32(3), np.int32(5), np.float32(0.5))

    def in_turn():
        k11[(1,)](*ts, 1024, 3, 5, 0.5, BLOCK=1024)
        k11[(1,)](*cs, 1024, 3, 5, 0.5, BLOCK=1024)

    def grid(meta):
        return (tilecc.cdiv(meta["n"], meta["BLOCK"]),)

    tuned = tilecc.autotune(configs=[tilecc.Config({"BLOCK": 1024}, num_warps=4)],
                            key=["n"])(tilecc.jit(ten))
    k12 = tilecc.jit(three_descriptors)
    descs = [tilecc.TensorDescriptor(t, [1024, 1024], [1024, 1], [128, 64]) for t in ts[:3]]
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
        "DLPack, kernel[(1,)]": lambda: k9[(1,)](*ds, 1024, 3, 5, 0.5, BLOCK=1024),
        "CuPy + NumPy scalars, kernel[(1,)]": lambda: k10[(1,)](*cs, *scalars, BLOCK=1024),
        "torch and CuPy in turn, one kernel (per launch)": (in_turn, 2),
        "three host TensorDescriptors (torch), kernel[(1,)]": lambda: k12[(1,)](
            *descs, 1024, 1024, 1024, BLOCK_M=128, num_warps=8, num_stages=3),
    }


def host_rows(args) -> list[tuple[str, float]]:
    """The stand-ins' table: µs per call of each case."""
    install_stand_ins()
    rows = []
    for label, case in cases().items():
        if args.match not in label:
            continue
        launch, calls = case if isinstance(case, tuple) else (case, 1)
        try:
            for _ in range(3):  # the first launch compiles (here: loads the stand-in)
                launch()
        except Exception as e:  # a version of the launch path that cannot take this kind
            print(f"{label}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        best = min(timeit.repeat(launch, number=args.number, repeat=args.repeat))
        rows.append((label, best / args.number / calls * 1e6))
    scale = min(timeit.repeat(types.SimpleNamespace, number=args.number, repeat=args.repeat))
    rows.append(("(a no-op Python call, for scale)", scale / args.number * 1e6))
    return rows


PER_KIND = 24  # arguments of one kind per launch in `argument_rows`
exec(f"def many(x, {', '.join(f'a{i}' for i in range(PER_KIND))}):\n    pass")


def argument_rows(args) -> list[tuple[str, float]]:
    """Per argument kind, the host work of one argument in a warm launch, in ns: a launch
    of a torch tensor and PER_KIND arguments of that kind, less one of a tensor and
    PER_KIND Python ints, over PER_KIND (stand-ins; kinds timed in turn, each keeping its
    best batch)."""
    import numpy as np

    kinds = {
        "int": lambda i: 1000 + 16 * i,
        "torch tensor": lambda i: Tensor(BASE + 4096 * i),
        "CuPy array": lambda i: CuPyArray(BASE + 4096 * i),
        "__cuda_array_interface__ object": lambda i: CAIArray(BASE + 4096 * i),
        "DLPack object": lambda i: DLPackArray(BASE + 4096 * i),
        "np.int64": lambda i: np.int64(1000 + 16 * i),
        "np.float32": lambda i: np.float32(i + 0.5),
        "float": lambda i: i + 0.5,
    }
    launches = {}
    for label, make in kinds.items():
        values = [Tensor(BASE - 4096)] + [make(i) for i in range(PER_KIND)]
        k = tilecc.jit(many)

        def launch(k=k, v=values):
            k[(1,)](*v)
        try:
            for _ in range(3):
                launch()
        except Exception as e:  # a version of the launch path that cannot take this kind
            print(f"{label}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        launches[label] = launch
    number = max(args.number // 20, 1)
    best = dict.fromkeys(launches, float("inf"))
    for _ in range(3 * args.repeat):
        for label, launch in launches.items():
            best[label] = min(best[label], timeit.timeit(launch, number=number) / number)
    base = best.pop("int", None)
    if base is None:
        return []
    return [(f"per argument: {label} (ns, less an int's)", (t - base) / PER_KIND * 1e9)
            for label, t in best.items()]


def gpu_available() -> bool:
    try:
        import cupy  # noqa: F401
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


DLPACK_BASE = "RawKernel after each DLPack argument's __dlpack_device__(), __dlpack__(stream=)"


def gpu_rows(args) -> list[tuple[str, float]]:
    """Per argument kind: tilecc's warm launch minus the RawKernel's, µs per call."""
    import cupy
    import numpy as np
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from timing import host_us_interleaved

    def ten_gpu(a, b, c, d, e, f, n, m, k, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(a + offs, mask=mask) + tl.load(b + offs, mask=mask) + \
            tl.load(c + offs, mask=mask) + tl.load(d + offs, mask=mask)
        tl.store(e + offs, x * alpha + m, mask=mask)
        tl.store(f + offs, x - k, mask=mask)

    class CAI:  # another framework's array: the interface, as a property
        def __init__(self, c):
            self._cai = c.__cuda_array_interface__

        @property
        def __cuda_array_interface__(self):
            return self._cai

    class DLPack:  # another framework's array: DLPack, exported by torch at each call
        def __init__(self, t):
            self._t = t

        def __dlpack__(self, stream=None):
            return self._t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self._t.__dlpack_device__()

    n = 1024
    ts = [torch.randn(n, device="cuda") for _ in range(6)]
    cs = [cupy.asarray(t) for t in ts]
    kernels = {}

    def kernel(label):
        return kernels.setdefault(label, tilecc.jit(ten_gpu))

    src = kernel("src").source("*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,"
                               "i32:16,i32,i32,fp32,1024")
    from tilecc.transpiler.render import INCLUDE_DIR
    raw = cupy.RawKernel(src, "ten_gpu", options=(f"-I{INCLUDE_DIR}", "--std=c++17"))
    raw_args = (*cs, np.int32(n), np.int32(3), np.int32(5), np.float32(0.5))
    kinds = {
        "torch tensors": ts,
        "CuPy arrays": cs,
        "__cuda_array_interface__ objects": [CAI(c) for c in cs],
        "DLPack objects (torch's __dlpack__ each call)": [DLPack(t) for t in ts],
        # the same arrays through an exporter that costs about one C call (ctypes'
        # PyCapsule_New): the launch's own reading of capsules, not torch's export
        "DLPack objects (capsules made by ctypes)": [
            DLPackArray(c.data.ptr, c.device.id, n) for c in cs],
    }
    cases = {"RawKernel (CuPy arrays, NumPy scalars)": lambda: raw((1,), (128,), raw_args)}
    # A DLPack consumer must ask the producer at each call for the device (which names the
    # stream to give) and for a capsule (the pointer may change, and `stream=` orders the
    # producer's work before the launch): that part of the DLPack row is the producer's,
    # timed here beside the same RawKernel launch.
    xs = cupy.cuda.get_current_stream().ptr or 1  # (the stream tilecc tells the producer)

    def raw_after_exports(exported):
        def launch():
            for d in exported:
                d.__dlpack_device__()
                d.__dlpack__(stream=xs)
            raw((1,), (128,), raw_args)
        return launch
    for label in kinds:
        if label.startswith("DLPack"):
            cases[f"{DLPACK_BASE}: {label}"] = raw_after_exports(kinds[label])
    for label, arrays in kinds.items():
        k = kernel(label)
        cases[label] = lambda k=k, a=arrays: k[(1,)](*a, n, 3, 5, 0.5, BLOCK=1024)
    cases["NumPy scalars (with CuPy arrays)"] = \
        lambda k=kernel("np"): k[(1,)](*raw_args, BLOCK=1024)

    def in_turn(k=kernel("turn")):
        k[(1,)](*ts, n, 3, 5, 0.5, BLOCK=1024)
        k[(1,)](*cs, n, 3, 5, 0.5, BLOCK=1024)
    cases["torch and CuPy in turn, one kernel"] = in_turn
    cases = {label: fn for label, fn in cases.items()
             if args.match in label or label.startswith("RawKernel")}
    for label, fn in cases.items():  # compile, and check each kind computes the sum
        fn()
        torch.cuda.synchronize()
        ref = ts[0] + ts[1] + ts[2] + ts[3]
        torch.testing.assert_close(ts[4], ref * 0.5 + 3, msg=label)
        torch.testing.assert_close(ts[5], ref - 5, msg=label)
        ts[4].zero_()
    against_triton = descriptor_cases(args, torch)
    cases.update(against_triton)
    us = host_us_interleaved(cases, args.number, torch.cuda.synchronize, rounds=args.repeat)
    triton_us = {label: us.pop(label) for label in against_triton}
    base = us.pop("RawKernel (CuPy arrays, NumPy scalars)")
    base_dlpack = {label: us.pop(f"{DLPACK_BASE}: {label}", None) for label in kinds}
    rows = [("RawKernel (CuPy arrays, NumPy scalars), µs per launch", base)]
    for label, t in us.items():
        per_launch = t / 2 if label.startswith("torch and CuPy in turn") else t
        rows.append((f"tilecc - RawKernel: {label}", per_launch - base))
        if base_dlpack.get(label) is not None:
            rows.append((f"tilecc - (RawKernel + the producer's exports): {label}",
                         per_launch - base_dlpack[label]))
    if triton_us:
        tc, tr = triton_us.values()
        rows.append(("tilecc - Triton: three host TensorDescriptors (tutorial 09's kernel)",
                     tc - tr))
    return rows


DESCRIPTORS = "three host TensorDescriptors (tutorial 09's persistent matmul)"


def descriptor_cases(args, torch) -> dict:
    """tilecc's and Triton's launch of examples/persistent_matmul.py's kernel with three
    host-side TensorDescriptors (each tool its own class), where Triton is installed: a
    kind of argument RawKernel has no counterpart for."""
    if args.match not in DESCRIPTORS:
        return {}
    try:
        import runpy

        import triton  # noqa: F401
        from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor
        from triton_clone import as_triton
    except ImportError:
        return {}
    here = os.path.dirname(os.path.abspath(__file__))
    kernel = runpy.run_path(os.path.join(here, "..", "examples", "persistent_matmul.py"),
                            run_name="bench")["persistent_matmul_kernel"]
    a, b, c = (torch.zeros(256, 256, device="cuda", dtype=torch.float16) for _ in range(3))
    out = {}
    for tool, k, cls in (("tilecc", kernel, tilecc.TensorDescriptor),
                         ("Triton", as_triton(kernel), TritonDescriptor)):
        descs = (cls.from_tensor(a, [128, 64]), cls.from_tensor(b, [64, 128]),
                 cls.from_tensor(c, [128, 128]))
        out[f"{tool}: {DESCRIPTORS}"] = lambda k=k, d=descs: k[(1,)](
            *d, 256, 256, 256, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64,
            GROUP_SIZE_M=8, NUM_SMS=1, num_warps=4, num_stages=3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stand-ins", action="store_true",
                        help="stand-in arrays and a no-op driver call, even with a GPU")
    parser.add_argument("--number", type=int, default=None,
                        help="calls per batch (default 20000 stand-ins, 5000 GPU)")
    parser.add_argument("--repeat", type=int, default=7, help="batches; the best is kept")
    parser.add_argument("--match", default="", help="only the rows whose label contains this")
    args = parser.parse_args()
    on_gpu = not args.stand_ins and gpu_available()
    if args.number is None:
        args.number = 5000 if on_gpu else 20000
    rows = gpu_rows(args) if on_gpu else host_rows(args) + argument_rows(args)
    title = "warm launch on the GPU, host side" if on_gpu else "warm launch, host side " \
        "(stand-ins)"
    width = max(len(label) for label, _ in rows + [(title, 0)])
    print(f"{title:<{width}}  µs/call")
    print(f"{'-' * width}  -------")
    for label, us in rows:
        print(f"{label:<{width}}  {us:+7.2f}" if label.startswith("tilecc -") else
              f"{label:<{width}}  {us:7.0f}" if label.startswith("per argument") else
              f"{label:<{width}}  {us:7.2f}")


if __name__ == "__main__":
    main()
