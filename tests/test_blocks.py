"""Multi-dimensional block kernels (tests/kernels_blocks.py) and the softmax / layer norm
examples: on the NumPy interpreter against NumPy (Hypothesis draws shapes that are not
multiples of the block), compiled by NVRTC (sm_80, sm_90) and hiprtc (gfx90a) with no
warnings and no spills, and on the GPU (`pytest -m gpu`) with torch and CuPy arrays.

Cases whose atomics return order-dependent values are compared through the case's
`canonical` form (e.g. the sorted tickets), on the interpreter and on the GPU alike.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl

try:
    import kernels as K
    import kernels_blocks as KB
    from conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                    require_hip_compiler)
    from test_compile_kernels import TARGETS, assert_clean_compile
    from test_gpu_cases import FRAMEWORKS
    from test_interpreter import assert_output
except ImportError:  # tests/ imported as a package
    from tests import kernels as K
    from tests import kernels_blocks as KB
    from tests.conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                          require_hip_compiler)
    from tests.test_compile_kernels import TARGETS, assert_clean_compile
    from tests.test_gpu_cases import FRAMEWORKS
    from tests.test_interpreter import assert_output

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Known back-end bugs (in render*.py / passes / templates / runtime, not fixed here): the
# tests they break are strict xfails, so a fix shows up as XPASS.
XFAIL_COMPILE: dict[tuple[str, str], str] = {}  # (case name, target): reason
XFAIL_GPU: dict[str, str] = {}  # case name: reason
XFAIL_INTERP: dict[tuple[str, str], str] = {}  # (case name, dtype): reason


def _dtype_id(dt) -> str:
    return K.tl_name(dt)


def _mark(params_id: str, reason: str | None, values: tuple):
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(*values, id=params_id, marks=marks)


# --- shapes ------------------------------------------------------------------------------------

def dim_sizes(block: int, top: int):
    """Sizes along one dimension: below a block, whole blocks, a partial last block."""
    options = [st.integers(1, block - 1)] if block > 1 else []
    options.append(st.integers(1, max(1, top // block)).map(lambda k: k * block))
    if top > block + 1:
        options.append(st.integers(block + 1, top).filter(lambda n: n % block))
    return st.one_of(*options)


def shapes(case):
    return st.tuples(*(dim_sizes(b, top) for b, top in case.dims))


# --- running a case ----------------------------------------------------------------------------

def expected_and_actual(case, args_before, outs):
    with np.errstate(all="ignore"):
        expected = case.reference(copy.deepcopy(args_before))
    if case.canonical is not None:
        outs = case.canonical(outs, args_before)
    return expected, outs


def check_outputs(case, args_before, outs, what: str) -> None:
    expected, actual = expected_and_actual(case, args_before, outs)
    assert len(expected) == len(actual)
    for i, (got, exp) in enumerate(zip(actual, expected)):
        got = np.asarray(got)
        dt = args_before[case.outputs[i]].dtype if case.canonical is None else got.dtype
        assert_output(got, np.asarray(exp), case.tol(dt), f"{what}: output {i}")


def run_interpreted(case, dtype, n, seed: int) -> None:
    rng = np.random.default_rng(seed)
    args = case.make_args(n, dtype, rng)
    before = copy.deepcopy(args)
    case.kernel.interpret[case.grid(n)](*args, **case.options)
    for i, (a, b) in enumerate(zip(args, before)):
        if isinstance(a, np.ndarray) and i not in case.outputs:
            np.testing.assert_array_equal(  # (bit for bit: a bf16 NaN is no NaN to NumPy)
                a.view(np.uint8), b.view(np.uint8), err_msg=f"input argument {i} was modified")
    check_outputs(case, before, [args[i] for i in case.outputs], f"{case.name} n={n}")


def _interp_params():
    for case in KB.CASES_BLOCKS:
        for dt in case.dtypes:
            pid = f"{case.name}-{_dtype_id(dt)}"
            yield _mark(pid, XFAIL_INTERP.get((case.name, _dtype_id(dt))), (case, dt))


@pytest.mark.parametrize("case,dtype", list(_interp_params()))
def test_block_case_matches_numpy(case, dtype) -> None:
    # no shrinking: a failure reports its shape and seed (see the note), and runs stay short
    @settings(max_examples=10, deadline=None, database=None, derandomize=True,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(n=shapes(case), seed=st.integers(0, 2**32 - 1))
    def check(n, seed):
        note(f"shape={n} seed={seed}")
        run_interpreted(case, dtype, n, seed)

    check()


@pytest.mark.parametrize("case", KB.CASES_BLOCKS, ids=lambda c: c.name)
def test_block_case_at_the_edges(case) -> None:
    """Every dimension at 1, and every dimension at its largest size."""
    for n in (tuple(1 for _ in case.dims), tuple(top for _, top in case.dims)):
        run_interpreted(case, case.dtypes[0], n, seed=sum(n))


def test_shape_strategy_draws_every_size_class() -> None:
    seen = set()

    @settings(max_examples=80, deadline=None, database=None)
    @given(n=dim_sizes(8, 40))
    def collect(n):
        seen.add("small" if n < 8 else ("whole" if n % 8 == 0 else "partial"))

    collect()
    assert seen == {"small", "whole", "partial"}


# --- native compiles ---------------------------------------------------------------------------

def _compile_params():
    for case in KB.CASES_BLOCKS:
        for sig in case.signatures:
            for target, arch in TARGETS:
                yield _mark(f"{case.name}-{arch}-[{sig}]", XFAIL_COMPILE.get((case.name, target)),
                            (case, sig, target, arch))


@pytest.mark.parametrize("case,signature,target,arch", list(_compile_params()))
def test_block_case_compiles_cleanly(case, signature: str, target: str, arch: str) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    # all of the target's cases in one compiler run first; each alone only if that fails
    if not compile_cleanly_together("blocks", target, arch, lambda: [
            (c.kernel, sig, c.options) for c in KB.CASES_BLOCKS for sig in c.signatures
            if (c.name, target) not in XFAIL_COMPILE]):
        assert_clean_compile(case.kernel, signature, target, arch, **case.options)


# --- GPU -----------------------------------------------------------------------------------------

def _gpu_params():
    for case in KB.CASES_BLOCKS:
        for dt in case.dtypes:
            for fw in FRAMEWORKS:
                if fw == "cupy" and np.dtype(dt) == K.BF16:
                    continue  # CuPy has no bfloat16 arrays
                yield _mark(f"{case.name}-{_dtype_id(dt)}-{fw}", XFAIL_GPU.get(case.name),
                            (case, dt, fw))


@pytest.mark.gpu
@pytest.mark.parametrize("case,dtype,fw", list(_gpu_params()))
def test_block_case_on_gpu(case, dtype, fw: str) -> None:
    pytest.importorskip(fw)
    to_dev, to_host = FRAMEWORKS[fw]
    sizes = [tuple(max(1, b - 3) if top > 1 else 1 for b, top in case.dims),
             tuple(top for _, top in case.dims),
             tuple(min(top, b + 5) for b, top in case.dims)]
    for n in sizes:
        for seed in range(3):  # atomics race differently each run
            rng = np.random.default_rng(seed)
            args = case.make_args(n, dtype, rng)
            before = copy.deepcopy(args)
            dev = [to_dev(a) if isinstance(a, np.ndarray) else a for a in args]
            case.kernel[case.grid(n)](*dev, **case.options)
            outs = [to_host(dev[i], args[i]) for i in case.outputs]
            check_outputs(case, before, outs, f"{case.name} on {fw} n={n}")


# --- examples: softmax and layer norm ------------------------------------------------------

def load_example(name: str, folder: str = "examples"):
    """FOLDER/NAME.py as a module (the examples and benchmarks are scripts, not packages)."""
    spec = importlib.util.spec_from_file_location(f"{folder}_{name}",
                                                  os.path.join(ROOT, folder, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


softmax_ex = load_example("softmax")
layernorm_ex = load_example("layernorm")

SOFTMAX_COLS = (1, 2, 3, 7, 31, 32, 33, 100, 257, 781, 1000)


def _softmax_ref(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _softmax_input(rows, cols, dtype, seed=0):
    rng = np.random.default_rng(seed + cols)
    return (rng.standard_normal((rows, cols)) * 3).astype(dtype)


def _softmax_tol(dtype):
    return (1e-5, 1e-7) if dtype == np.float32 else (5e-3, 1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("cols", SOFTMAX_COLS)
def test_softmax_example_interpreted(cols: int, dtype) -> None:
    x = _softmax_input(3, cols, dtype)
    y = softmax_ex.softmax(x)
    assert y.dtype == x.dtype
    rtol, atol = _softmax_tol(dtype)
    np.testing.assert_allclose(y.astype(np.float64), _softmax_ref(x), rtol=rtol, atol=atol)
    if cols == 1:
        np.testing.assert_array_equal(y, 1)


def test_softmax_example_strided_rows() -> None:
    big = _softmax_input(5, 64, np.float32)
    x = big[:, :45]  # rows 64 elements apart
    out = np.zeros((5, 50), np.float32)[:, :45]
    softmax_ex.softmax(x, out)
    np.testing.assert_allclose(out, _softmax_ref(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("target,arch", TARGETS)
@pytest.mark.parametrize("sig", [softmax_ex.SIGNATURE,
                                 "*fp16:16, *fp16:16, i32, i32, i32, 128",
                                 "*fp32, *fp32, i32, i32, i32, 4096"])
def test_softmax_example_compiles(sig: str, target: str, arch: str) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    block = int(sig.rsplit(",", 1)[1])
    assert_clean_compile(softmax_ex.softmax_kernel, sig, target, arch,
                         num_warps=softmax_ex.launch_config(block)["num_warps"])


@pytest.mark.gpu
@pytest.mark.parametrize("fw", list(FRAMEWORKS))
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["fp32", "fp16"])
def test_softmax_example_on_gpu(dtype, fw: str) -> None:
    pytest.importorskip(fw)
    to_dev, to_host = FRAMEWORKS[fw]
    for cols in SOFTMAX_COLS + (4096, 5000):
        x = _softmax_input(37, cols, dtype)
        y = to_host(softmax_ex.softmax(to_dev(x)), x)
        rtol, atol = _softmax_tol(dtype)
        np.testing.assert_allclose(y.astype(np.float64), _softmax_ref(x), rtol=rtol, atol=atol,
                                   err_msg=f"cols={cols}")


LN_SHAPES = ((1, 1), (3, 7), (5, 100), (19, 300), (4, 1030))


def _ln_inputs(m, n, dtype, seed=0):
    rng = np.random.default_rng(seed + m * 1000 + n)
    x = rng.standard_normal((m, n)).astype(dtype)
    w, b = (rng.standard_normal(n).astype(dtype) for _ in range(2))
    dy = rng.standard_normal((m, n)).astype(dtype)
    return x, w, b, dy


def _ln_check(got, want, dtype, m):
    tol = {"y": 1e-2, "dx": 1e-2, "dw": 5e-2, "db": 5e-2} if dtype == np.float16 else \
        {"y": 1e-4, "dx": 1e-4, "dw": 1e-4, "db": 1e-4}
    for name, g, w in zip(("y", "dx", "dw", "db"), got, want):
        np.testing.assert_allclose(np.asarray(g).astype(np.float64), w, rtol=tol[name],
                                   atol=tol[name], err_msg=f"{name} ({m} rows)")


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("m,n", LN_SHAPES)
def test_layernorm_example_interpreted(m: int, n: int, dtype) -> None:
    x, w, b, dy = _ln_inputs(m, n, dtype)
    eps = 1e-5
    y, mean, rstd = layernorm_ex.layer_norm(x, w, b, eps)
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(axis=1), rtol=1e-4, atol=1e-5)
    dx, dw, db = layernorm_ex.layer_norm_backward(dy, x, w, mean, rstd)
    _ln_check((y, dx, dw, db), layernorm_ex.reference(x, w, b, dy, eps), dtype, m)


@pytest.mark.parametrize("target,arch", TARGETS)
@pytest.mark.parametrize("kernel,sig,warps", [
    ("layer_norm_fwd", layernorm_ex.FWD_SIGNATURE, 4),
    ("layer_norm_fwd", "*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32,i32,fp32,8192", 8),
    ("layer_norm_bwd_dx", None, 4),
    ("layer_norm_bwd_dwdb", "*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32,i32,32,128", 4),
], ids=["fwd_fp16", "fwd_fp32_8192", "bwd_dx", "bwd_dwdb"])
def test_layernorm_example_compiles(kernel: str, sig: str, warps: int, target: str,
                                    arch: str) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    fn = getattr(layernorm_ex, kernel)
    if sig is None:  # derived from the parameters: the example's backward is still evolving
        sig = _fp32_signature(fn)
    assert_clean_compile(fn, sig, target, arch, num_warps=warps)


def test_memory_bound_kernels_ask_for_two_programs_per_sm() -> None:
    """A kernel without tensor-core products asks ptxas for two programs per SM
    (registers held to 65536 / 512 = 128 at 8 warps) where its largest block, of 16 words
    a thread or more, fits half of that; not below 256 threads (where two programs fit any
    count); not on HIP (other launch bounds), not with tl.dot.  Where ptxas would spill for
    it, the compiled kernel is built without it (the fp32 row of 8192 at 8 warps, on
    sm_80)."""
    fwd = layernorm_ex.layer_norm_fwd
    sig = ("*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32:16,i32:16,fp32,16384")
    src = fwd.source(sig, arch="sm_90", num_warps=8)
    assert "__launch_bounds__(256, 2)" in src
    assert "at least 2 programs per SM (registers per thread held to 128" in src
    # 4 warps: ptxas's own choice, whatever the block (16384 columns: 128 words a thread;
    # 4096: 32; 1024: 8)
    for cols in ("16384", "4096", "1024"):
        assert "__launch_bounds__(128)" in fwd.source(sig.replace("16384", cols),
                                                      arch="sm_90", num_warps=4)
    # 8 warps, 2048 columns: 8 words a thread, ptxas's own choice
    assert "__launch_bounds__(256)" in fwd.source(sig.replace("16384", "2048"),
                                                  arch="sm_90", num_warps=8)
    assert "__launch_bounds__(256)" in fwd.source(sig, target="hip", num_warps=4)
    mm = load_example("matmul").matmul_kernel
    mm_sig = ("*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,"
              "i32:16,i32:1,128,128,64,8,None")
    assert "__launch_bounds__(256)" in mm.source(mm_sig, arch="sm_90", num_warps=8)
    require_cuda_compiler()
    binary = fwd.compile(sig, target="cuda", arch="sm_90", num_warps=8)
    used = int(re.search(r"Used (\d+) registers", binary.log).group(1))
    assert used <= 128 and "0 bytes spill stores" in binary.log
    wide = "*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32,i32,fp32,8192"
    assert "__launch_bounds__(256, 2)" in fwd.source(wide, arch="sm_80", num_warps=8)
    for arch in ("sm_80", "sm_90"):  # asked for in the source, dropped where it spills
        assert_clean_compile(fwd, wide, "cuda", arch, num_warps=8)


@tilecc.jit
def column_sums(x_ptr, y_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    """The sum of each column of a ROWS x COLS block (the rows split across warps)."""
    rows, cols = tl.arange(0, ROWS), tl.arange(0, COLS)
    x = tl.load(x_ptr + rows[:, None] * COLS + cols[None, :])
    tl.store(y_ptr + cols, tl.sum(x, 0))


def test_warps_exchange_partial_sums_in_rows_of_their_own() -> None:
    """A reduction whose axis the warps split writes each warp's partial results side by
    side (warp-major: warp w's slot s at w * slots + s), so that the lanes of a warp write
    and read neighbouring words.  Slot-major (the warps' values of one slot together) put
    the 16 lanes holding columns 8 apart on one bank: a decode attention over a paged
    cache, three such sums an iteration, ran at 0.76x Triton's speed, 1.9x after."""
    src = column_sums.source("*fp32:16,*fp32:16,16,128", arch="sm_90", num_warps=4)
    writes = re.findall(r"partial0\[([^\]]*)\] =", src)
    assert writes and all(w.startswith("(tc::warp_id()) * 128 + ") for w in writes), writes
    x = np.random.default_rng(0).standard_normal((16, 128)).astype(np.float32)
    y = np.zeros(128, np.float32)
    column_sums.interpret[(1,)](x, y, ROWS=16, COLS=128)
    np.testing.assert_allclose(y, x.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("out,block,vec", [("fp16", 1024, 8), ("i8", 1024, 8),
                                           ("bf16", 512, 4), ("fp16", 256, 2),
                                           ("fp32", 1024, 4)])
def test_masked_narrow_vector_stores_are_predicated(out: str, block: int, vec: int) -> None:
    """CUDA: a masked vector store of elements under 32 bits is one predicated st.global
    (`tc::store_if`), so the packing is not placed under a branch; 32-bit elements and HIP
    keep `if (mask) tc::store`.  Each form compiles cleanly (16-, 8-, 4- and 2-byte
    vectors), and the interpreter agrees with NumPy where the mask cuts a block."""
    kernel = K.narrow_store_kernel
    sig = f"*fp32:16,*{out}:16,i32:16,{block}"
    cuda, hip = kernel.source(sig, arch="sm_90"), kernel.source(sig, target="hip")
    narrow = out != "fp32"
    assert (f"tc::store_if<{vec}>(" in cuda) == narrow
    assert (f"tc::store<{vec}>(" in cuda) == (not narrow)
    assert "store_if" not in hip  # (64-lane wavefronts: 1024 elements are 4 a thread)
    for target, arch in TARGETS:
        (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
        assert_clean_compile(kernel, sig, target, arch)
    dt = {"fp16": np.float16, "i8": np.int8, "bf16": K.BF16, "fp32": np.float32}[out]
    n = block + 48  # a multiple of 16: the mask is uniform over each vector
    x = np.random.default_rng(0).uniform(-30, 30, n).astype(np.float32)
    got = np.full(n + 16, 7, dtype=dt)  # 16 elements past n that must stay as they are
    kernel.interpret[(K.cdiv(n, block),)](x, got, n, BLOCK=block)
    want = (x * 2.0 - 1.0).astype(np.float64)
    want = np.trunc(want).astype(dt) if out == "i8" else want.astype(dt)
    np.testing.assert_array_equal(got[:n], want)
    assert (got[n:] == np.array(7, dtype=dt)).all()


def test_consecutive_pool_steps_alternate_halves_instead_of_waiting() -> None:
    """A step writing the shared-memory pool waits for earlier readers only where it must.
    Softmax: the maximum's partials at byte 0, the sum's at byte 16, no wait before either
    (a thread at the sum has passed the barrier inside the maximum's step).  In a loop
    every step waits (the previous iteration's step used the same half), and after a loop
    the next step waits too (the loop may have run no iteration)."""
    early = "__syncthreads();  // the buffer may still be read by an earlier step"
    src = softmax_ex.softmax_kernel.source(softmax_ex.SIGNATURE, num_warps=4)
    body = src.split("#include")[1]
    assert early not in body and body.count("__syncthreads();") == 2
    assert "float* partial0 = reinterpret_cast<float*>(smem);" in body
    assert "float* partial0 = reinterpret_cast<float*>(smem + 16);" in body
    assert "smem[32]" in body and "consecutive steps alternate at byte 16" in body

    @tilecc.jit
    def row_sums(X, Y, N, BLOCK: tl.constexpr):
        total = tl.sum(tl.load(X + tl.arange(0, BLOCK)), axis=0)
        for i in range(N):
            x = tl.load(X + i * BLOCK + tl.arange(0, BLOCK))
            tl.store(Y + i, tl.sum(x, axis=0) - total)
        tl.store(Y + N, tl.max(tl.load(X + tl.arange(0, BLOCK)), axis=0))

    looped = row_sums.source("*fp32:16,*fp32:16,i32,256", num_warps=4).split("#include")[1]
    before, rest = looped.split("for (int i = 0;")
    assert early not in before and rest.count(early) == 2  # in the loop, and after it


def test_bound_checks_are_evaluated_once_per_run_of_registers() -> None:
    """`cols < N` with N a multiple of 16 is the same for a thread's 8 consecutive elements:
    written at the run's first register (one comparison), as the loads check it once per
    vector.  With N of unknown divisibility it varies within the run and stays per element."""
    where = "Blocked0::coord0(r / 8 * 8) < N ? x[r] - mean : 0.0f"
    aligned = layernorm_ex.layer_norm_fwd.source(layernorm_ex.FWD_SIGNATURE, num_warps=4)
    assert where in aligned
    ragged = layernorm_ex.layer_norm_fwd.source(
        layernorm_ex.FWD_SIGNATURE.replace("i32:16, fp32", "i32, fp32"), num_warps=4)
    assert "/ 8 * 8" not in ragged and "Blocked0::coord0(r) < N ? x[r] - mean" in ragged


@tilecc.jit
def _bound_kernel(X, Y, n, BLOCK: tl.constexpr, INCLUSIVE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if INCLUSIVE:
        keep = offs <= n
    else:
        keep = offs < n
    tl.store(Y + offs, tl.where(keep, tl.load(X + offs), 0.0))


def test_inclusive_bounds_are_checked_per_element() -> None:
    """`offs <= n` changes value at offs = n + 1, which a multiple of 16 in n does not put
    on a run boundary: it is never treated as constant over a run (`offs < n` is)."""
    strict = _bound_kernel.source("*fp32:16, *fp32:16, i32:16, 1024, False")
    inclusive = _bound_kernel.source("*fp32:16, *fp32:16, i32:16, 1024, True")
    assert "/ 4 * 4) < n ?" in strict
    assert "/ 4 * 4" not in inclusive and "Blocked0::coord0(v + k) <= n ?" in inclusive


def _fp32_signature(fn) -> str:
    """fp32 pointers, i32 sizes, an i32 lock, 512-wide blocks, groups of 64."""
    entries = []
    for p in inspect.signature(fn.fn).parameters.values():
        if p.annotation is not inspect.Parameter.empty:  # constexpr
            entries.append("64" if "GROUP" in p.name else "512")
        elif p.name in ("stride", "M", "N"):
            entries.append("i32")
        elif p.name == "Lock":
            entries.append("*i32")
        else:
            entries.append("*fp32:16")
    return ",".join(entries)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("m,n", LN_SHAPES + ((200, 4000),))
def test_layernorm_example_on_gpu(m: int, n: int, dtype) -> None:
    cupy = pytest.importorskip("cupy")
    x, w, b, dy = _ln_inputs(m, n, dtype)
    eps = 1e-5
    to = cupy.asarray
    y, mean, rstd = layernorm_ex.layer_norm(to(x), to(w), to(b), eps, cupy)
    dx, dw, db = layernorm_ex.layer_norm_backward(to(dy), to(x), to(w), mean, rstd, cupy)
    _ln_check([cupy.asnumpy(a) for a in (y, dx, dw, db)],
              layernorm_ex.reference(x, w, b, dy, eps), dtype, m)


def test_padded_rows_pad_only_where_a_warp_meets_a_bank_twice() -> None:
    """`_padded_rows` (an exchange through shared memory in row-major order): a block read
    along its columns (a transpose) gets rows one element longer, so that a warp's read
    meets a bank twice at most (16 times unpadded); a block written and read along its
    rows, 16 bytes at a time, keeps them unpadded (padding would break the vectors)."""
    from tilecc.transpiler.passes.layouts import default_blocked
    from tilecc.transpiler.passes.placement import Placement
    from tilecc.transpiler.render_blocks import _padded_rows

    shape = (64, 64)
    rows = Placement(default_blocked(shape, 4, 4, 32), shape)
    assert _padded_rows(shape, [(rows, (0, 1)), (rows, (0, 1))], 4, 32) == [64, 1]
    # the transpose's result, its rows along the block's columns, placed as rows are:
    # each of its axes the other of the block's
    assert _padded_rows(shape, [(rows, (0, 1)), (rows, (1, 0))], 4, 32) == [65, 1]

    def most_in_a_bank(row: int) -> int:
        words = {c1 * row + c0 for c0, c1 in (rows.coords(lane, 0, 32) for lane in range(32))}
        return max(sum(1 for w in words if w % 32 == b) for b in range(32))
    assert (most_in_a_bank(64), most_in_a_bank(65)) == (16, 2)
