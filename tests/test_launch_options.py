"""Triton's launch and compile options: maxnreg, enable_fp_fusion, enable_reflect_ftz
(accepted: libdevice keeps subnormals either way), num_ctas (1 only), and
a clear refusal of the ones tilecc does not take; their checks, the native compilers'
flags, the cache key, the warm launch's key, the autotuner's Config."""

from __future__ import annotations

import glob
import os
import re
import sys
import types

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.language.extra import libdevice
from tilecc.errors import CompilationError
from tilecc.runtime import launch as L
from tilecc.runtime.options import CompileOptions, compile_key_options

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_launch_path import _REAL_BUILD, FakeTensor, RecordingKernel, gpu  # noqa: F401
    from test_launch_returns import compiling_gpu  # noqa: F401 (a fixture)
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_launch_path import (_REAL_BUILD, FakeTensor, RecordingKernel,  # noqa: F401
                                        gpu)
    from tests.test_launch_returns import compiling_gpu  # noqa: F401


@tilecc.jit
def axpy(x, y, out, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) * a + tl.load(y + offs, mask=m), mask=m)


SIG = "*fp32:16,*fp32:16,*fp32:16,fp32,i32,1024"


def _args(n=8):
    x = np.arange(n, dtype=np.float32)
    return x, np.ones(n, np.float32), np.zeros(n, np.float32), 2.0, n


@pytest.mark.parametrize("options,message", [
    ({"num_ctas": 2}, "num_ctas=2 is not supported by tilecc"),
    ({"maxnreg": 0}, "maxnreg must be a positive integer"),
    ({"maxnreg": "64"}, "maxnreg must be a positive integer"),
    ({"enable_fp_fusion": 0}, "enable_fp_fusion must be True or False"),
    ({"enable_reflect_ftz": "no"}, "enable_reflect_ftz must be True or False"),
])
def test_bad_option_values_are_refused(options, message) -> None:
    with pytest.raises(ValueError, match=message):
        axpy.interpret[(1,)](*_args(), BLOCK=8, **options)
    with pytest.raises(ValueError, match=message):
        axpy.options(**options)


@pytest.mark.parametrize("num_warps", [3, 0, 64, 2.0])
def test_bad_num_warps_is_both_error_kinds(gpu, monkeypatch, num_warps) -> None:
    """num_warps not a power of 2 (or out of range): a ValueError, and an AssertionError
    with Triton's words, which Triton's launch raises (its options are asserted)."""
    monkeypatch.setattr(L, "_build", _REAL_BUILD)  # the check, before anything compiles
    monkeypatch.setattr(L, "_device_arch", lambda device_id, backend: "sm_90")
    x = FakeTensor(0x7f0000000000)
    k = tilecc.jit(axpy.fn)  # (kernels keep their launchers: one of this test's own)
    with pytest.raises(AssertionError, match="must be a power of 2"):
        k[(1,)](x, x, x, 2.0, 8, BLOCK=8, num_warps=num_warps)
    with pytest.raises(ValueError, match="num_warps must be a power of 2"):
        axpy.options(num_warps=num_warps)
    assert gpu.log == []


@pytest.mark.parametrize("name", ["launch_pdl", "cluster_dims", "sanitize_overflow"])
def test_triton_options_tilecc_does_not_take_are_named(name) -> None:
    with pytest.raises(TypeError, match=f"the Triton option `{name}` is not supported by tilecc"):
        axpy.interpret[(1,)](*_args(), BLOCK=8, **{name: 1})


