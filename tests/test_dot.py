"""`tl.dot` (tests/kernels_dot.py): on the NumPy interpreter against float64 references,
compiled by NVRTC (sm_80, sm_90) and hiprtc (gfx90a) with no warnings and no spills, and on
the GPU (`pytest -m gpu`) with torch and CuPy arrays; plus the typing rules' errors and the
plan each target gets."""

from __future__ import annotations

import copy

import numpy as np
import re

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl
from tilecc.errors import CompilationError
from tilecc.transpiler.matrix_units import WGMMA_WIDTHS

try:
    import kernels_dot as KD
    from conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                    require_hip_compiler)
    from test_blocks import check_outputs, load_example, run_interpreted, shapes
    from test_compile_kernels import TARGETS, assert_clean_compile
    from test_gpu_cases import FRAMEWORKS
except ImportError:  # tests/ imported as a package
    from tests import kernels_dot as KD
    from tests.conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                          require_hip_compiler)
    from tests.test_blocks import check_outputs, load_example, run_interpreted, shapes
    from tests.test_compile_kernels import TARGETS, assert_clean_compile
    from tests.test_gpu_cases import FRAMEWORKS


def _dt_id(dt) -> str:
    return np.dtype(dt).name


@pytest.mark.parametrize("case,dtype", [pytest.param(c, d, id=f"{c.name}-{_dt_id(d)}")
                                        for c in KD.CASES_DOT for d in c.dtypes])
