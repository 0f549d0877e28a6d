"""Block pointers (tl.make_block_ptr, tl.advance, boundary_check, padding_option): the
interpreter against NumPy, Triton's errors, the generated code against the pointer
version of the same matmul, native compiles, and GPU runs."""

from __future__ import annotations

import linecache

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl
from tilecc.errors import CompilationError

try:
    import kernels_ptr as KP
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_compile_kernels import TARGETS, assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests import kernels_ptr as KP
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_compile_kernels import TARGETS, assert_clean_compile

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _matrix(rng, m: int, n: int, dtype, column_major: bool):
    """An m x n matrix of `dtype` in row- or column-major memory: (flat buffer, strides,
    the matrix as NumPy indexes it)."""
    x = rng.integers(-50, 50, (m, n)).astype(dtype)
    if column_major:
        return np.asfortranarray(x).ravel(order="K"), (1, m), x
    return x.ravel().copy(), (n, 1), x


def _inside(om, on, bm, bn, m, n, check):
    r = (om + np.arange(bm))[:, None] + 0 * np.arange(bn)[None, :]
    c = (on + np.arange(bn))[None, :] + 0 * np.arange(bm)[:, None]
    ok = np.ones((bm, bn), bool)
    if 0 in check:
        ok &= (r >= 0) & (r < m)
    if 1 in check:
        ok &= (c >= 0) & (c < n)
    return r, c, ok


# an unchecked dim must stay inside the tensor (as in Triton, it is read unguarded)
def _fits(offset, block, size, checked) -> bool:
    return checked or (0 <= offset and offset + block <= size)


@SETTINGS
@given(m=st.integers(1, 40), n=st.integers(1, 40), bm=st.sampled_from([1, 4, 8, 16]),
       bn=st.sampled_from([2, 8, 16]), om=st.integers(-20, 40), on=st.integers(-20, 40),
       check=st.sampled_from([(), (0,), (1,), (0, 1), (1, 0)]),
       pad=st.sampled_from(["zero", "nan", ""]), dtype=st.sampled_from(["float32", "int32", "float16"]),
       column_major=st.booleans(), seed=st.integers(0, 2**16))
def test_load_through_block_pointer_matches_numpy(m, n, bm, bn, om, on, check, pad, dtype,
                                                  column_major, seed) -> None:
    assume(_fits(om, bm, m, 0 in check) and _fits(on, bn, n, 1 in check))
    assume(not (pad == "nan" and dtype == "int32"))
    rng = np.random.default_rng(seed)
    flat, (sm, sn), x = _matrix(rng, m, n, dtype, column_major)
    y = np.full((bm, bn), 77, dtype)
    KP.bp_load_kernel.interpret[(1,)](flat, y, m, n, sm, sn, om, on, BM=bm, BN=bn,
                                      CHECK=check, PAD=pad)
    r, c, ok = _inside(om, on, bm, bn, m, n, check)
    np.testing.assert_array_equal(y[ok], x[r[ok], c[ok]])
    if check and pad:
        fill = np.nan if pad == "nan" else 0
        np.testing.assert_array_equal(y[~ok], np.full((~ok).sum(), fill, dtype))


@SETTINGS
@given(m=st.integers(1, 40), n=st.integers(1, 40), bm=st.sampled_from([1, 4, 16]),
       bn=st.sampled_from([2, 8, 16]), om=st.integers(-20, 40), on=st.integers(-20, 40),
       check=st.sampled_from([(), (0,), (1,), (0, 1)]), column_major=st.booleans(),
       seed=st.integers(0, 2**16))
def test_store_through_block_pointer_matches_numpy(m, n, bm, bn, om, on, check, column_major,
                                                   seed) -> None:
    assume(_fits(om, bm, m, 0 in check) and _fits(on, bn, n, 1 in check))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((bm, bn)).astype(np.float32)
    flat, (sm, sn), _ = _matrix(rng, m, n, np.float32, column_major)
    flat[:] = -1
    KP.bp_store_kernel.interpret[(1,)](x, flat, m, n, sm, sn, om, on, BM=bm, BN=bn,
                                       CHECK=check)
    want = np.full((m, n), -1, np.float32)
    r, c, ok = _inside(om, on, bm, bn, m, n, (0, 1))
    want[r[ok], c[ok]] = x[ok]
    got = flat.reshape((n, m)).T if column_major else flat.reshape((m, n))
    np.testing.assert_array_equal(got, want)


