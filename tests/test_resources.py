"""Shared memory a program needs, checked against the target before the native compiler
runs: `tilecc.OutOfResources` (Triton's message), and the autotuner skipping such configs."""

import logging
import pickle
import re

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.runtime.autotune import Config
from tilecc.runtime.jit import JITFunction
from tilecc.transpiler.target import CUDA, HIP, shared_memory_limit

try:
    import kernels_dot as KD
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests import kernels_dot as KD
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_compile_kernels import assert_clean_compile


def _loop_sig(bm, bn, bk, dt="fp16"):
    # N a multiple of 16: both operands' masks are uniform over a vector, so both pipeline
    return (f"*{dt}:16,*{dt}:16,*fp32:16,i32,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,"
            f"{bm},{bn},{bk},0")


def test_limits_per_architecture():
    assert shared_memory_limit(CUDA, "sm_80") == 166912  # 163 KiB
    assert shared_memory_limit(CUDA, "sm_86") == shared_memory_limit(CUDA, "sm_89") == 101376
    assert shared_memory_limit(CUDA, "sm_90") == shared_memory_limit(CUDA, "sm_90a") == 232448
    assert shared_memory_limit(HIP, "gfx90a") == shared_memory_limit(HIP, "gfx942") == 65536


@pytest.mark.parametrize("arch, blocks, stages, required, limit", [
    # A 128 x 64 and B 64 x 256 fp16 in 4 stages: 64 KiB + 128 KiB, over sm_80's 163 KiB
    ("sm_80", (128, 256, 64), 4, 196608, 166912),
    ("sm_86", (128, 128, 64), 4, 131072, 101376),
    # (and on sm_90, where TMA copies them, an 8-byte mbarrier per stage)
    ("sm_90", (256, 256, 64), 4, 262144 + 32, 232448),
])
def test_oversized_dot_config_is_out_of_resources(arch, blocks, stages, required, limit):
    """The need is the rendered kernel's: each pipelined operand's stages, listed by line;
    it is compared with the architecture's limit before NVRTC runs (sm_80 compiled such a
    kernel, which then failed at launch; sm_90 raised a plain CompilationError)."""
    with pytest.raises(tilecc.OutOfResources) as info:
        KD.dot_loop_kernel.compile(_loop_sig(*blocks), arch=arch, num_warps=8,
                                   num_stages=stages)
    e = info.value
    assert (e.required, e.limit, e.name) == (required, limit, "shared memory")
    assert isinstance(e, tilecc.CompilationError)
    again = pickle.loads(pickle.dumps(e))
    assert (again.required, again.limit, str(again)) == (required, limit, str(e))
    lines = str(e).splitlines()
    assert lines[0] == (f"out of resource: shared memory, Required: {required}, Hardware "
                        f"limit: {limit}. Reducing block sizes or `num_stages` may help.")
    assert f"dot_loop_kernel (num_warps=8, num_stages={stages}) needs {required} bytes" in lines[1]
    assert f"{arch} allows {limit}" in lines[1]
    bm, bn, bk = blocks
    assert any(re.search(rf"L\d+: a of tl.dot, {bm} x {bk} fp16 in {stages} pipeline stages: "
                         rf"{bm * bk * 2 * stages} bytes", x) for x in lines)
    assert any(re.search(rf"L\d+: b of tl.dot, {bk} x {bn} fp16 in {stages} pipeline stages: "
                         rf"{bk * bn * 2 * stages} bytes", x) for x in lines)


def test_same_config_fits_where_the_architecture_has_more():
    require_cuda_compiler()
    sig = _loop_sig(128, 256, 64)
    with pytest.raises(tilecc.OutOfResources):
        KD.dot_loop_kernel.compile(sig, arch="sm_80", num_warps=8, num_stages=4)
    binary = KD.dot_loop_kernel.compile(sig, arch="sm_90", num_warps=8, num_stages=4)
    assert binary.shared_bytes == 196608 + 4 * 8  # (the TMA copies' mbarriers)
    # fewer stages fit on sm_80 (3 x 48 KiB)
    assert KD.dot_loop_kernel.compile(sig, arch="sm_80", num_warps=8,
                                      num_stages=3).shared_bytes == 147456


def test_source_for_an_architecture_checks_too():
    with pytest.raises(tilecc.OutOfResources, match="Required: 262176, Hardware limit: 232448"):
        KD.dot_loop_kernel.source(_loop_sig(256, 256, 64), num_warps=8, num_stages=4)