def test_dot_case_matches_numpy(case, dtype) -> None:
    @settings(max_examples=6, deadline=None, database=None, derandomize=True,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(n=shapes(case), seed=st.integers(0, 2**32 - 1))
    def check(n, seed):
        note(f"shape={n} seed={seed}")
        run_interpreted(case, dtype, n, seed)

    check()


@pytest.mark.parametrize("case", KD.CASES_DOT, ids=lambda c: c.name)
def test_dot_case_at_the_edges(case) -> None:
    for n in (tuple(1 for _ in case.dims), tuple(top for _, top in case.dims)):
        for dt in case.dtypes:
            run_interpreted(case, dt, n, seed=sum(n))


@pytest.mark.parametrize("case,signature,target,arch", [
    pytest.param(c, s, t, a, id=f"{c.name}-{a}-[{s}]")
    for c in KD.CASES_DOT for s in c.signatures for t, a in TARGETS])
def test_dot_case_compiles_cleanly(case, signature: str, target: str, arch: str) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    # all of the target's cases in one compiler run first; each alone only if that fails
    if not compile_cleanly_together("dot", target, arch, lambda: [
            (c.kernel, sig, c.options) for c in KD.CASES_DOT for sig in c.signatures]):
        assert_clean_compile(case.kernel, signature, target, arch, **case.options)


@pytest.mark.gpu
@pytest.mark.parametrize("case,dtype,fw", [
    pytest.param(c, d, fw, id=f"{c.name}-{_dt_id(d)}-{fw}")
    for c in KD.CASES_DOT for d in c.dtypes for fw in FRAMEWORKS
    if not (fw == "cupy" and _dt_id(d) == "bfloat16")])
def test_dot_case_on_gpu(case, dtype, fw: str) -> None:
    pytest.importorskip(fw)
    to_dev, to_host = FRAMEWORKS[fw]
    sizes = [tuple(max(1, b - 3) for b, _ in case.dims), tuple(top for _, top in case.dims),
             tuple(min(top, 2 * b + 5) for b, top in case.dims)]
    for n in sizes:
        for seed in range(2):
            rng = np.random.default_rng(seed)
            args = case.make_args(n, dtype, rng)
            before = copy.deepcopy(args)
            dev = [to_dev(a) if isinstance(a, np.ndarray) else a for a in args]
            case.kernel[case.grid(n)](*dev, **case.options)
            outs = [to_host(dev[i], args[i]) for i in case.outputs]
            check_outputs(case, before, outs, f"{case.name} on {fw} n={n}")



@tilecc.jit
def computed_b_kernel(a_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr):
    """A streamed by the pipeline; B computed in the loop body (staged into the shared-memory
    pool at every iteration), quickly, so that its stores follow the previous product
    closely."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // BK):
        a = tl.load(a_ptrs)
        kk = k * BK + rk
        b = ((kk[:, None] * 3 + rn[None, :]) % 7 - 3).to(tl.float16)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


_COMPUTED_B_SIG = "*fp16:16,*fp32:16,i32:16,128,128,64"


def _computed_b_reference(a: np.ndarray) -> np.ndarray:
    k = a.shape[1]
    b = ((np.arange(k)[:, None] * 3 + np.arange(128)[None, :]) % 7 - 3).astype(np.float32)
    return a.astype(np.float32) @ b


@pytest.mark.parametrize("stages", [3, 4])
def test_a_product_of_an_operand_made_in_the_loop_is_not_left_in_flight(stages) -> None:
    """Its operand's tile in the pool is written again by the next iteration: the product
    is waited for before the loop goes on (it was left in flight, under those stores)."""
    for tma in (True, False):  # (A by the copy engine, or in the build without it)
        src = computed_b_kernel.source(_COMPUTED_B_SIG, options=computed_b_kernel.options(
            num_warps=4, num_stages=stages, arch="sm_90a", made_descriptor_tma=tma))
        header = " ".join(src.split("#include")[0].replace("//", " ").split())
        assert f"copied into shared memory with {'TMA' if tma else 'cp.async'}" in header
        assert "kept in flight" not in header
    loop = src[src.index("for (int k_ = "):src.index("tc::cp_async_wait<0>();")]
    assert "tc::wgmma_wait<0>();" in loop and "tc::wgmma_wait<1>" not in loop


def test_the_computed_operand_product_on_the_interpreter() -> None:
    a = np.random.default_rng(0).integers(-3, 4, (128, 256)).astype(np.float16)
    c = np.zeros((128, 128), np.float32)
    computed_b_kernel.interpret[(1,)](a, c, 256, BM=128, BN=128, BK=64)
    np.testing.assert_array_equal(c, _computed_b_reference(a))


@pytest.mark.gpu
@pytest.mark.parametrize("stages", [3, 4])
def test_gpu_computed_operand_product(stages) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    a = np.random.default_rng(stages).integers(-3, 4, (128, 4096)).astype(np.float16)
    c = torch.zeros(128, 128, device="cuda")
    for _ in range(20):
        computed_b_kernel[(1,)](torch.from_numpy(a).cuda(), c, 4096, BM=128, BN=128, BK=64,
                                num_warps=4, num_stages=stages)
        np.testing.assert_array_equal(c.cpu().numpy(), _computed_b_reference(a))

@pytest.mark.gpu
@pytest.mark.parametrize("bm,bn,bk,stages", [(128, 128, 64, 4), (64, 256, 32, 4),
                                              (128, 128, 64, 5)])
def test_gpu_product_of_stages_the_threads_arrive_on(bm, bn, bk, stages) -> None:
    """One warpgroup, cp.async stages 3 or more ahead: each thread's copies arrive on the
    stage's mbarrier, each thread waits on it where the iteration reads the stage.  Ragged
    sizes (masked K, rows and columns wrapped), enough iterations for the barriers' phases
    to wrap several times; integers, so the sums are exact."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "examples", "matmul.py")
    spec = importlib.util.spec_from_file_location("matmul_example_arrivals", path)
    mm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mm)
    sig = ("*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,"
           f"i32:1,{bm},{bn},{bk},8,''")
    assert "cp_async_arrive" in mm.matmul_kernel.source(sig, arch="sm_90a", num_warps=4,
                                                        num_stages=stages)
    rng = np.random.default_rng(bk + stages)
    for m, k, n in ((300, 1000, 264), (129, 48, 80), (256, 2048, 512)):
        a = rng.integers(-2, 3, (m, k)).astype(np.float16)
        b = rng.integers(-2, 3, (k, n)).astype(np.float16)
        da, db = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        c = torch.full((m, n), float("nan"), dtype=torch.float16, device="cuda")
        grid = (tilecc.cdiv(m, bm) * tilecc.cdiv(n, bn),)
        mm.matmul_kernel[grid](da, db, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_SIZE_M=bm,
                               BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8,
                               ACTIVATION="", num_warps=4, num_stages=stages)
        want = a.astype(np.float32) @ b.astype(np.float32)
        np.testing.assert_array_equal(c.float().cpu().numpy(), want, err_msg=f"{m}x{k}x{n}")


