"""Pointers as values: integers cast to pointers and back, pointers to other element
types, addresses loaded from memory (grouped GEMM): the interpreter against NumPy, the
errors, native compiles and GPU runs."""

from __future__ import annotations

import linecache
import os
import runpy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl
from tilecc.errors import CompilationError, InterpreterError

try:
    import kernels_ptr as KP
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_compile_kernels import TARGETS, assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests import kernels_ptr as KP
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_compile_kernels import TARGETS, assert_clean_compile

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
DTYPES = {"float16": tl.float16, "float32": tl.float32, "int8": tl.int8, "int64": tl.int64,
          "uint16": tl.uint16}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(count=st.integers(1, 5), n=st.integers(1, 100), dtype=st.sampled_from(sorted(DTYPES)),
       seed=st.integers(0, 2**16))
def test_arrays_reached_through_a_table_of_addresses(count, n, dtype, seed) -> None:
    rng = np.random.default_rng(seed)
    arrays = [rng.integers(0, 100, n).astype(dtype) for _ in range(count)]
    table = np.array([a.ctypes.data for a in arrays], np.int64)
    out = np.zeros(n, np.float64)
    KP.gather_sum_kernel.interpret[(-(-n // 32),)](table, out, count, n, BLOCK=32,
                                                  DTYPE=DTYPES[dtype])
    np.testing.assert_array_equal(out, np.sum([a.astype(np.float64) for a in arrays], axis=0))


@pytest.mark.parametrize("n", [1, 7, 16])
def test_address_arithmetic_and_pointer_casts(n) -> None:
    x = np.linspace(-2, 3, n).astype(np.float32)
    y = np.zeros(n, np.float32)
    bits = np.zeros(n, np.int32)
    flags = np.zeros(2, np.int32)
    KP.address_arith_kernel.interpret[(1,)](x, y, bits, flags, n, BLOCK=16)
    np.testing.assert_array_equal(y, x[::-1])
    np.testing.assert_array_equal(bits, x.view(np.int32))
    np.testing.assert_array_equal(flags, [1, 1])


def test_masked_off_lanes_of_integer_addresses_may_point_into_another_array() -> None:
    """The reversed addresses of the lanes past n point below x: here into another
    argument laid out just before it (before the fix, into whatever array the allocator
    had put there, which made the test above depend on the machine).  Only the lanes
    a load reads decide which array a block of addresses points into."""
    n = 7
    memory = np.linspace(-2, 3, 32).astype(np.float32)
    before, x = memory[:16], memory[16:16 + n]
    y = np.zeros(n, np.float32)
    bits = np.zeros(n, np.int32)
    flags = np.zeros(2, np.int32)
    KP.address_arith_kernel.interpret[(1,)](x, y, bits, flags, n, BLOCK=16)
    np.testing.assert_array_equal(y, x[::-1])
    np.testing.assert_array_equal(flags, [1, 1])
    assert before.size  # (kept referenced: an array the interpreter can find)


def test_grouped_gemm_example_on_the_interpreter() -> None:
    runpy.run_path(os.path.join(EXAMPLES, "grouped_gemm.py"), run_name="not_main")["main"]()


def test_unknown_address_is_a_clear_interpreter_error() -> None:
    table = np.array([0x1010], np.int64)  # no array lives there (the first pages are unmapped)
    out = np.zeros(4, np.float64)
    with pytest.raises(InterpreterError) as e:
        KP.gather_sum_kernel.interpret[(1,)](table, out, 1, 4, BLOCK=4, DTYPE=tl.float32)
    assert "address 0x1010" in str(e.value)
    assert "inside no array the interpreter knows" in str(e.value)


@tilecc.jit
def _two_arrays_one_block(table, out):
    offs = tl.arange(0, 2)
    p = tl.load(table + offs).to(tl.pointer_type(tl.float32))
    tl.store(out + offs, tl.load(p))


def test_one_block_of_pointers_into_two_arrays_is_refused_by_the_interpreter() -> None:
    a, b = np.ones(2, np.float32), np.zeros(2, np.float32)
    table = np.array([a.ctypes.data, b.ctypes.data], np.int64)
    with pytest.raises(InterpreterError, match="2 different arrays"):
        _two_arrays_one_block.interpret[(1,)](table, np.zeros(2, np.float32))


def _kernel(body: str):
    code = ("import tilecc\nimport tilecc.language as tl\n"
            "@tilecc.jit\n"
            "def k(X, Y, T):\n"
            + "".join(f"    {line}\n" for line in body.splitlines()))
    name = f"<pointer-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    ns: dict = {}
    exec(compile(code, name, "exec"), ns)
    return ns["k"]


@pytest.mark.parametrize("body,message", [
    ("tl.store(Y, X.to(tl.int32))", "a pointer converts to a 64-bit integer"),
    ("tl.store(Y, X.to(tl.float32))", "a pointer converts to a 64-bit integer"),
    ("p = tl.load(T).to(tl.float32).to(tl.pointer_type(tl.float32))", "only integers"),
    ("p = tl.load(T).to(tl.pointer_type(tl.pointer_type(tl.float32)))", "pointers to pointers"),
    ("tl.store(Y, (X == Y).to(tl.float32))", "p.to(tl.int64) == q.to(tl.int64)"),
])
def test_pointer_cast_misuse_is_a_compilation_error(body, message) -> None:
    with pytest.raises(CompilationError) as e:
        _kernel(body).source("*fp32,*fp32,*i64")
    assert message in str(e.value), str(e.value)
    assert ":5:" in str(e.value)


def test_generated_casts_are_reinterpret_casts() -> None:
    src = KP.address_arith_kernel.source("*fp32:16,*fp32:16,*i32:16,*i32:16,i32,16")
    assert "reinterpret_cast<long long>(x)" in src
    assert "reinterpret_cast<const int*>(x)" in src
    src = KP.gather_sum_kernel.source("*i64:16,*fp64:16,i32,i32,128,fp16")
    assert "reinterpret_cast<const tc::half*>(" in src


# --- native compiles and the GPU ------------------------------------------------------------

def _grouped():
    import importlib.util

    spec = importlib.util.spec_from_file_location("grouped_gemm", os.path.join(EXAMPLES, "grouped_gemm.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


COMPILED = [
    (KP.gather_sum_kernel, "*i64:16,*fp64:16,i32,i32,128,fp16"),
    (KP.gather_sum_kernel, "*i64,*fp64,i32,i32,64,i8"),
    (KP.address_arith_kernel, "*fp32:16,*fp32:16,*i32:16,*i32:16,i32,64"),
]


@pytest.mark.parametrize("index,target,arch", [
    pytest.param(i, t, a, id=f"{i}-{a}") for i in range(len(COMPILED) + 1) for t, a in TARGETS])
def test_pointer_value_kernels_compile_cleanly(index, target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    if index == len(COMPILED):
        g = _grouped()
        assert_clean_compile(g.grouped_matmul_kernel, g.SIGNATURE, target, arch)
    else:
        assert_clean_compile(*COMPILED[index], target, arch)


@pytest.mark.gpu
def test_grouped_gemm_on_gpu_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    g = _grouped()
    torch.manual_seed(0)
    shapes = [(512, 256, 128), (100, 80, 60), (1024, 1024, 1024), (33, 130, 17)]
    a_list = [torch.randn((m, k), device="cuda", dtype=torch.float16) for m, n, k in shapes]
    b_list = [torch.randn((k, n), device="cuda", dtype=torch.float16) for m, n, k in shapes]
    c_list = [torch.empty((m, n), device="cuda", dtype=torch.float16) for m, n, k in shapes]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    g.group_gemm(a_list, b_list, c_list, num_sm=sms, blocks=(128, 128, 32),
                 xp=lambda x: torch.from_numpy(x).cuda())
    for a, b, c in zip(a_list, b_list, c_list):
        torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2, atol=5e-2)


@pytest.mark.gpu
def test_address_table_and_casts_on_gpu() -> None:
    torch = pytest.importorskip("torch")
    arrays = [torch.arange(100, device="cuda", dtype=torch.float16) * (i + 1) for i in range(3)]
    table = torch.tensor([a.data_ptr() for a in arrays], device="cuda", dtype=torch.int64)
    out = torch.zeros(100, device="cuda", dtype=torch.float64)
    KP.gather_sum_kernel[(4,)](table, out, 3, 100, BLOCK=32, DTYPE=tl.float16)
    torch.testing.assert_close(out, sum(a.double() for a in arrays))
    x = torch.linspace(-2, 3, 16, device="cuda")
    y = torch.zeros(16, device="cuda")
    bits = torch.zeros(16, device="cuda", dtype=torch.int32)
    flags = torch.zeros(2, device="cuda", dtype=torch.int32)
    KP.address_arith_kernel[(1,)](x, y, bits, flags, 16, BLOCK=16)
    torch.testing.assert_close(y, x.flip(0))
    assert torch.equal(bits, x.view(torch.int32)) and flags.tolist() == [1, 1]