def test_extern_libs_naming_the_standard_device_libraries_is_accepted() -> None:
    # Triton links the named bitcode; tilecc's source reaches libdevice's functions through
    # the target's math library, so the standard names are accepted and their paths unread
    x, y, out, a, n = _args()
    axpy.interpret[(1,)](x, y, out, a, n, BLOCK=8,
                         extern_libs={"libdevice": "/nowhere/libdevice.10.bc"})
    np.testing.assert_array_equal(out, x * a + y)
    out[:] = 0
    axpy.interpret[(1,)](x, y, out, a, n, BLOCK=8,
                         extern_libs={"ocml": "/nowhere/ocml.bc", "ockl": "/nowhere/ockl.bc"})
    np.testing.assert_array_equal(out, x * a + y)
    with pytest.raises(TypeError, match="extern_libs names 'mylib'.*links no external bitcode"):
        axpy.interpret[(1,)](x, y, out, a, n, BLOCK=8, extern_libs={"mylib": "/x/mylib.bc"})


def test_accepted_options_leave_the_result_unchanged_on_the_interpreter() -> None:
    x, y, out, a, n = _args()
    axpy.interpret[(1,)](x, y, out, a, n, BLOCK=8, num_ctas=1, maxnreg=64,
                         enable_fp_fusion=False)
    np.testing.assert_array_equal(out, x * a + y)


@tilecc.jit
def libdevice_exp(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, libdevice.exp(tl.load(x_ptr + offs)))


@pytest.mark.parametrize("ftz", [False, True])
def test_enable_reflect_ftz_is_taken_and_libdevice_keeps_subnormals(ftz) -> None:
    """Libraries launch with enable_reflect_ftz=False so that libdevice keeps subnormals,
    as torch does: tilecc's libdevice always does (the option changes no code)."""
    x, out = np.full(8, -100.0, np.float32), np.zeros(8, np.float32)
    libdevice_exp.interpret[(1,)](x, out, BLOCK=8, enable_reflect_ftz=ftz)
    assert out[0] == np.exp(np.float32(-100.0)) and 0 < out[0] < np.finfo(np.float32).tiny
    source = libdevice_exp.source("*fp32:16,*fp32:16,8")
    assert libdevice_exp.options(enable_reflect_ftz=ftz) == libdevice_exp.options()
    assert "ftz" not in source.split('#include "tilecc.h"')[1]


@pytest.mark.gpu
def test_libdevice_keeps_subnormals_on_gpu() -> None:
    torch = pytest.importorskip("torch")
    x = torch.full((8,), -100.0, device="cuda")
    out = torch.zeros(8, device="cuda")
    libdevice_exp[(1,)](x, out, BLOCK=8, enable_reflect_ftz=False)
    assert 0 < out[0].item() < torch.finfo(torch.float32).tiny  # exp(-100): subnormal


def test_native_flags_and_cache_key() -> None:
    assert CompileOptions().native_flags("cuda") == []
    assert CompileOptions(maxnreg=64, enable_fp_fusion=False).native_flags("cuda") == \
        ["--maxrregcount=64", "--fmad=false"]
    assert CompileOptions(enable_fp_fusion=False).native_flags("hip") == ["-ffp-contract=off"]
    with pytest.raises(ValueError, match="maxnreg is not supported by tilecc on HIP"):
        CompileOptions(maxnreg=64).native_flags("hip")
    # the default key is what it was (caches stay warm); the flags make other keys
    base = compile_key_options(4, 3, False, "cuda")
    assert base["options"] == ["-lineinfo"]
    assert compile_key_options(4, 3, False, "cuda", ["--fmad=false"]) != base


def _ptx(tmp_path, monkeypatch, **options) -> str:
    monkeypatch.setenv("TILECC_CACHE", "0")
    monkeypatch.setenv("TILECC_DUMP_DIR", str(tmp_path))
    axpy.compile(SIG, **options)
    (ptx,) = glob.glob(os.path.join(tmp_path, "*", "*.ptx"))
    return open(ptx).read()


def test_fp_fusion_off_keeps_multiply_and_add_apart(tmp_path, monkeypatch) -> None:
    require_cuda_compiler()
    assert "fma.rn.f32" in _ptx(tmp_path / "on", monkeypatch)
    off = _ptx(tmp_path / "off", monkeypatch, enable_fp_fusion=False)
    assert "fma.rn.f32" not in off and "mul.rn.f32" in off