@SETTINGS
@given(m=st.integers(1, 50), n=st.integers(1, 70), bm=st.sampled_from([4, 16]),
       bn=st.sampled_from([8, 32]), column_major=st.booleans(), seed=st.integers(0, 2**16))
def test_block_pointer_advanced_in_a_loop(m, n, bm, bn, column_major, seed) -> None:
    rng = np.random.default_rng(seed)
    flat, (sm, sn), x = _matrix(rng, m, n, np.float32, column_major)
    out = np.zeros(m, np.float32)
    KP.bp_row_sum_kernel.interpret[(-(-m // bm),)](flat, out, m, n, sm, sn, BM=bm, BN=bn)
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-6)


@SETTINGS
@given(m=st.integers(1, 20), n=st.integers(1, 70), step=st.integers(1, 40),
       seed=st.integers(0, 2**16))
def test_block_pointer_walked_backwards_then_read_after_the_loop(m, n, step, seed) -> None:
    bm, bn = 16, 8
    x = np.random.default_rng(seed).integers(-9, 9, (m, n)).astype(np.float32)
    want = np.zeros((bm, bn), np.float32)

    def block(col):  # the (bm, bn) block at column `col`, zero outside x
        out = np.zeros((bm, bn), np.float32)
        for j in range(bn):
            if 0 <= col + j < n:
                out[:min(m, bm), j] = x[:bm, col + j]
        return out
    col = n - bn
    for _ in range(-(-n // step)):
        want += block(col)
        col -= step
    want += 100 * block(col)
    out = np.zeros((bm, bn), np.float32)
    KP.bp_walk_kernel.interpret[(1,)](x, out, m, n, n, step, BM=bm, BN=bn)
    np.testing.assert_array_equal(out, want)


def test_block_pointer_advanced_in_a_while_loop() -> None:
    x = np.arange(45, dtype=np.float32)
    out = np.zeros(1, np.float32)
    KP.bp_while_kernel.interpret[(1,)](x, out, 45, BN=16)
    assert out[0] == x.sum()


def test_block_pointer_matmul_matches_numpy() -> None:
    rng = np.random.default_rng(1)
    for m, n, k in [(37, 45, 50), (64, 32, 16), (1, 17, 3)]:
        a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
        for kernel in (KP.bp_matmul_kernel, KP.ptr_matmul_kernel):
            c = np.zeros((m, n), np.float16)
            kernel.interpret[(-(-m // 16), -(-n // 16))](
                a, b, c, m, n, k, k, 1, n, 1, n, 1,
                BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16)
            np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b,
                                       rtol=2e-2, atol=2e-2)


# --- the same code as pointer arithmetic ------------------------------------------------

def _memory_and_pipeline(kernel, sig: str, target: str = "cuda", arch: str = "sm_90"):
    """Each load's vector width and mask mode, each store's, and the pipelines' notes."""
    k = kernel.build(kernel._specs(sig, {}), target, 4, num_stages=3, arch=arch).kernel
    plans, notes = [], []
    for op in k.walk():
        if op.kind in ("load", "store"):
            plan = op.attrs["plan"]
            plans.append((op.kind, plan.vec, plan.mask_mode))
        if op.kind == "for" and op.attrs.get("pipeline") is not None:
            p = op.attrs["pipeline"]
            notes.append((len(p.loads), p.stages, p.distance, p.in_flight))
    return plans, notes


@pytest.mark.parametrize("target,arch", [("cuda", "sm_90"), ("cuda", "sm_80"),
                                         ("hip", "gfx90a")])
@pytest.mark.parametrize("blocks", [(128, 128, 32), (64, 64, 64), (64, 128, 32)])
def test_block_pointer_matmul_gets_the_pointer_versions_code(blocks, target, arch) -> None:
    sig = KP.MATMUL_SIGNATURE.format(bm=blocks[0], bn=blocks[1], bk=blocks[2])
    bp_plans, bp_pipes = _memory_and_pipeline(KP.bp_matmul_kernel, sig, target, arch)
    ptr_plans, ptr_pipes = _memory_and_pipeline(KP.ptr_matmul_kernel, sig, target, arch)
    assert bp_plans == ptr_plans
    assert bp_pipes == ptr_pipes
    if target == "hip":
        return
    assert bp_pipes and bp_pipes[0][0] == 2  # A and B pipelined
    # (the build that copies by cp.async: on sm_90 the copy engine's reads no pointers)
    src = KP.bp_matmul_kernel.source(sig, options=KP.bp_matmul_kernel.options(
        num_warps=4, num_stages=3, made_descriptor_tma=False))
    assert "tc::cp_async<16>" in src
    # the loop carries one offset for the pointers, as the pointer version does
    # (passes.carried_offsets): no element's 64-bit offset (a multiply per copy) is
    # written out again in the loop
    loop = src[src.index("for (int k_"):src.index("tl.store(c_block")]
    assert "a_block_offset1 = a_block_offset1 + " in loop
    assert "a_block_pointers_offset = a_block_pointers_offset + " in loop
    assert "a_block_pointers[v] + a_block_pointers_offset," in loop
    assert "tc::cast<long long>(Sliced" not in loop


def test_column_major_operand_gets_the_pointer_versions_code() -> None:
    """A stored column-major (stride_am == 1): both versions load it along M alike."""
    sig = ("*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:16, "
           "i32:1, i32:16, i32:1, 64, 64, 32")
    assert _memory_and_pipeline(KP.bp_matmul_kernel, sig) == \
        _memory_and_pipeline(KP.ptr_matmul_kernel, sig)


def test_example_matmul_block_ptr_runs() -> None:
    import runpy
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "examples", "matmul_block_ptr.py")
    runpy.run_path(path, run_name="not_main")["main"]()


# --- Triton's errors ------------------------------------------------------------------------

def _kernel(body: str):
    code = ("import tilecc\nimport tilecc.language as tl\n"
            "@tilecc.jit\n"
            "def k(X, Y, M, N):\n"
            "    bp = tl.make_block_ptr(X, (M, N), (N, 1), (0, 0), (16, 16), (1, 0))\n"
            + "".join(f"    {line}\n" for line in body.splitlines()))
    name = f"<block-ptr-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    ns: dict = {}
    exec(compile(code, name, "exec"), ns)
    return ns["k"]


@pytest.mark.parametrize("body,message", [
    ("x = tl.load(bp, mask=tl.arange(0, 16)[:, None] < M)", "cannot be specified for loading block"),
    ("x = tl.load(bp, other=0.0)", "cannot be specified for loading block"),
    ("x = tl.load(bp, boundary_check=(2,))", "is not a dim of a block of rank 2"),
    ("x = tl.load(bp, boundary_check=(0, 0))", "duplicate dims"),
    ("x = tl.load(bp, boundary_check=(0,), padding_option='one')", "padding option 'one'"),
    ("x = tl.load(X + tl.arange(0, 16), boundary_check=(0,))", "only for block pointers"),
    ("x = tl.load(X, padding_option='zero')", "only for block pointers"),
    ("tl.store(X + tl.arange(0, 16), 1.0, boundary_check=(0,))", "only for block pointers"),
    ("tl.store(bp, tl.zeros((16, 16), dtype=tl.float32), mask=M > 0)", "`mask` cannot be"),
    ("tl.store(bp, tl.zeros((16, 8), dtype=tl.float16))", "does not match the block"),
    ("tl.store(bp, tl.zeros((16, 16), dtype=tl.float32))", "differs from the block pointer"),
    ("b2 = tl.make_block_ptr(X, (M, N), (N, 1), (0, 0), (16, 16), (1, 1))", "permutation"),
    ("b2 = tl.make_block_ptr(X, (M,), (N, 1), (0, 0), (16, 16), (1, 0))", "same length"),
    ("b2 = tl.make_block_ptr(X, (M, N), (N, 1), (0, 0), (16, 12), (1, 0))", "powers of 2"),
    ("b2 = tl.make_block_ptr(X + tl.arange(0, 2), (M, N), (N, 1), (0, 0), (16, 16), (1, 0))",
     "must be a pointer"),
    ("b2 = tl.make_block_ptr(X, (M, N), (N, 1), (M.to(tl.int64), 0), (16, 16), (1, 0))",
     "32-bit offsets"),
    ("b2 = tl.make_block_ptr(X, (M, N), (N, 1), (0.5, 0), (16, 16), (1, 0))", "integers"),
    ("b2 = tl.advance(X, (0, 16))", "takes a block pointer"),
    ("b2 = tl.advance(bp, (16,))", "1 offsets for a block pointer of 2 dims"),
    ("for i in range(M):\n"
     "    bp = tl.make_block_ptr(X, (M, N), (N, 1), (i, 0), (16, 16), (1, 0))",
     "may only move it with tl.advance"),
])
def test_block_pointer_misuse_is_a_compilation_error(body, message) -> None:
    k = _kernel(body)
    with pytest.raises(CompilationError) as e:
        k.source("*fp16:16,*fp16:16,i32,i32")
    assert message in str(e.value), str(e.value)
    assert "^" in str(e.value)


def test_nan_padding_of_integers_is_refused() -> None:
    code = "x = tl.load(bp, boundary_check=(0,), padding_option='nan')"
    with pytest.raises(CompilationError, match="integer block pointers"):
        _kernel(code).source("*i32,*i32,i32,i32")


# --- native compiles and the GPU ------------------------------------------------------------

COMPILED = [
    (KP.bp_load_kernel, "*fp32:16,*fp32:16,i32,i32,i32,i32:1,i32,i32,16,32,(0, 1),'nan'"),
    (KP.bp_store_kernel, "*fp16:16,*fp16:16,i32,i32,i32:16,i32:1,i32,i32,32,16,(0, 1)"),
    (KP.bp_row_sum_kernel, "*bf16:16,*fp32:16,i32,i32,i32:16,i32:1,16,64"),
    (KP.bp_while_kernel, "*fp32:16,*fp32:16,i32,128"),
    (KP.bp_matmul_kernel, KP.MATMUL_SIGNATURE.format(bm=128, bn=128, bk=32)),
    (KP.bp_matmul_kernel, KP.MATMUL_SIGNATURE.format(bm=64, bn=64, bk=64)),
    (KP.bp_branch_kernel, "*fp32:16,*fp32:16,i32,i32,256"),
    (KP.bp_helper_kernel, "*fp16:16,*fp32:16,i32,i32,64"),
    (KP.bp_walk_kernel, "*fp32:16,*fp32:16,i32,i32,i32,i32,16,8"),
]


@pytest.mark.parametrize("kernel,signature,target,arch", [
    pytest.param(k, s, t, a, id=f"{k.__name__}-{a}-{i}")
    for i, (k, s) in enumerate(COMPILED) for t, a in TARGETS])
def test_block_pointer_kernels_compile_cleanly(kernel, signature, target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    assert_clean_compile(kernel, signature, target, arch)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(512, 512, 512), (300, 260, 200), (129, 67, 45)])
def test_block_pointer_matmul_on_gpu_matches_the_pointer_version(m, n, k) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    a = torch.randn((m, k), dtype=torch.float16, device="cuda")
    b = torch.randn((k, n), dtype=torch.float16, device="cuda")
    outs = []
    for kernel in (KP.bp_matmul_kernel, KP.ptr_matmul_kernel):
        c = torch.empty((m, n), dtype=torch.float16, device="cuda")
        kernel[(tilecc.cdiv(m, 64), tilecc.cdiv(n, 64))](
            a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride(),
            BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32)
        outs.append(c)
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)
    torch.testing.assert_close(outs[0].float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)


@pytest.mark.gpu
def test_block_pointer_loads_and_stores_on_gpu_match_the_interpreter() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for om, on, check in [(-3, 5, (0, 1)), (30, -7, (0, 1)), (0, 0, ()), (10, 20, (1,))]:
        m, n = 40, 33
        flat, (sm, sn), _ = _matrix(rng, m, n, np.float32, False)
        if not (_fits(om, 16, m, 0 in check) and _fits(on, 8, n, 1 in check)):
            continue
        want = np.zeros((16, 8), np.float32)
        KP.bp_load_kernel.interpret[(1,)](flat, want, m, n, sm, sn, om, on, BM=16, BN=8,
                                          CHECK=check, PAD="zero")
        y = torch.zeros((16, 8), device="cuda")
        KP.bp_load_kernel[(1,)](torch.from_numpy(flat).cuda(), y, m, n, sm, sn, om, on,
                                BM=16, BN=8, CHECK=check, PAD="zero")
        np.testing.assert_array_equal(y.cpu().numpy(), want)
        x = rng.standard_normal((16, 8)).astype(np.float32)
        want = np.full(m * n, -1, np.float32)
        KP.bp_store_kernel.interpret[(1,)](x, want, m, n, sm, sn, om, on, BM=16, BN=8,
                                           CHECK=(0, 1))
        y = torch.full((m * n,), -1.0, device="cuda")
        KP.bp_store_kernel[(1,)](torch.from_numpy(x).cuda(), y, m, n, sm, sn, om, on,
                                 BM=16, BN=8, CHECK=(0, 1))
        np.testing.assert_array_equal(y.cpu().numpy(), want)


def test_block_pointers_through_helpers() -> None:
    """Helpers take, advance in their own loops, and return block pointers."""
    x = np.arange(37 * 50, dtype=np.float32).reshape(37, 50) % 7
    out = np.zeros(37, np.float32)
    KP.bp_helper_kernel.interpret[(3,)](x, out, 37, 50, BN=16)
    np.testing.assert_array_equal(out, x.sum(axis=1))


@pytest.mark.parametrize("skip", [0, 2, 9])
def test_block_pointer_moved_in_a_runtime_if(skip) -> None:
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(1, np.float32)
    KP.bp_branch_kernel.interpret[(1,)](x, out, 100, skip, BN=16)
    want = sum(x[i * 16:(i + 1) * 16].sum() for i in range(7) if i != skip)
    assert out[0] == want


def test_block_pointers_of_different_tensors_in_an_if_are_an_error() -> None:
    k = _kernel("b2 = tl.make_block_ptr(Y, (M, N), (N, 1), (0, 0), (16, 16), (1, 0))\n"
                "if M > 3:\n"
                "    bp = b2\n"
                "x = tl.load(bp)\n"
                "tl.store(Y + tl.arange(0, 16)[:, None] * N + tl.arange(0, 16)[None, :], x)")
    with pytest.raises(CompilationError, match="must point into the same tensor"):
        k.source("*fp16:16,*fp16:16,i32,i32")


@tilecc.jit
def _bool_block_kernel(M, OUT, n, BLOCK: tl.constexpr):
    m_block = tl.make_block_ptr(M, (n,), (1,), (0,), (BLOCK,), (0,))
    m = tl.load(m_block, boundary_check=(0,), padding_option="zero")
    tl.static_assert(m.dtype == tl.int8)  # as Triton: a bool tensor's bytes, as int8
    tl.store(OUT + tl.arange(0, BLOCK), m.to(tl.int32))


def test_block_pointer_to_bools_reads_int8_bytes() -> None:
    mask = np.array([True, False, True, True, False], np.bool_)
    out = np.full(8, -1, np.int32)
    _bool_block_kernel.interpret[(1,)](mask, out, 5, BLOCK=8)
    np.testing.assert_array_equal(out, [1, 0, 1, 1, 0, 0, 0, 0])
    assert "reinterpret_cast<const signed char*>(M)" in _bool_block_kernel.source("*i1,*i32,i32,8")


@SETTINGS
@given(m=st.integers(-3, 40), n=st.integers(1, 40), om=st.integers(-20, 40),
       on=st.integers(-20, 40), wide=st.booleans(), seed=st.integers(0, 2**16))
def test_boundary_check_of_any_offset_and_shape(m, n, om, on, wide, seed) -> None:
    """The bounds check, one unsigned comparison per dim, keeps exactly 0 <= offset + i <
    shape: negative and past-the-end offsets, an empty or negative shape (nothing inside),
    shapes of 32 and of 64 bits (NumPy int64 scalars are 64-bit parameters)."""
    bm, bn = 8, 16
    rng = np.random.default_rng(seed)
    rows = max(m, 1)
    x = rng.integers(-50, 50, (rows, n)).astype(np.float32)
    y = np.full((bm, bn), 77, np.float32)
    shape = (np.int64(m), np.int64(n)) if wide else (m, n)
    KP.bp_load_kernel.interpret[(1,)](x.ravel().copy(), y, *shape, n, 1, om, on, BM=bm, BN=bn,
                                      CHECK=(0, 1), PAD="zero")
    r, c, ok = _inside(om, on, bm, bn, m, n, (0, 1))
    np.testing.assert_array_equal(y[ok], x[r[ok], c[ok]])
    np.testing.assert_array_equal(y[~ok], 0)


@pytest.mark.parametrize("wide", [False, True])
def test_boundary_check_is_one_unsigned_comparison_per_dim(wide) -> None:
    """In the matmul's K loop each checked dim costs one comparison of (offset + i) read
    as unsigned against max(shape, 0): 32-bit where the shape is a 32-bit argument."""
    sig = KP.MATMUL_SIGNATURE.format(bm=128, bn=128, bk=32)
    if wide:
        sig = sig.replace("i32:16, i32:16, i32:16, i32:16, i32:1", "i64:16, i64:16, i64:16, "
                          "i32:16, i32:1", 1)
    # (the build that copies by cp.async: the copy engine bounds its own copies)
    src = KP.bp_matmul_kernel.source(sig, options=KP.bp_matmul_kernel.options(
        num_warps=4, num_stages=3, arch="sm_90a", made_descriptor_tma=False))
    at = KP.bp_matmul_kernel.fn.__code__.co_firstlineno  # (its decorator's line)
    loop = src[src.index(f"L{at + 12}: for k"):src.index(f"L{at + 18}:")]
    width = "unsigned long long" if wide else "unsigned int"
    assert f"tc::cast<{width}>(tc::max(M, " in loop and f"tc::cast<{width}>(tc::max(K, " in loop
    assert ">=" not in loop


@tilecc.jit
def _stored_as_the_pointer_says(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # chunk-parallel libraries' spelling: `b.to(p.dtype.element_ty)` before a store
    p_x = tl.make_block_ptr(x_ptr, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    p_y = tl.make_block_ptr(y_ptr, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    b = tl.load(p_x, boundary_check=(0,)).to(tl.float32) * 3.0
    tl.static_assert(p_y.dtype.element_ty.shape == (BLOCK,))
    tl.store(p_y, b.to(p_y.dtype.element_ty), boundary_check=(0,))
    tl.store(p_y, b.to(p_y.type.element_ty), boundary_check=(0,))


def test_block_pointer_dtype_names_a_block_of_its_elements() -> None:
    """As in Triton: `p.dtype` (and `p.type`) of a block pointer is a pointer to a block of
    its elements, and `.to()` of a block type converts to its element type.  Before,
    `p.dtype` was not supported in kernels."""
    x = np.arange(100, dtype=np.float16)
    y = np.zeros_like(x)
    _stored_as_the_pointer_says.interpret[(2,)](x, y, 100, BLOCK=64)
    np.testing.assert_array_equal(y, x * 3)
    src = _stored_as_the_pointer_says.source("*fp16:16,*fp16:16,i32,64")
    assert "tc::cast<tc::half>(" in src


def test_block_pointer_attribute_unknown_is_an_attribute_error() -> None:
    @tilecc.jit
    def strides_of(x_ptr, n, BLOCK: tl.constexpr):
        p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
        tl.store(x_ptr + tl.arange(0, BLOCK), p.strides)

    with pytest.raises(CompilationError, match="a block pointer has no attribute `strides`"):
        strides_of.source("*fp32,i32,16")
