"""`tl.extra.cuda` and `tl.extra.hip` beyond libdevice, as Triton 3.6 has them: the launch's
size as constexprs (`num_threads()`, `num_warps()`), the hardware's counters
(`globaltimer()`, `smid()`, `memrealtime()`), grid dependency control (`gdc_wait()`,
`gdc_launch_dependents()`: no-ops, tilecc makes no dependent launches) and the fp8e4b15
conversions (refused, as the type is)."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.language.extra import cuda as cuda_extra
from tilecc.language.extra.cuda.utils import smid

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def launch_size_kernel(out_ptr, elapsed_ptr, THREADS: tl.constexpr):
    tl.extra.cuda.gdc_wait()
    start = tl.extra.cuda.globaltimer()
    tl.static_assert(tl.extra.cuda.num_threads() == THREADS)
    lanes = tl.arange(0, cuda_extra.num_threads())  # a constexpr: a block's size
    tl.store(out_ptr, tl.sum(lanes))
    tl.store(out_ptr + 1, tl.extra.cuda.num_warps())
    tl.store(out_ptr + 2, smid())  # imported from Triton's module path
    tl.extra.cuda.gdc_launch_dependents()
    tl.store(elapsed_ptr, tl.extra.cuda.globaltimer() - start)


def test_launch_size_and_counters_on_the_interpreter() -> None:
    out, elapsed = np.full(3, -1, np.int32), np.full(1, -1, np.int64)
    launch_size_kernel.interpret[(1,)](out, elapsed, THREADS=256, num_warps=8)
    assert list(out) == [sum(range(256)), 8, 0]  # every program runs on "SM" 0
    assert elapsed[0] >= 0  # the host's clock, in nanoseconds


def test_cuda_source_reads_the_counters_where_the_kernel_does() -> None:
    src = launch_size_kernel.source("*i32:16,*i64:16,128")
    assert src.count("tc::globaltimer()") == 2 and src.count("tc::smid()") == 1
    assert "griddepcontrol" not in src


def test_counters_compile_on_nvrtc() -> None:
    require_cuda_compiler()
    assert_clean_compile(launch_size_kernel, "*i32:16,*i64:16,128", "cuda", "sm_80")


@tilecc.jit
def amd_counters_kernel(out_ptr, time_ptr, THREADS: tl.constexpr):
    tl.static_assert(tl.extra.cuda.num_threads() == THREADS)
    tl.store(out_ptr, tl.extra.cuda.smid())
    tl.store(time_ptr, tl.extra.hip.memrealtime())


def test_hip_threads_are_64_wide_warps_and_counters_compile_on_hiprtc() -> None:
    src = amd_counters_kernel.source("*i32:16,*i64:16,256", target="hip")  # 4 x 64 threads
    assert "tc::memrealtime()" in src and "tc::smid()" in src
    require_hip_compiler()
    assert_clean_compile(amd_counters_kernel, "*i32:16,*i64:16,256", "hip", "gfx90a")


@pytest.mark.parametrize("kernel, target, words", [
    (launch_size_kernel, "hip", "tl.extra.cuda.globaltimer() reads a counter of NVIDIA GPUs, "
                                "which HIP code cannot; on AMD GPUs use "
                                "tl.extra.hip.memrealtime()"),
    (amd_counters_kernel, "cuda", "tl.extra.hip.memrealtime() reads a counter of AMD GPUs, "
                                  "which CUDA code cannot; on NVIDIA GPUs use "
                                  "tl.extra.cuda.globaltimer()"),
])
def test_a_counter_of_the_other_vendor_names_its_own(kernel, target, words) -> None:
    threads = 4 * (64 if target == "hip" else 32)
    with pytest.raises(tilecc.CompilationError) as e:
        kernel.source(f"*i32:16,*i64:16,{threads}", target=target)
    assert words in str(e.value) and f"{__file__}:" in str(e.value)


def test_the_interpreter_reads_either_vendor_s_counter() -> None:
    out, t = np.zeros(1, np.int32), np.zeros(1, np.int64)
    amd_counters_kernel.interpret[(1,)](out, t, THREADS=128)  # the interpreter: 32-wide warps
    assert t[0] > 0


@tilecc.jit
def vendor_misuse_kernel(x_ptr, CASE: tl.constexpr):
    x = tl.load(x_ptr)
    if CASE == "fp8e4b15":
        x = tl.extra.cuda.convert_custom_float8_sm80(x, tl.float8e4b15)
    elif CASE == "misspelt":
        x += tl.extra.cuda.smids()
    elif CASE == "arguments":
        x += tl.extra.cuda.num_warps(4)
    tl.store(x_ptr, x)


@pytest.mark.parametrize("case, kind, words", [
    ("fp8e4b15", "TypeError", "tl.extra.cuda.convert_custom_float8_sm80() converts to and from "
                              "tl.float8e4b15: tl.float8e4b15 is not supported by tilecc"),
    ("misspelt", "AttributeError", "`tl.extra.cuda.smids` is not in Triton's tl.extra.cuda "
                                   "(which has globaltimer, num_threads, num_warps, smid"),
    ("arguments", "TypeError", "tl.extra.cuda.num_warps(): too many positional arguments"),
])
def test_misuses_are_reported_at_the_call(case, kind, words) -> None:
    with pytest.raises(tilecc.CompilationError) as e:
        vendor_misuse_kernel.source(f"*fp16:16,{case!r}")
    assert words in str(e.value) and e.value.python_error == kind


def test_outside_a_kernel_the_vendor_functions_say_where_they_belong() -> None:
    with pytest.raises(tl.OutsideKernelError, match=r"tl.extra.cuda.smid\(\) can only be"):
        cuda_extra.smid()
    with pytest.raises(tl.OutsideKernelError, match=r"tl.extra.hip.memrealtime\(\) can only"):
        tl.extra.hip.memrealtime()


@pytest.mark.gpu
def test_launch_size_and_counters_on_gpu() -> None:
    torch = pytest.importorskip("torch")
    out = torch.full((3,), -1, dtype=torch.int32, device="cuda")
    elapsed = torch.full((1,), -1, dtype=torch.int64, device="cuda")
    launch_size_kernel[(1,)](out, elapsed, THREADS=256, num_warps=8)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    total, warps, sm = out.tolist()
    assert (total, warps) == (sum(range(256)), 8) and 0 <= sm < sms
    assert 0 <= elapsed.item() < 10**9  # nanoseconds between two reads in one program