@pytest.mark.parametrize("value,fused", [("0", False), ("off", False), ("", False),
                                         ("nonsense", False), ("1", True), ("Yes", True),
                                         ("y", True), ("ON", True)])
def test_default_fp_fusion_is_read_from_the_environment(monkeypatch, value, fused) -> None:
    """TILECC_DEFAULT_FP_FUSION is the default of enable_fp_fusion, read at each compile as
    Triton reads its own switches (any set value other than its true words is false); a
    compile that names the option is not affected, nor is Triton's spelling outside the
    compatibility mode."""
    from tilecc.runtime import options

    # as outside the compatibility mode (which another test may have installed in-process)
    monkeypatch.setitem(options.ENVIRONMENT_DEFAULTS, "enable_fp_fusion",
                        ["TILECC_DEFAULT_FP_FUSION"])
    monkeypatch.delenv("TILECC_DEFAULT_FP_FUSION", raising=False)
    contracted = axpy.source(SIG)
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")  # only the compatibility mode's
    assert axpy.options().enable_fp_fusion is True and axpy.source(SIG) == contracted
    monkeypatch.setenv("TILECC_DEFAULT_FP_FUSION", value)
    assert axpy.options().enable_fp_fusion is fused
    assert ("__fmul_rn" not in axpy.source(SIG)) is fused
    assert axpy.options(enable_fp_fusion=not fused).enable_fp_fusion is (not fused)
    assert axpy.source(SIG, enable_fp_fusion=True) == contracted