# --- plans: which instructions each target and type gets -------------------------------------

def _source(kernel, sig, target="cuda", cp_async: bool = False, **kw):
    """`cp_async`: the build a launch runs where the strides are not what TMA reads
    (blocks of pointers copied by cp.async on sm_90 too)."""
    if cp_async:
        return kernel.source(sig, target=target, options=kernel.options(
            made_descriptor_tma=False, **kw))
    return kernel.source(sig, target=target, **kw)


@pytest.mark.parametrize("dt,instr,mfma", [
    ("fp16", "mma_m16n8k16_f16", "mfma_f32_32x32x8f16"),
    ("bf16", "mma_m16n8k16_bf16", "mfma_f32_32x32x8bf16_1k"),
    ("i8", "mma_m16n8k32_s8", "mfma_i32_32x32x8i8")])
def test_tensor_core_instruction_per_type(dt, instr, mfma) -> None:
    out = "i32" if dt == "i8" else "fp32"
    sig = f"*{dt}:16,*{dt}:16,*{out}:16,i32,i32,i32,i32,i32:1,i32,i32:1,i32,64,64,32,0"
    src = _source(KD.dot_loop_kernel, sig, arch="sm_80")
    assert f"tc::{instr}(" in src and "ldmatrix_x4(" in src
    hip = _source(KD.dot_loop_kernel, sig, target="hip").split("#include")[1]
    assert "ldmatrix" not in hip and "tc::fma(" not in hip
    assert f"tc::{mfma}<1>(" in hip and "tc::load<4>(" in hip  # a vector LDS read per operand


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
def test_hopper_takes_warpgroup_mma(dt) -> None:
    """On sm_90, 16-bit products whose tiles warpgroups can split run as wgmma, compiled for
    sm_90a; int8 stays on mma.sync; sm_80 never sees wgmma.  (The stages below are the
    cp.async build's, which a launch runs where the strides are not what TMA reads.)"""
    sig = f"*{dt}:16,*{dt}:16,*fp32:16,i32,i32,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,64,64,64,0"
    src = _source(KD.dot_loop_kernel, sig, arch="sm_90", cp_async=True)
    assert f"tc::wgmma_m64n64k16_{dt.replace('fp', 'f')}_" in src
    assert "tc::wgmma_a_row<4, 64>" in src and "cp_async<16>" in src
    # one multiplication kept in flight from 3 stages on.  A warp's wait retires its own
    # part of a product (its rows, on its own tensor core, read the whole stage): with 3
    # stages the copies that refill the stage it read wait behind a barrier; with 4 they
    # run 2 ahead and the iteration's own barrier does — but for one warpgroup's product
    # of 128 x 128 x 32 or more, which runs 3 ahead behind the barrier
    refill = "__syncthreads();  // ... by every warp: its stage can be refilled"
    closing = "__syncthreads();  // the next stage is everyone's"
    assert "tc::wgmma_wait<1>()" in src and refill in src and "2 iterations ahead" in src
    assert closing in src
    deep = _source(KD.dot_loop_kernel, sig, arch="sm_90", num_stages=4, cp_async=True)
    assert "tc::wgmma_wait<1>()" in deep and refill not in deep and "2 iterations ahead" in deep
    assert closing in deep
    large = sig.replace("64,64,64,0", "128,128,32,0")
    large_deep = _source(KD.dot_loop_kernel, large, arch="sm_90", num_stages=4, cp_async=True)
    assert "3 iterations ahead (4 stages" in large_deep
    # 3 ahead, each thread waits for its copies of the next stage before the refill barrier
    # (two stages' copies stay in flight), which then ends the iteration: one barrier
    awaited = "__syncthreads();  // by every warp: the previous products retired, the next " \
        "stage landed"
    loop = large_deep[large_deep.index("for (int k_ = "):
                      large_deep.index("tc::wgmma_wait<0>();  // the last")]
    assert loop.count("__syncthreads()") == 1 and awaited in loop and closing not in loop
    assert loop.index("tc::cp_async_wait<1>();") < loop.index(awaited) < \
        loop.index("tc::cp_async<16>(")
    assert awaited not in src and awaited not in deep
    # no proxy fence after the copies land: wgmma reads what cp.async wrote once waited for
    assert "fence_proxy_async" not in large_deep
    # a longer product (2^20 multiply-adds, or 256 columns): each thread's copies of a stage
    # arrive on the stage's mbarrier as they land (cp.async.mbarrier.arrive), each thread
    # waits on it where the iteration reads the stage, and the refill goes out right after
    # the refill barrier, the iteration's only one: two stages' copies stay in flight while
    # a thread waits
    for shape in ("128,128,64,0", "64,256,32,0"):
        longer = _source(KD.dot_loop_kernel, sig.replace("64,64,64,0", shape), arch="sm_90",
                         num_stages=4, cp_async=True)
        loop = longer[longer.index("for (int k_ = "):longer.index("tc::mbarrier_inval(")]
        loop = loop[:loop.rindex("__syncthreads();")]  # (the barriers' end, after the loop)
        assert loop.count("__syncthreads()") == 1 and refill in loop and closing not in loop
        assert loop.index("// every thread's copies for this stage") < \
            loop.index("wgmma_m64") < loop.index(refill) < loop.index("tc::cp_async<16>(") < \
            loop.index("tc::cp_async_arrive(")
        assert "cp_async_wait" not in loop and "cp_async_commit" not in loop
        assert ", 128);" in longer[longer.index("tc::mbarrier_init("):]  # every thread
    # fewer stages ahead (the copies wait behind the refill or the iteration's barrier
    # anyway): each thread waits for its own copies, and a barrier makes them everyone's
    three = _source(KD.dot_loop_kernel, large, arch="sm_90", num_warps=8, num_stages=3,
                    cp_async=True)
    assert refill in three and closing in three and "2 iterations ahead (3 stages" in three
    assert not any("cp_async_arrive" in x for x in (src, deep, large_deep, three))
    two_deep = _source(KD.dot_loop_kernel, large, arch="sm_90", num_warps=8, num_stages=4,
                       cp_async=True)
    assert refill not in two_deep and "2 iterations ahead (4 stages" in two_deep
    shallow = _source(KD.dot_loop_kernel, sig, arch="sm_90", num_stages=2, cp_async=True)
    assert "tc::wgmma_wait<1>()" not in shallow and "tc::wgmma_wait<0>()" in shallow
    assert "wgmma" not in _source(KD.dot_loop_kernel, sig, arch="sm_80").split("#include")[1]
    require_cuda_compiler()
    binary = KD.dot_loop_kernel.compile(sig, target="cuda", arch="sm_90")
    assert binary.arch == "sm_90a" and "0 bytes spill stores" in binary.log
    # the stages' mbarriers and the copies' arrivals, through NVRTC and ptxas
    binary = KD.dot_loop_kernel.compile(sig.replace("64,64,64,0", "128,128,64,0"),
                                        target="cuda", options=KD.dot_loop_kernel.options(
                                            arch="sm_90", num_stages=4,
                                            made_descriptor_tma=False))
    assert binary.arch == "sm_90a" and "0 bytes spill stores" in binary.log
    assert "warning" not in binary.log.lower()
    i8 = "*i8:16,*i8:16,*i32:16,i32,i32,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,64,64,64,0"
    assert "mma_m16n8k32_s8" in _source(KD.dot_loop_kernel, i8, arch="sm_90")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_offsets_computed_from_the_loop_index_keep_the_pipeline(arch) -> None:
    """Offsets along K computed from the index each iteration (`k0 = k * BK`, read by both
    loads) stream in with cp.async as the pointer increments of Triton's tutorial do: the
    copies compute them for the iteration they fetch.  (Used to stay plain loads: the
    layouts left an unread copy of the index arithmetic in the body, and a named scalar
    could not be written at the issue point.)"""
    sig = "*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,"
    # (on sm_90 the copy engine's: passes.pointer_tiles, its coordinates computed alike)
    engine = "TMA" if arch == "sm_90" else "cp.async"
    src = _source(KD.dot_offsets_kernel, sig + "64,64,64,0", arch=arch)
    header, body = src.split("#include")
    assert f"a, b of tl.dot copied into shared memory with {engine}" in header
    assert "k_next * 64" in body and "k_ahead * 64" in body
    src = _source(KD.dot_inline_offsets_kernel, "*fp16:16,*fp16:16,*fp32:16,i32:16,64,64,64",
                  arch=arch)
    assert f"a, b of tl.dot copied into shared memory with {engine}" in src