@tilecc.jit
def dot_then_sum(A, B, C, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # pipelined tl.dot (dynamic shared memory), then a column sum across warps (the pool)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = A + rm[:, None] * K + rk[None, :]
    b_ptrs = B + rk[:, None] * BN + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK
        b_ptrs += BK * BN
    tl.store(C + rn, tl.sum(acc, axis=0))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_static_shared_memory_is_counted_as_ptxas_counts_it(arch):
    """A small pool beside dynamic shared memory: ptxas pads the static arrays to the
    dynamic array's 1024-byte alignment, and so does the count the limit is checked on."""
    sig, meta = "*fp16:16,*fp16:16,*fp32:16,i32:16", dict(BM=64, BN=64, BK=32)
    rendered = dot_then_sum.build(dot_then_sum._specs(sig, meta), "cuda", 4, arch=arch).products
    # A and B in 3 stages (on sm_90 copied by TMA: and a landing mbarrier per stage)
    assert rendered.shared_bytes == 3 * (64 * 32 + 32 * 64) * 2 + (24 if arch == "sm_90" else 0)
    require_cuda_compiler()
    log = dot_then_sum.compile(sig, arch=arch, **meta).log
    assert re.findall(r"(\d+) bytes smem", log) == [str(rendered.static_shared_bytes)]


@tilecc.jit
def transpose_kernel(X, Y, N: tl.constexpr):
    # the transpose goes through the shared-memory pool: N * N * 4 bytes
    offs = tl.arange(0, N)
    x = tl.load(X + offs[:, None] * N + offs[None, :])
    tl.store(Y + offs[:, None] * N + offs[None, :], tl.trans(x) + 1.0)


def test_pool_past_48_kib_is_dynamic_on_cuda():
    """CUDA's static `__shared__` arrays stop at 48 KiB (ptxas: "uses too much shared
    data"): a larger pool lives in dynamic shared memory, given at launch."""
    small = transpose_kernel.source("*fp32:16,*fp32:16", N=64)
    pool = re.search(r"__shared__ unsigned char smem\[(\d+)\]", small)  # (rows perhaps padded)
    assert pool and 64 * 64 * 4 <= int(pool[1]) <= 48 * 1024 and "dynamic_smem" not in small
    src = transpose_kernel.source("*fp32:16,*fp32:16", N=128, arch="sm_80")
    assert "__shared__ unsigned char smem[" not in src
    assert "unsigned char* const smem = dynamic_smem;" in src
    assert "extern __shared__ __align__(1024) unsigned char dynamic_smem[];" in src
    require_cuda_compiler()
    binary = transpose_kernel.compile("*fp32:16,*fp32:16", N=128, arch="sm_80")
    assert binary.shared_bytes >= 128 * 128 * 4
    assert "bytes smem" not in binary.log  # ptxas: no static shared memory left
    with pytest.raises(tilecc.OutOfResources) as info:  # 256 KiB: over any GPU's limit
        transpose_kernel.compile("*fp32:16,*fp32:16", N=256, arch="sm_90")
    assert info.value.required >= 256 * 256 * 4 and info.value.limit == 232448
    assert "the pool for reductions, scans, layout conversions" in str(info.value)


def test_pool_past_48_kib_follows_the_dot_stages():
    """B, whose rows' alignment is unknown (stride_bk not a multiple of 16), is staged from
    registers through the pool (64 x 256 fp16 x 2: 64 KiB), A streams into two cp.async
    stages (32 KiB): ptxas rejected the 64 KiB static pool ("uses too much shared data");
    now it follows the stages in dynamic shared memory."""
    sig = ("*fp16:16,*fp16:16,*fp32:16,i32,i32,i32:16,i32:16,i32:1,i32,i32:1,i32:16,"
           "64,256,128,0")
    for arch in ("sm_80", "sm_90"):
        src = KD.dot_loop_kernel.source(sig, arch=arch, num_warps=8, num_stages=2)
        assert "unsigned char* const smem = dynamic_smem + 32768;" in src
    require_cuda_compiler()
    binary = KD.dot_loop_kernel.compile(sig, arch="sm_80", num_warps=8, num_stages=2)
    assert binary.shared_bytes == 32768 + 65536 and "bytes smem" not in binary.log


def test_hip_lds_limit():
    with pytest.raises(tilecc.OutOfResources) as info:
        transpose_kernel.source("*fp32:16,*fp32:16", N=256, target="hip")
    assert info.value.limit == 65536 and info.value.required >= 256 * 256 * 4
    # no 48 KiB bound on HIP's static arrays: 64 KiB of LDS are a static pool there
    assert "__shared__ unsigned char smem[65536]" in \
        transpose_kernel.source("*fp32:16,*fp32:16", N=128, target="hip")


@tilecc.jit
def whole_block_reductions(X, F, I, BM: tl.constexpr, BN: tl.constexpr):
    # axis=None: every element of a 2-D block folded into one (keep_dims: shape (1, 1))
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    x = tl.load(X + rows * BN + cols)
    tl.store(F, tl.sum(x))
    tl.store(F + 1, tl.max(x, axis=None))
    lowest = tl.min(x, keep_dims=True)
    tl.static_assert(lowest.shape == (1, 1))
    tl.store(F + 2 + rows * 0 + cols * 0, lowest, mask=(rows == 0) & (cols == 0))
    tl.store(I, tl.argmax(x, axis=None))  # the row-major position (Triton refuses axis=None)
    tl.store(I + 1, tl.xor_sum(x.to(tl.int32, bitcast=True)))


@pytest.mark.parametrize("target, arch", [("cuda", "sm_80"), ("hip", "gfx90a")])
def test_whole_block_reductions_need_only_the_partials(target, arch):
    """tl.sum(x) of a 128 x 256 fp32 block asked for the whole block in shared memory (128
    KiB, past HIP's 64 KiB; 256 KiB for 256 x 256, past any GPU's): the block went one-
    dimensional through shared memory first.  Reduced axis by axis, only each step's
    cross-warp partials go there, as with an axis given."""
    sig, meta = "*fp32:16,*fp32:16,*i32:16", dict(BM=128, BN=256)
    rendered = whole_block_reductions.build(whole_block_reductions._specs(sig, meta), target,
                                            16, arch=arch).products
    assert rendered.static_shared_bytes + rendered.shared_bytes <= 4096
    require = require_cuda_compiler if target == "cuda" else require_hip_compiler
    require()  # the same steps on a smaller block, for a quicker compile
    assert_clean_compile(whole_block_reductions, sig, target, arch, num_warps=4, BM=16, BN=64)


def test_whole_block_reductions_fold_every_element():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    x[5, 7] = x[9, 2] = 9.0  # a tie: the first in row-major order wins
    f, i = np.zeros(3, np.float32), np.zeros(2, np.int32)
    whole_block_reductions.interpret[(1,)](x, f, i, BM=16, BN=32)
    np.testing.assert_allclose(f, [x.sum(), x.max(), x.min()], rtol=1e-5)
    assert i[0] == 5 * 32 + 7
    assert i[1] == np.bitwise_xor.reduce(x.view(np.int32).ravel())


# --- the autotuner skips configs that need too much ------------------------------------------

def _checked_for(arch):
    """A kernel's interpreted run that first builds the kernel for `arch`, as a GPU launch
    does (the interpreter itself has no device whose resources could run out)."""
    plain = JITFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        values, options = self.bind(args, dict(kwargs))
        specs, _ = self.specs_for(values)
        self.build(specs, "cuda", options.get("num_warps", 4),
                   num_stages=options.get("num_stages"), arch=arch)
        return plain(self, *args, grid=grid, warmup=warmup, **kwargs)
    return run


def _dot_args(n=32):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    c = np.zeros((n, n), np.float32)
    return a, b, c, (n, n, n, n, 1, n, 1, n)


def test_autotuner_skips_out_of_resources_with_a_note(monkeypatch, caplog, capsys, tmp_path):
    monkeypatch.setenv("TILECC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILECC_PRINT_AUTOTUNING", "1")
    monkeypatch.setattr(JITFunction, "run", _checked_for("sm_80"))
    big = Config({"BM": 128, "BN": 256, "BK": 64}, num_warps=8, num_stages=4)
    small = Config({"BM": 32, "BN": 32, "BK": 32}, num_warps=4, num_stages=2)
    k = tilecc.autotune(configs=[big, small], key=["M"], do_bench=lambda f: (f(), 1.0)[1])(
        KD.dot_loop_kernel)
    a, b, c, sizes = _dot_args()
    with caplog.at_level(logging.WARNING, logger="tilecc.autotune"):
        k.interpret[lambda m: (tilecc.cdiv(32, m["BM"]), tilecc.cdiv(32, m["BN"]))](
            a, b, c, *sizes, IEEE=False)
    assert k.best_config == small and k.configs_timings[big] == float("inf")
    assert re.search(r"skipping config BM: 128, BN: 256, BK: 64, num_warps: 8, "
                     r"(num_ctas: 1, )?num_stages: 4", caplog.text)
    printed = capsys.readouterr().err  # TILECC_PRINT_AUTOTUNING: the reason by the config
    assert re.search(r"inf ms  BM: 128, .*num_stages: 4(, maxnreg: None)?  \(skipped: "
                     r"OutOfResources: out of "
                     r"resource: shared memory, Required: 196608", printed)
    assert ("OutOfResources: out of resource: shared memory, Required: 196608, "
            "Hardware limit: 166912") in caplog.text
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-2,
                               atol=1e-2)