@tilecc.jit
def _register_hungry(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    acc = v
    for i in tl.static_range(12):
        acc = acc * tl.exp(v + i) + tl.sin(acc)
    tl.store(out + offs, acc + v)


def test_maxnreg_limits_the_registers_ptxas_uses() -> None:
    require_cuda_compiler()
    sig = "*fp32:16,*fp32:16,1024"

    def used(binary) -> int:
        return int(re.search(r"Used (\d+) registers", binary.log).group(1))
    free = used(_register_hungry.compile(sig, num_warps=4))
    limited = used(_register_hungry.compile(sig, num_warps=4, maxnreg=32))
    assert free > 32 >= limited


def test_hip_compiles_without_fp_fusion_and_refuses_maxnreg() -> None:
    require_hip_compiler()
    assert axpy.compile(SIG, target="hip", enable_fp_fusion=False).data
    with pytest.raises(CompilationError, match="maxnreg is not supported by tilecc on HIP"):
        axpy.compile(SIG, target="hip", maxnreg=64)


def test_config_takes_maxnreg_and_only_one_cta() -> None:
    c = tilecc.Config({"BLOCK": 64}, num_warps=4, maxnreg=128)
    assert c.all_kwargs()["maxnreg"] == 128 and "maxnreg: 128" in repr(c)
    assert "maxnreg" not in tilecc.Config({"BLOCK": 64}).all_kwargs()
    with pytest.raises(ValueError, match="num_ctas=2 is not supported"):
        tilecc.Config({"BLOCK": 64}, num_ctas=2)


@pytest.mark.parametrize("asked,passed", [(256, 255), (1000, 255), (8, 24), (1, 24), (96, 96)])
def test_maxnreg_takes_what_triton_takes_and_passes_the_nearest_legal_value(asked,
                                                                             passed) -> None:
    # libraries' configs ask for maxnreg=256 (Triton passes it on to ptxas, which keeps
    # 255); NVRTC's --maxrregcount stops at 255, and ptxas raises a limit below 24
    c = tilecc.Config({"BLOCK": 64}, num_warps=8, maxnreg=asked)
    assert c.all_kwargs()["maxnreg"] == asked
    assert f"__maxnreg__({passed}) axpy(" in axpy.source(SIG, maxnreg=asked)
    assert CompileOptions(maxnreg=asked).native_flags("cuda") == [f"--maxrregcount={passed}"]


@tilecc.jit
def k_loop(a, b, c, K, BM: tl.constexpr, BK: tl.constexpr):
    rm, rk = tl.arange(0, BM), tl.arange(0, BK)
    acc = tl.zeros((BM, BM), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * BM + rm[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * BM + rm[None, :], acc)


def test_num_stages_takes_any_depth_triton_takes() -> None:
    """Libraries' configs pass num_stages=0 (Triton: no pipelining, as 1) and depths past
    8; a depth whose stages outgrow the program's shared memory is refused when compiled,
    as Triton refuses it (OutOfResources); only a negative depth or a non-integer is not an
    option."""
    sig = "*fp16:16,*fp16:16,*fp32:16,i32:16,{},64"
    small, large = sig.format(64), sig.format(128)
    unpiped = k_loop.source(small, arch="sm_90", num_stages=1)
    assert k_loop.source(small, arch="sm_90", num_stages=0) == unpiped.replace(
        "num_stages=1", "num_stages=0")
    assert "pipeline" not in unpiped.split("#include")[1]
    deep = k_loop.source(small, arch="sm_90", num_stages=10)
    assert "10 stages" in deep
    with pytest.raises(tilecc.OutOfResources, match="shared memory"):
        k_loop.source(large, arch="sm_90", num_stages=10)
    for bad in (-1, 2.0, True):
        with pytest.raises(ValueError, match="num_stages must be a non-negative integer"):
            k_loop.options(num_stages=bad)
    require_cuda_compiler()
    for stages in (0, 10):
        assert k_loop.compile(small, arch="sm_90", num_stages=stages).data


@tilecc.jit
def two_k_loops(a, b, c, K, BM: tl.constexpr, BK: tl.constexpr, FIRST: tl.constexpr,
                SECOND: tl.constexpr):
    """Two K loops, each with a pipeline depth of its own (tl.range's num_stages)."""
    rm, rk = tl.arange(0, BM), tl.arange(0, BK)
    acc = tl.zeros((BM, BM), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=FIRST):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * BM + rm[None, :])
        acc = tl.dot(x, y, acc)
    for k in tl.range(0, K, BK, num_stages=SECOND):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * BM + rm[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * BM + rm[None, :], acc)


def _pipelines(source: str) -> list[str]:
    return re.findall(r"pipeline \(.*?\((\d+) stages", " ".join(
        line.strip("/ ") for line in source.split("#include")[1].splitlines()))


def test_a_loops_own_num_stages_wins_over_the_launchs() -> None:
    """tl.range(..., num_stages=n) sets that loop's depth, as in Triton: 1 (or 0) leaves it
    unpipelined whatever the launch asks (a kernel fits its shared memory that way), a
    deeper one pipelines it where the launch's num_stages would not."""
    sig = "*fp16:16,*fp16:16,*fp32:16,i32:16,128,64,{},{}"
    assert _pipelines(two_k_loops.source(sig.format(1, 4), arch="sm_90", num_stages=3)) == \
        ["4"]
    assert _pipelines(two_k_loops.source(sig.format(3, 0), arch="sm_90", num_stages=1)) == \
        ["3"]
    assert _pipelines(two_k_loops.source(sig.format(2, 3), arch="sm_90", num_stages=4)) == \
        ["2", "3"]
    # each loop's stages take 32 KiB apiece: 5 and 3 do not fit in 227 KiB, 5 and 1 do
    with pytest.raises(tilecc.OutOfResources):
        two_k_loops.source(sig.format(5, 3), arch="sm_90")
    assert _pipelines(two_k_loops.source(sig.format(5, 1), arch="sm_90", num_stages=6)) == \
        ["5"]
    with pytest.raises(CompilationError, match="num_stages must be a non-negative constexpr"):
        two_k_loops.source(sig.format(-1, 3), arch="sm_90")
    rng = np.random.default_rng(2)
    a = rng.integers(-2, 3, (128, 128)).astype(np.float16)
    b = rng.integers(-2, 3, (128, 128)).astype(np.float16)
    c = np.zeros((128, 128), np.float32)
    two_k_loops.interpret[(1,)](a, b, c, 128, BM=128, BK=64, FIRST=1, SECOND=4)
    np.testing.assert_array_equal(c, 2 * (a.astype(np.float32) @ b.astype(np.float32)))
    require_cuda_compiler()
    assert two_k_loops.compile(sig.format(1, 4), arch="sm_90").data


def test_maxnreg_out_of_ptxas_range_compiles_without_warnings() -> None:
    require_cuda_compiler()
    for asked in (256, 8):
        log = axpy.compile(SIG, arch="sm_90", maxnreg=asked).log or ""
        assert "warning" not in log.lower(), log


@pytest.mark.gpu
def test_a_config_with_maxnreg_256_runs_as_tritons_does() -> None:
    torch = pytest.importorskip("torch")
    x = torch.linspace(-3, 3, 5000, device="cuda")
    y = torch.linspace(1, 2, 5000, device="cuda")

    def tuned(jit):
        return tilecc.autotune([tilecc.Config({"BLOCK": 1024}, num_warps=4, maxnreg=256)],
                               key=["n"])(jit)
    out = torch.zeros_like(x)
    tuned(axpy)[lambda meta: (tilecc.cdiv(5000, meta["BLOCK"]),)](x, y, out, 1.5, 5000)
    torch.testing.assert_close(out, x * 1.5 + y)
    try:
        import triton
    except ImportError:
        return
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from triton_clone import as_triton

    theirs = torch.zeros_like(x)
    kernel = triton.autotune([triton.Config({"BLOCK": 1024}, num_warps=4, maxnreg=256)],
                             key=["n"])(as_triton(axpy))
    kernel[lambda meta: (triton.cdiv(5000, meta["BLOCK"]),)](x, y, theirs, 1.5, 5000)
    torch.testing.assert_close(out, theirs)


def test_new_options_build_once_and_the_warm_launch_finds_them(gpu, monkeypatch) -> None:
    """maxnreg / enable_fp_fusion reach the build, enter the warm key, and the generated
    warm launch finds the launcher the general path filed for them."""
    built = []

    def build(jit_fn, specs, num_warps, debug, backend, device_id, num_stages=None, **more):
        built.append(more)
        return RecordingKernel(specs, num_warps, device_id, gpu.log)

    monkeypatch.setattr(L, "_build", build)

    def copy(src, dst, n, flag, BLOCK: tl.constexpr):
        pass
    k = tilecc.jit(copy)
    x = FakeTensor(0x7f0000000000)
    k[(1,)](x, x, 64, 1.5, BLOCK=64)
    k[(1,)](x, x, 64, 1.5, BLOCK=64)  # the generated warm launch exists from here
    direct = k._direct
    for opts in [{"maxnreg": 64}, {"enable_fp_fusion": False}, {"num_ctas": 1},
                 {"maxnreg": 32, "num_warps": 2}]:
        assert direct((1,), None, L.declined, x, x, 64, 1.5, BLOCK=64, **opts) is False
        k[(1,)](x, x, 64, 1.5, BLOCK=64, **opts)
        assert direct((1,), None, L.declined, x, x, 64, 1.5, BLOCK=64, **opts) is not False
    assert built == [{}, {"maxnreg": 64}, {"enable_fp_fusion": False}, {"num_ctas": 1},
                     {"maxnreg": 32}]


def test_arch_at_a_launch_compiles_for_it_where_its_binary_loads(compiling_gpu,
                                                                 monkeypatch) -> None:
    """`arch=` (Triton's spelling sm86, or sm_86) compiles for that architecture where a
    binary for it loads on the device (same major version, no newer minor); another is a
    ValueError that says which would."""
    monkeypatch.setattr(L, "_device_arch", lambda device_id, backend: "sm_89")
    x = FakeTensor(0x7f0000000000)
    k = tilecc.jit(axpy.fn)  # (kernels keep their launchers: one of this test's own)
    assert k[(1,)](x, x, x, 2.0, 8, BLOCK=64).metadata.arch == "sm_89"  # the device's
    for arch, built in [("sm86", "sm_86"), ("sm_80", "sm_80"), ("sm89", "sm_89")]:
        for _ in range(2):  # the second launch: warm, the same build
            assert k[(1,)](x, x, x, 2.0, 8, BLOCK=64, arch=arch).metadata.arch == built
    assert [load["arch"] for load in compiling_gpu.loads] == \
        ["sm_89", "sm_86", "sm_80", "sm_89"]
    for arch, message in [("sm90", "does not load on this device .sm_89."),
                          ("sm_75", "does not load"), ("gfx90a", "not a cuda architecture"),
                          ("sm_8", "not a cuda architecture")]:
        with pytest.raises(ValueError, match=message):
            k[(1,)](x, x, x, 2.0, 8, BLOCK=64, arch=arch)


def test_warmup_takes_arch_as_a_launch_does() -> None:
    require_cuda_compiler()
    x = np.zeros(64, np.float32)
    for arch, built in [("sm80", "sm_80"), ("sm_86", "sm_86")]:
        h = axpy.warmup(x, x, x, 2.0, 64, BLOCK=64, grid=(1,), arch=arch)
        assert h.metadata.arch == built
    with pytest.raises(ValueError, match="gfx90a is a hip architecture"):
        axpy.warmup(x, x, x, 2.0, 64, BLOCK=64, grid=(1,), arch="gfx90a")


def test_cooperative_launch(compiling_gpu, monkeypatch) -> None:
    """launch_cooperative_grid=True loads the kernel for cuLaunchCooperativeKernel (a
    build of its own, found warm again); HIP refuses it before compiling."""
    monkeypatch.setattr(L, "_device_arch", lambda device_id, backend: "sm_90")
    x = FakeTensor(0x7f0000000000)
    k = tilecc.jit(axpy.fn)  # (kernels keep their launchers: one of this test's own)
    for _ in range(3):
        k[(2,)](x, x, x, 2.0, 8, BLOCK=64, launch_cooperative_grid=True)
    k[(2,)](x, x, x, 2.0, 8, BLOCK=64, launch_cooperative_grid=False)
    assert [load["cooperative"] for load in compiling_gpu.loads] == [True, False]
    assert len(compiling_gpu.log) == 4
    with pytest.raises(ValueError, match="launch_cooperative_grid must be True or False"):
        k[(2,)](x, x, x, 2.0, 8, BLOCK=64, launch_cooperative_grid="yes")
    monkeypatch.setattr(sys.modules["torch"].version, "hip", "6.0", raising=False)
    on_rocm = tilecc.jit(axpy.fn)  # (a process has ROCm's torch or CUDA's: a new kernel)
    with pytest.raises(TypeError, match="launch_cooperative_grid=True is not supported by "
                                        "tilecc on HIP"):
        on_rocm[(2,)](x, x, x, 2.0, 8, BLOCK=64, launch_cooperative_grid=True)
    assert len(compiling_gpu.loads) == 2


def test_a_cooperative_kernel_launches_through_the_cooperative_call(monkeypatch) -> None:
    driver = types.SimpleNamespace(
        ctxGetDevice=lambda: 0, launcher=lambda: "cuLaunchKernel",
        launchCooperativeKernel="cuLaunchCooperativeKernel",
        moduleLoadData=lambda data: 11, moduleGetFunction=lambda module, name: 22)
    monkeypatch.setattr(L.cuda, "_driver", lambda: driver)
    binary = types.SimpleNamespace(data=b"cubin", shared_bytes=0)
    assert L.CudaKernel(binary, "k", 128, 0).launch_kernel == "cuLaunchKernel"
    assert L.CudaKernel(binary, "k", 128, 0, cooperative=True).launch_kernel == \
        "cuLaunchCooperativeKernel"


@pytest.mark.parametrize("hints", [{"waves_per_eu": 2}, {"matrix_instr_nonkdim": 16},
                                   {"kpack": 2, "waves_per_eu": 1}])
def test_amd_hints_are_taken_on_hip_and_refused_on_cuda(gpu, monkeypatch, hints) -> None:
    """Triton's AMD tuning hints: a HIP launch takes them (and builds nothing else for
    them); a CUDA launch refuses them, warm or not, as Triton's CUDA backend does."""
    built = []

    def build(jit_fn, specs, num_warps, debug, backend, device_id, num_stages=None, **more):
        built.append((backend, more))
        return RecordingKernel(specs, num_warps, device_id, gpu.log)

    monkeypatch.setattr(L, "_build", build)
    x = FakeTensor(0x7f0000000000)
    k = tilecc.jit(axpy.fn)  # (kernels keep their launchers: one of this test's own)
    k[(1,)](x, x, x, 2.0, 8, BLOCK=64)
    for _ in range(2):  # before and after the warm launch is generated
        with pytest.raises(TypeError, match="AMD .HIP. tuning hints, not taken by a cuda"):
            k[(1,)](x, x, x, 2.0, 8, BLOCK=64, **hints)
        k[(1,)](x, x, x, 2.0, 8, BLOCK=64)
    monkeypatch.setattr(sys.modules["torch"].version, "hip", "6.0", raising=False)
    on_rocm = tilecc.jit(axpy.fn)  # (a process has ROCm's torch or CUDA's: a new kernel)
    for _ in range(3):
        on_rocm[(1,)](x, x, x, 2.0, 8, BLOCK=64, **hints)
    assert [b for b, _ in built] == ["cuda", "hip"] and len(gpu.log) == 6
    with pytest.raises(ValueError, match="must be a non-negative integer"):
        on_rocm[(1,)](x, x, x, 2.0, 8, BLOCK=64, **{next(iter(hints)): -1})
    out = _args()  # the interpreter takes them too
    axpy.interpret[(1,)](*out, BLOCK=8, **hints)
    np.testing.assert_allclose(out[2], out[0] * 2.0 + 1.0)


@pytest.mark.gpu
def test_options_on_gpu() -> None:
    torch = pytest.importorskip("torch")
    x = torch.linspace(-3, 3, 5000, device="cuda")
    y = torch.linspace(1, 2, 5000, device="cuda")
    for opts in [{}, {"maxnreg": 32}, {"enable_fp_fusion": False}, {"num_ctas": 1},
                 {"extern_libs": {"libdevice": "/nowhere/libdevice.10.bc"}}]:
        out = torch.zeros_like(x)
        axpy[(5,)](x, y, out, 1.5, 5000, BLOCK=1024, **opts)
        torch.testing.assert_close(out, x * 1.5 + y)


def test_maxnreg_in_the_source_replaces_launch_bounds() -> None:
    def declaration(src: str) -> str:
        return next(line for line in src.splitlines() if line.startswith('extern "C"'))
    assert declaration(axpy.source(SIG, maxnreg=40)) == \
        'extern "C" __global__ void __maxnreg__(40) axpy('
    assert "__launch_bounds__(128" in declaration(axpy.source(SIG))
    assert "__maxnreg__" not in axpy.source(SIG, target="hip", maxnreg=40)


def test_command_line_takes_the_options(capsys, tmp_path) -> None:
    from tilecc.cli import main

    example = os.path.join(os.path.dirname(__file__), "..", "examples", "vector_add.py")
    sig = "*fp32:16,*fp32:16,*fp32:16,i32,1024"
    assert main(["emit", f"{example}:add_kernel", "-s", sig, "--maxnreg", "64"]) == 0
    assert "__maxnreg__(64) add_kernel(" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["emit", f"{example}:add_kernel", "-s", sig, "--maxnreg", "0"])
    assert "maxnreg must be a positive integer" in capsys.readouterr().err
    require_cuda_compiler()
    out = str(tmp_path / "k.cubin")
    assert main(["compile", f"{example}:add_kernel", "-s", sig, "--no-fp-fusion", "-o", out]) == 0