def test_column_major_b_is_loaded_along_k_and_staged_k_major() -> None:
    """B stored column-major (a block of K^T): its loads run along K in 16-byte vectors;
    on sm_90 cp.async copies them into a K-major tile that wgmma reads untransposed; on
    sm_80 cp.async copies them into a K-major tile too, which ldmatrix reads
    untransposed (passes.dot.b_k_major: `MatrixUnit.ldmatrix_either_way`)."""
    sig = ("*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:1,i32:16,i32:16,"
           "64,64,64,0")
    src = _source(KD.dot_loop_kernel, sig, arch="sm_90", cp_async=True)
    header, body = src.split("#include")
    assert "load b: 8 x fp16 (16 B) along axis 0" in header
    assert "a, b of tl.dot copied into shared memory with cp.async" in header
    # (where TMA copies B, its boxes are B's rows as stored: the block's transpose)
    assert "the block's transpose: B K-major" in _source(KD.dot_loop_kernel, sig, arch="sm_90")
    assert "B from shared memory (K-major)" in header
    assert body.count("_ss<0>(") == 1 and "_ss<1>(" not in body  # B not transposed
    row_major = _source(KD.dot_loop_kernel, sig.replace("i32:1,i32:1,i32:16", "i32:1,i32:16,i32:1"),
                        arch="sm_90")
    assert row_major.count("_ss<1>(") == 1 and "K-major" not in row_major
    ampere = _source(KD.dot_loop_kernel, sig, arch="sm_80")
    assert "load b: 8 x fp16 (16 B) along axis 0" in ampere
    assert "a, b of tl.dot copied into shared memory with cp.async" in ampere
    assert "tc::ldmatrix_x4(b_frag" in ampere and "ldmatrix_x4_trans(b_frag" not in ampere


