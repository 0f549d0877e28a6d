"""What a GPU launch returns: the kernel's `CompiledKernel`, as Triton's launches do, named
by `@jit(repr=...)` where the kernel has one.  Kernels are compiled for real (NVRTC) and
loaded by a recording stand-in: no GPU needed."""

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.runtime import launch as L
from tilecc.runtime.compiled import CompiledKernel

try:
    from test_launch_path import _REAL_BUILD, BASE, FakeTensor, RecordingKernel, gpu  # noqa: F401
except ImportError:  # tests/ imported as a package
    from tests.test_launch_path import (_REAL_BUILD, BASE, FakeTensor,  # noqa: F401
                                        RecordingKernel, gpu)


@pytest.fixture
def compiling_gpu(gpu, monkeypatch):
    """The stand-in GPU, with kernels compiled for real (NVRTC, sm_90) and loaded by a
    recording stand-in: launches return what they compiled."""
    from conftest_compilers import require_cuda_compiler

    require_cuda_compiler()
    monkeypatch.setattr(L, "_build", _REAL_BUILD)
    monkeypatch.setattr(L, "_device_arch", lambda device_id, backend: "sm_90")

    def load(binary, name, threads, device_id, specs, cooperative=False):
        gpu.builds.append(specs)
        gpu.loads.append({"arch": binary.arch, "cooperative": cooperative})
        return RecordingKernel(specs, threads // 32, device_id, gpu.log)

    gpu.loads = []

    monkeypatch.setattr(L.cuda, "load", load)
    return gpu


def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


def test_every_launch_returns_its_compiled_kernel(compiling_gpu, monkeypatch):
    """`kernel[grid](...)` returns the compiled kernel, as Triton's does (programs read
    `h.asm["ptx"]`, `h.name`, `h.n_regs`): the same object on the first launch, the
    general path and the generated warm launch, one per loaded kernel."""
    k = tilecc.jit(scale)
    x, y = FakeTensor(BASE), FakeTensor(BASE + 4096)
    got = [k[(2,)](x, y, 100, BLOCK=64) for _ in range(3)]  # slow, general, generated
    got.append(k.run(x, y, 100, grid=lambda meta: (2,), warmup=False, BLOCK=64))
    got.append(k[(0,)](x, y, 100, BLOCK=64))  # an empty grid launches nothing
    h = got[0]
    assert isinstance(h, CompiledKernel) and all(g is h for g in got)
    assert h.name == "scale" and h.metadata.num_warps == 4 and h.metadata.arch == "sm_90"
    assert "scale" in h.asm["cu"] and set(h.asm) == {"cu", "ptx", "cubin"}
    assert h.asm["cubin"] == h.kernel and isinstance(h.n_regs, int) and h.n_regs > 0
    with pytest.raises(KeyError, match="ttgir"):
        h.asm["ttgir"]
    assert h.src.signature == {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32",
                               "BLOCK": "constexpr"}
    eight = k[(2,)](x, y, 100, BLOCK=64, num_warps=8)  # another build: its own
    assert eight is not h and eight.metadata.num_warps == 8
    assert len(compiling_gpu.builds) == 2 and len(compiling_gpu.log) == 5
    monkeypatch.setenv("TILECC_INTERPRET", "1")  # the interpreter returns None, as Triton's
    xs, ys = np.ones(100, np.float32), np.zeros(100, np.float32)
    assert k[(2,)](xs, ys, 100, BLOCK=64) is None and (ys == 2.0).all()


def test_repr_names_the_compiled_kernel(compiling_gpu):
    """`@jit(repr=f)`: the compiled kernel is named `f(proxy)`, the proxy giving each
    parameter's Triton type and the constants (constexprs, ints specialized to 1), as
    Triton names it; the binary's symbol stays the function's name."""
    seen = []

    def name_of(spec):
        seen.append(spec)
        ones = "_".join(k for k, v in spec.constants.items() if v == 1)
        return f"kernel_{spec.signature['value']}_{ones}"

    def kernel(value, is_one, X, B: tl.constexpr):
        pass

    k = tilecc.jit(kernel, repr=name_of)
    x = FakeTensor(BASE)
    for value, kind in [(-1, "i32"), (2**31, "i64"), (2**63, "u64")]:
        h = k[(1,)](value, 1, x, B=3)
        assert h.name == f"kernel_{kind}_is_one" and h.metadata.name == h.name
        assert k[(1,)](value, 1, x, B=3) is h  # named once
        assert ") kernel(\n" in h.asm["cu"]  # the symbol: the function's name
    assert seen[0].signature == {"value": "i32", "is_one": "constexpr", "X": "*fp32",
                                 "B": "constexpr"}
    assert seen[0].constants == {"is_one": 1, "B": 3} and len(seen) == 3