def test_autotuner_with_every_config_out_of_resources(monkeypatch, tmp_path):
    monkeypatch.setenv("TILECC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(JITFunction, "run", _checked_for("sm_86"))
    configs = [Config({"BM": 128, "BN": 128, "BK": 64}, num_warps=8, num_stages=4),
               Config({"BM": 128, "BN": 256, "BK": 64}, num_warps=8, num_stages=3)]
    k = tilecc.autotune(configs=configs, key=["M"], do_bench=lambda f: (f(), 1.0)[1])(
        KD.dot_loop_kernel)
    a, b, c, sizes = _dot_args()
    with pytest.raises(RuntimeError, match="every autotune configuration failed") as info:
        k.interpret[lambda m: (1, 1)](a, b, c, *sizes, IEEE=False)
    text = str(info.value)
    assert "Required: 131072, Hardware limit: 101376" in text
    assert "Required: 147456, Hardware limit: 101376" in text


def test_cli_compile_reports_out_of_resources(capsys, tmp_path):
    from tilecc.cli import main

    out = tmp_path / "k.cubin"
    rc = main(["compile", f"{KD.__file__}:dot_loop_kernel", "-s", _loop_sig(256, 256, 64),
               "--arch", "sm_80", "--num-warps", "8", "-o", str(out)])
    err = capsys.readouterr().err  # 3 stages of 64 KiB: 192 KiB
    assert rc == 1 and not out.exists()
    assert "tilecc: error: out of resource: shared memory, Required: 196608, Hardware limit: " \
        "166912" in err


@pytest.mark.gpu
def test_whole_block_reductions_on_gpu():
    torch = pytest.importorskip("torch")
    x = torch.randn(128, 256, device="cuda")
    x[5, 7] = x[9, 2] = 9.0
    f = torch.zeros(3, device="cuda")
    i = torch.zeros(2, dtype=torch.int32, device="cuda")
    whole_block_reductions[(1,)](x, f, i, BM=128, BN=256, num_warps=16)
    torch.testing.assert_close(f, torch.stack([x.sum(), x.max(), x.min()]), rtol=1e-5,
                               atol=1e-3)
    bits = x.view(torch.int32).flatten().cpu().numpy()
    assert i.tolist() == [5 * 256 + 7, int(np.bitwise_xor.reduce(bits))]


@tilecc.jit
def permuted_sums(In, Out, D0: tl.constexpr, D1: tl.constexpr, D2: tl.constexpr,
                  D3: tl.constexpr, D4: tl.constexpr, PERM: tl.constexpr, AXES: tl.constexpr):
    # two block-sized reorders one after the other (a reshape, a permute), then three sums
    idx = tl.arange(0, D0 * D1 * D2 * D3 * D4).reshape(D0, D1, D2, D3, D4)
    vals = tl.permute(tl.load(In + idx), PERM)
    r = tl.sum(tl.sum(tl.sum(vals, AXES[0]), AXES[1]), AXES[2])
    tl.store(Out + tl.arange(0, r.shape[0] * r.shape[1]).reshape(r.shape), r)


CHAINED = [((4, 32, 32, 4, 2), (2, 1, 0, 3, 4), (3, 1, 0)),
           ((8, 2, 32, 4, 16), (4, 0, 1, 3, 2), (0, 2, 0))]


def _permuted_sums_meta(shape, perm, axes):
    return dict(zip(("D0", "D1", "D2", "D3", "D4"), shape), PERM=perm, AXES=axes)


@tilecc.jit
def two_permutes(X, Y, Z, N: tl.constexpr):
    # two block-sized reorders one after the other, each through the pool (each result
    # is stored, in the layout of its stores: a permute that no access places moves nothing)
    i = tl.arange(0, N)
    offs = i[:, None, None] * N * N + i[None, :, None] * N + i[None, None, :]
    y = tl.permute(tl.load(X + offs), (1, 0, 2))
    tl.store(Y + offs, y)
    tl.store(Z + offs, tl.permute(y, (0, 2, 1)))


def test_consecutive_block_sized_steps_share_the_pool():
    """Two consecutive steps that each stage a whole 128 KiB block took a half of the pool
    each (256 KiB, past sm_90's 227 KiB): where two halves do not fit, the second step
    waits for the first and reuses its half."""
    rendered = two_permutes.build(two_permutes._specs("*i32, *i32, *i32", dict(N=32)), "cuda",
                                  4, arch="sm_90").products
    # one step's block (its rows perhaps padded: render_blocks._padded_rows), not two
    used = rendered.static_shared_bytes + rendered.shared_bytes
    assert 32 ** 3 * 4 <= used < 2 * 32 ** 3 * 4
    assert "may still be read by an earlier step" in rendered.source
    # where both halves fit, consecutive steps still alternate (no barrier between them)
    small = two_permutes.source("*i32, *i32, *i32", arch="sm_90", N=8)
    assert "reinterpret_cast<int*>(smem + " in small and "may still be read" not in small
    x = np.arange(8 ** 3, dtype=np.int32).reshape(8, 8, 8)
    y, z = np.zeros_like(x), np.zeros_like(x)
    two_permutes.interpret[(1,)](x, y, z, N=8)
    np.testing.assert_array_equal(y, x.transpose(1, 0, 2))
    np.testing.assert_array_equal(z, x.transpose(1, 0, 2).transpose(0, 2, 1))


@pytest.mark.parametrize("shape,perm,axes", CHAINED)
def test_reshaped_arange_is_index_arithmetic(shape, perm, axes):
    """tl.arange(0, n).reshape(...) is each element's row-major position: recomputed where
    it is used, not moved through shared memory; and the permute of the loaded block,
    read by sums alone, keeps each element in its thread (passes.layouts.view_encoding):
    only the sums' small partials go through shared memory."""
    meta = _permuted_sums_meta(shape, perm, axes)
    built = permuted_sums.build(permuted_sums._specs("*i32, *i32", meta), "cuda", 4,
                                arch="sm_90")
    assert not [op for op in built.kernel.walk() if op.kind == "reshape"]
    rendered = built.products
    block, used = int(np.prod(shape)) * 4, rendered.static_shared_bytes + rendered.shared_bytes
    assert used < block // 8
    assert ": in registers (every thread keeps its elements)" in rendered.source


@pytest.mark.parametrize("shape,perm,axes", CHAINED)
def test_chained_sums_of_a_permuted_block(shape, perm, axes):
    x = np.random.default_rng(5).integers(0, 1000, shape).astype(np.int32)
    ref = np.transpose(x, perm).sum(axis=axes[0]).sum(axis=axes[1]).sum(axis=axes[2])
    out = np.zeros(ref.shape, np.int32)
    permuted_sums.interpret[(1,)](x, out, **_permuted_sums_meta(shape, perm, axes))
    np.testing.assert_array_equal(out, ref)


@pytest.mark.gpu
@pytest.mark.parametrize("shape,perm,axes", CHAINED)
def test_chained_sums_of_a_permuted_block_on_gpu(shape, perm, axes):
    torch = pytest.importorskip("torch")
    x = torch.randint(0, 1000, shape, device="cuda", dtype=torch.int32)
    ref = x.permute(perm).sum(axes[0]).sum(axes[1]).sum(axes[2]).to(torch.int32)
    out = torch.zeros_like(ref)
    permuted_sums[(1,)](x, out, **_permuted_sums_meta(shape, perm, axes))
    assert torch.equal(out, ref)


@pytest.mark.gpu
def test_two_block_sized_permutes_on_gpu():
    torch = pytest.importorskip("torch")
    x = torch.randint(0, 1 << 20, (32, 32, 32), device="cuda", dtype=torch.int32)
    y, z = torch.zeros_like(x), torch.zeros_like(x)
    two_permutes[(1,)](x, y, z, N=32)
    assert torch.equal(y, x.permute(1, 0, 2).contiguous())
    assert torch.equal(z, x.permute(1, 0, 2).permute(0, 2, 1).contiguous())