def test_fp32_precision_selects_tf32_or_fma() -> None:
    base = "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32,i32,i32:1,i32,i32:1,i32,64,64,32,"
    # tf32: warpgroup MMA on Hopper (B K-major: tf32's wgmma reads no N-major B), mma.sync
    # before
    assert "tc::wgmma_m64n64k8_tf32_ss<0>(" in _source(KD.dot_loop_kernel, base + "0",
                                                       arch="sm_90a")
    assert "tc::mma_m16n8k8_tf32(" in _source(KD.dot_loop_kernel, base + "0", arch="sm_80")
    ieee = _source(KD.dot_loop_kernel, base + "1")
    assert "mma_" not in ieee.split("#include")[1] and "tc::fma(" in ieee
    # AMD: fp32 MFMA (one K element a lane) for both, as gfx90a has no tf32; fp64 sums
    # with fused multiply-adds
    for precision in "01":
        hip = _source(KD.dot_loop_kernel, base + precision, target="hip").split("#include")[1]
        assert "tc::mfma_f32_32x32x2f32<1>(" in hip and "tc::fma(" not in hip
    fp64 = _source(KD.dot_loop_kernel, base.replace("fp32", "fp64") + "1", target="hip")
    assert "mfma" not in fp64.split("#include")[1] and "tc::fma(" in fp64


def test_accumulates_in_place_and_stages_operands_swizzled() -> None:
    sig = "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32,i32:1,i32,i32:1,i32,64,64,32,0"
    src = _source(KD.dot_loop_kernel, sig)
    # the loop-carried accumulator is the mma C fragment itself: no copy per iteration
    body = src.split("for (int k_")[1] if "for (int k_" in src else src
    assert "acc[r] = " not in body.split("tl.store")[0]
    assert "tc::swizzled_chunk<" in src


# --- typing rules -----------------------------------------------------------------------------

def _dot_kernel(expr: str):
    ns: dict = {}
    code = (
        "import tilecc\nimport tilecc.language as tl\n"
        "@tilecc.jit\n"
        "def k(A, B, C):\n"
        "    r16 = tl.arange(0, 16)\n"
        "    r32 = tl.arange(0, 32)\n"
        "    a = tl.load(A + r16[:, None] * 32 + r32[None, :])\n"
        "    b = tl.load(B + r32[:, None] * 16 + r16[None, :])\n"
        f"    c = {expr}\n"
        "    tl.store(C + r16[:, None] * 16 + r16[None, :], c)\n")
    import linecache
    name = f"<dot-test-{abs(hash(expr))}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    exec(compile(code, name, "exec"), ns)
    return ns["k"]


@pytest.mark.parametrize("expr,message", [
    ("tl.dot(a, a)", "inner dimensions differ"),
    ("tl.dot(a, b.to(tl.float32))", "one element type"),
    ("tl.dot(a, b, input_precision='tf64')", "input_precision must be one of"),
    ("tl.dot(a, b, out_dtype=tl.int32)", "out_dtype of a fp16 tl.dot"),
    ("tl.dot(a, b, acc=tl.zeros((16, 16), dtype=tl.float16))", "acc is fp16"),
    ("tl.dot(a[:, :16], b)", ""),
    ("tl.dot(tl.sum(a, 1), b)", "two 2-D blocks"),
])
def test_dot_typing_errors_point_at_the_line(expr, message) -> None:
    k = _dot_kernel(expr)
    with pytest.raises(CompilationError) as e:
        k.source("*fp16:16,*fp16:16,*fp32:16")
    text = str(e.value)
    assert message in text
    assert ":9:" in text  # the line of the dot


def test_dot_minimum_shapes() -> None:
    @tilecc.jit
    def small(A, C):
        r = tl.arange(0, 8)
        a = tl.load(A + r[:, None] * 8 + r[None, :])
        tl.store(C + r[:, None] * 8 + r[None, :], tl.dot(a, a))

    with pytest.raises(CompilationError, match="K >= 16 for fp16 inputs"):
        small.source("*fp16:16,*fp32:16")


def test_out_dtype_fp16_rounds_the_fp32_sum_once() -> None:
    @tilecc.jit
    def half_out(A, B, C):
        r = tl.arange(0, 16)
        a = tl.load(A + r[:, None] * 16 + r[None, :])
        b = tl.load(B + r[:, None] * 16 + r[None, :])
        tl.store(C + r[:, None] * 16 + r[None, :], tl.dot(a, b, out_dtype=tl.float16))

    rng = np.random.default_rng(0)
    a = rng.uniform(-2, 2, (16, 16)).astype(np.float16)
    b = rng.uniform(-2, 2, (16, 16)).astype(np.float16)
    c = np.zeros((16, 16), np.float16)
    half_out.interpret[(1,)](a, b, c)
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(c.astype(np.float32), ref.astype(np.float32), rtol=1e-3,
                               atol=1e-2)
    src = half_out.source("*fp16:16,*fp16:16,*fp16:16")
    assert "float" in src and "_sum[" in src
    require_cuda_compiler()
    assert_clean_compile(half_out, "*fp16:16,*fp16:16,*fp16:16", "cuda", "sm_90")


MM = load_example("matmul")


@pytest.mark.parametrize("config", MM.CONFIGS, ids=lambda c: "{BLOCK_SIZE_M}x{BLOCK_SIZE_N}x"
                         "{BLOCK_SIZE_K}".format(**c.kwargs) + f"-w{c.num_warps}-s{c.num_stages}")
@pytest.mark.parametrize("dt", ["fp16", "bf16"])
def test_matmul_example_configs_compile_for_hopper(config, dt: str) -> None:
    """Every block configuration the benchmark tries, with its 16-bit epilogue: clean on
    sm_90 (no spills, no wgmma serialized by ptxas), one multiplication kept in flight from
    3 stages on, and the accumulator converted two elements per instruction."""
    kw = config.kwargs
    sig = (f"*{dt}:16,*{dt}:16,*{dt}:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,"
           f"i32:16,i32:1,{kw['BLOCK_SIZE_M']},{kw['BLOCK_SIZE_N']},{kw['BLOCK_SIZE_K']},"
           f"{kw['GROUP_SIZE_M']},None")  # the plain epilogue: the one ptxas serialized
    options = dict(num_warps=config.num_warps, num_stages=config.num_stages)
    src = MM.matmul_kernel.source(sig, arch="sm_90", **options)
    if "wgmma" in src.split("#include")[1]:
        assert ("tc::wgmma_wait<1>()" in src) == (config.num_stages >= 3)
    assert "tc::cast_pair(" in src
    require_cuda_compiler()
    assert_clean_compile(MM.matmul_kernel, sig, "cuda", "sm_90", **options)


@pytest.mark.parametrize("config", MM.FP8_CONFIGS, ids=lambda c: "{BLOCK_SIZE_M}x{BLOCK_SIZE_N}x"
                         "{BLOCK_SIZE_K}".format(**c.kwargs) + f"-w{c.num_warps}-s{c.num_stages}")
def test_matmul_example_fp8_configs_compile_for_hopper(config) -> None:
    """Every fp8 configuration the fp8 benchmark tries (Triton's tutorial's: K steps of
    128 bytes), e4m3 A row-major and B column-major as the benchmark passes them: Hopper's
    fp8 wgmma where N is one of its widths (mma.sync over fp16 where it is narrower), clean
    on sm_90 (no spills, no wgmma serialized by ptxas)."""
    kw = config.kwargs
    sig = (f"*fp8e4nv:16,*fp8e4nv:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:1,"
           f"i32:16,i32:16,i32:1,{kw['BLOCK_SIZE_M']},{kw['BLOCK_SIZE_N']},"
           f"{kw['BLOCK_SIZE_K']},{kw['GROUP_SIZE_M']},None")
    options = dict(num_warps=config.num_warps, num_stages=config.num_stages)
    src = MM.matmul_kernel.source(sig, arch="sm_90", **options)
    wide = kw["BLOCK_SIZE_N"] in WGMMA_WIDTHS
    assert ("k32_e4m3_ss" in src.split("#include")[1]) == wide  # both operands from shared
    require_cuda_compiler()
    assert_clean_compile(MM.matmul_kernel, sig, "cuda", "sm_90", **options)


def test_pipelined_copies_land_at_offsets_worked_out_before_the_loop() -> None:
    """Where a thread's cp.async vectors land in a stage (a swizzled offset) is the same
    in every stage: it is worked out once, before the loop, and kept in registers.
    Worked out at each copy, ptxas redid it in every K step (about a hundred integer
    instructions per step of a 128 x 256 x 64 Hopper tile, 0.7x Triton's speed)."""
    sig = "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,64,64,64,0"
    for arch in ("sm_80", "sm_90"):  # (sm_90: the build that copies by cp.async)
        src = _source(KD.dot_loop_kernel, sig, arch=arch, cp_async=True).split("#include")[1]
        before, copies = src.split("{  // prologue", 1)
        assert "tc::keep_in_register(" in before and "swizzled_chunk" in before
        calls = re.findall(r"tc::cp_async<\d+>\(([^,]*),", copies)
        # (one register and a constant per vector where that is the same in every thread:
        # test_vector_steps)
        assert calls and all(re.fullmatch(
            r"\w+_base \+ \w+_at(\[v / \d+\]| \+ v / \d+ \* \d+| \+ \w+_step\[v / \d+\])", c)
            for c in calls)
