"""The kernels of benchmarks/untuned_kernels.py (written for Triton in the styles of LLM
kernel libraries) on the interpreter at tiny shapes, against their NumPy references; and
the generated code of the row norms compiled by NVRTC: several rows per program over 128
contiguous columns load and store 16-byte vectors and reduce each row inside a warp."""

from __future__ import annotations

import copy
import os
import re
import sys

import numpy as np
import pytest

import tilecc.testing as tt

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import untuned_kernels as U  # noqa: E402
import untuned_kernels_more as UM  # noqa: E402

CASES = U.CASES + UM.CASES


class NumpyMaker:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def randn(self, shape, dtype):
        return self.rng.standard_normal(shape).astype(dtype)

    def empty(self, shape, dtype):
        return np.full(shape, -1 if np.dtype(dtype).kind in "iu" else np.nan, dtype=dtype)

    def randbits(self, shape):
        return self.rng.integers(0, 2 ** 31, shape, dtype=np.int32)

    def from_numpy(self, a):
        return a

    def zeros(self, shape, dtype):
        return np.zeros(shape, dtype=dtype)

    def randint(self, high, shape):
        return self.rng.integers(0, high, shape, dtype=np.int64)

    def sort_desc(self, x):
        return -np.sort(-x, axis=-1)

    def logsigmoid(self, shape, dtype):
        return -np.log1p(np.exp(-self.rng.standard_normal(shape))).astype(dtype)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name.replace(" ", "_"))
def test_untuned_kernel_matches_numpy_on_the_interpreter(case) -> None:
    args = case.inputs(NumpyMaker(0), "float32", big=False)
    expected = case.reference(copy.deepcopy(args))
    case.launch(case.kernel.interpret, args)
    for name in case.outputs:
        tt.assert_close(args[name], expected[name].astype(np.float32),
                        tt.Tolerance(*case.tolerance(name)),
                        name)


# --- what the compiler makes of them (no GPU: generated code, NVRTC compiles) -------------
from conftest_compilers import require_cuda_compiler, require_hip_compiler  # noqa: E402
from test_compile_kernels import TARGETS, assert_clean_compile  # noqa: E402

import tilecc  # noqa: E402
import tilecc.language as tl  # noqa: E402
from tilecc.transpiler.passes.axis_info import info  # noqa: E402

TAYLOR_SIG = "*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32,fp32,16,64,64,32"
GROUP_NORM_SIG = "*bf16:16,*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,fp32,64,4096"


def dots(ir):
    return [op for op in ir.walk() if op.kind == "dot"]


def test_multiply_add_dot_accumulates_in_register_tiles() -> None:
    """A dot with no matrix unit (fp32, allow_tf32=False) keeps each thread's share of the
    accumulator as a tile of rows x columns: each A and B element it reads from shared
    memory feeds several multiply-adds, and the row sum of the scores is four registers
    and three shuffles, not one register and five shuffles per row."""
    ir = U.taylor_linear_attn.ir(TAYLOR_SIG, num_warps=4)
    for op in dots(ir):
        assert not op.attrs["plan"].matrix
        spt = op.result.layout.enc.spt
        assert spt[0] >= 2 and spt[1] >= 4, spt
    src = U.taylor_linear_attn.source(TAYLOR_SIG, num_warps=4)
    assert "across the 8 lanes that hold the axis" in src
    assert "across the 32 lanes" not in src


def test_multiply_add_dot_compiles_without_spills() -> None:
    require_cuda_compiler()
    binary = U.taylor_linear_attn.compile(TAYLOR_SIG, arch="sm_90a", num_warps=4)
    assert "spill stores" not in binary.log or " 0 bytes spill stores" in binary.log


@tilecc.jit
def _quotient_kernel(x_ptr, hw, start, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs // hw)


@pytest.mark.parametrize("sig, runs", [("*i32:16,i32:16,i32:16,64", 16),
                                       ("*i32:16,i32,i32:16,64", 1),
                                       ("*i32:16,i32:16,i32,64", 1)])
def test_quotient_of_contiguous_offsets_is_constant_over_aligned_runs(sig, runs) -> None:
    """(start + arange(B)) // hw holds still over runs of gcd(16, divisors of start and hw)
    elements; a divisor unknown on either side leaves runs of one."""
    ir = _quotient_kernel.ir(sig)
    (div,) = [op for op in ir.walk() if op.kind == "binary" and op.attrs["fn"] == "div"]
    assert info(div.result).constancy == (runs,)


def test_quotient_runs_rule_holds_on_values() -> None:
    """The rule's claim checked by brute force: every run it names has one quotient."""
    from tilecc.transpiler.passes.axis_info import AxisInfo, _quotient_runs

    for run_len in (4, 8, 16):
        for start_div in (1, 2, 4, 8, 16):
            for hw in range(1, 70):
                hw_div = hw & -hw
                (claim,) = _quotient_runs(AxisInfo((run_len,), (start_div,), (1,)),
                                          AxisInfo((1,), (hw_div,), (1 << 30,)), (1,))
                for start in range(0, 200, start_div):
                    q = (start + np.arange(run_len)) // hw
                    for i in range(0, run_len, claim):
                        assert len(set(q[i:i + claim])) == 1, (run_len, start, hw, claim)
                    neg = (-start - run_len + np.arange(run_len)) // hw  # floor, below 0
                    if (start + run_len) % start_div == 0:
                        for i in range(0, run_len, claim):
                            assert len(set(neg[i:i + claim])) == 1


def test_masked_gathers_take_their_address_outside_the_condition() -> None:
    """Group norm's `w[g * cpg + offs // HW]` under a mask: the address is computed outside
    the masked read (tc::load1_if), so that no division sits under a per-element branch."""
    src = U.group_norm_fwd.source(GROUP_NORM_SIG, num_warps=8)
    statements = " ".join(src.split()).split(";")  # a statement may span lines
    (w_load,) = [st for st in statements if "w_ptr + (g * cpg" in st]
    assert "tc::load1_if(" in w_load and "? w_ptr[" not in src


@tilecc.jit
def _row_sums_in_a_loop(P, OUT, T, S: tl.constexpr):
    rows = tl.arange(0, S)[:, None]
    cols = tl.arange(0, S)[None, :]
    total = tl.zeros((S, S), tl.int32)
    for t in range(T):
        total += tl.load(P + rows) + t  # the same along each row
    tl.store(OUT + rows * S + cols, total)


def test_a_value_updated_in_place_reads_each_register_at_its_own_index() -> None:
    """`total += row_value` in a loop is constant along its rows, but its registers are
    updated in place: each must be read at its own index, not at its run's first one
    (which the same statement has already overwritten: wrong sums on the GPU)."""
    src = _row_sums_in_a_loop.source("*i32:16, *i32:16, i32, 16", num_warps=1)
    flat = " ".join(src.split("#include")[1].split())
    for dest, expr in re.findall(r"(\w+)\[r\] = ([^;]*);", flat):
        assert re.findall(rf"\b{dest}\[([^\]]*)\]", expr) in ([], ["r"]), (dest, expr)


def test_gathered_channel_parameters_compile() -> None:
    require_cuda_compiler()
    binary = U.group_norm_fwd.compile(GROUP_NORM_SIG, arch="sm_90a", num_warps=8)
    assert binary.data


@tilecc.jit
def _bf16_arith_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs).to(tl.bfloat16, bitcast=True)
    y = tl.load(y_ptr + offs).to(tl.bfloat16, bitcast=True)
    tl.store(out_ptr + offs, (x + y).to(tl.int16, bitcast=True))
    tl.store(out_ptr + N + offs, (x - y).to(tl.int16, bitcast=True))
    tl.store(out_ptr + 2 * N + offs, (x * y).to(tl.int16, bitcast=True))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_bf16_arithmetic_compiles_for_each_arch(arch) -> None:
    """bf16 + - * (computed through float, rounded once to bf16)."""
    require_cuda_compiler()
    assert U.rope_fwd.compile("*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,32,64", arch=arch).data
    assert _bf16_arith_kernel.compile("*i16:16,*i16:16,*i16:16,1024", arch=arch).data


def test_gated_activations_keep_two_programs_an_sm() -> None:
    """SwiGLU and GELU gates at 32 warps (`(a * sigmoid(a)).to(b.dtype) * b`): the
    conversion and the product two elements a time in one loop, 32 registers a thread, so
    two programs of 1024 threads an SM.  The conversions in a loop of their own before the
    products spilled at 32 registers, and the build without the request took 35: one
    program an SM."""
    require_cuda_compiler()
    sig = "*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,16384"
    for kernel in (U.swiglu_fwd, U.geglu_tanh_fwd):
        src = kernel.source(sig, arch="sm_90a", num_warps=32)
        assert "__launch_bounds__(1024, 2)" in src and "tc::cast_pair(" in src
        log = kernel.compile(sig, arch="sm_90a", num_warps=32).log
        assert int(re.search(r"Used (\d+) registers", log)[1]) <= 32, log


CHUNK_STATE_SIG = "*bf16:16,*bf16:16,*fp32:16,*bf16:16,i32:16,i32,128,128,64,64,64"


def test_chunk_state_reads_ahead_and_stores_whole_vectors() -> None:
    """The chunked state: every iteration stores the 16-bit state it carries, then adds a
    product of K^T (a block loaded along K's rows, so along the product's M) and V scaled
    by its decays.  Beside the store, which writes another argument, K^T is copied ahead
    into an M-major tile that wgmma reads transposed, and V is read ahead; and the state
    goes to memory in 16-byte vectors through shared memory (stmatrix), where it was
    stored from the accumulator's layout 4 bytes a lane, half of each sector an
    instruction.  Before, nothing was read ahead and K^T went to its tile an element at a
    time (the stores took a third of the kernel's time on an H200).  The copies of the
    next chunk go out at the top of each iteration, and its decays are loaded one
    iteration ahead into registers (the copies went out under the product, and the decays
    were loaded where used: 0.74 of Triton's speed)."""
    src = UM.chunk_gated_state.source(CHUNK_STATE_SIG, arch="sm_90a", num_warps=4,
                                      num_stages=2)
    notes = " ".join(src.split("#include")[0].replace("//", " ").split())
    assert "b_k of tl.dot and b_v (read back for the product's operands) copied into " \
        "shared memory with cp.async, 1 iteration ahead (2 stages; g_last, b_g loaded one " \
        "iteration ahead into registers; issued at the top of each iteration)" in notes
    assert "_ss<1, 1>(" in src
    assert "for 16-byte stores in the loop: through shared memory" in notes
    assert "store: 8 x bf16 (16 B) along axis 1" in notes
    loop = src[src.index("for (int i_t = 0;"):]
    assert "tc::stmatrix_x4(" in loop
    # the next chunk's copies, and its decays' loads, go out before the state is stored
    store = loop.index("tl.store(p_h")
    assert loop.index("tc::cp_async<16>(") < store and loop.index("g_last_next = ") < store
    # on AMD (not measured there) the state is stored as before
    amd = UM.chunk_gated_state.source(CHUNK_STATE_SIG, target="hip", arch="gfx90a",
                                      num_warps=4, num_stages=2)
    assert "in the loop: through shared memory" not in amd


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["chunk gated state", "chunk gated output"])
def test_chunk_kernels_in_bf16_on_gpu(name) -> None:
    """The chunked attention's kernels with bf16 operands (the wgmma builds: K^T read ahead,
    the state stored through shared memory) against the float64 reference."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    case = next(c for c in UM.CASES if c.name == name)
    args = case.inputs(NumpyMaker(1), "float32", big=False)
    dev = {k: torch.from_numpy(v).cuda() if k == "g" else
           torch.from_numpy(v).cuda().to(torch.bfloat16) for k, v in args.items()}
    exact = {k: v.float().cpu().numpy() for k, v in dev.items()}  # the bf16 inputs' values
    expected = case.reference(copy.deepcopy(exact))
    case.launch(case.kernel, dev)
    for out in case.outputs:
        got = dev[out].float().cpu().numpy()
        np.testing.assert_allclose(got, expected[out], rtol=3e-2, atol=3e-1)


@pytest.mark.gpu
def test_bf16_native_arithmetic_is_rounded_as_through_float() -> None:
    """bf16 + - * on the GPU give the bits the interpreter's float-then-round gives,
    subnormals and infinities too."""
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(5)
    n = 1024
    bits = rng.integers(0, 1 << 16, (2, n), dtype=np.uint16).view(np.int16)
    bits[:, :4] = np.array([[0x0001, 0x0080, 0x7F80, 0x8000], [0x0003, 0x8080, 0x3F80, 0x0001]],
                           dtype=np.uint16).view(np.int16)
    want = np.zeros(3 * n, np.int16)
    _bf16_arith_kernel.interpret[(1,)](bits[0].copy(), bits[1].copy(), want, N=n)
    dev = cupy.zeros(3 * n, dtype=cupy.int16)
    _bf16_arith_kernel[(1,)](cupy.asarray(bits[0]), cupy.asarray(bits[1]), dev, N=n)
    got = cupy.asnumpy(dev)
    nan = lambda b: (b.view(np.uint16) & 0x7FFF) > 0x7F80  # noqa: E731
    np.testing.assert_array_equal(nan(got), nan(want))
    np.testing.assert_array_equal(got[~nan(want)], want[~nan(want)])


def test_scans_of_untuned_kernels_stay_in_registers() -> None:
    """tl.cumsum over one line of 1024 (sparsemax) or 16 lines of 64 (a chunked cumsum, 4
    warps): each thread scans its registers, lanes by shuffles, warps through a small array
    of their totals; the block is never copied to shared memory."""
    src = U.sparsemax_rows.source("*fp32:16,*fp32:16,*fp32:16,i32,1024", num_warps=4)
    assert "1. in registers along axis 0 of a 1024 block" in src
    assert "warp_totals" in src  # the 4 warps exchange their totals only
    src = U.chunk_local_cumsum.source("*fp32:16,*fp32:16,i32:16,16,64", num_warps=4)
    assert "1. in registers along axis 0 of a 64 x 16 block" in src
    assert "tc::shfl_up" in src
    assert "through shared memory: " not in src
    # the runs read the warps' totals before theirs straight after one barrier (as Triton's
    # exchange does), not from a second array of prefixes behind a second one
    assert src.count("__syncthreads()") == 1
    assert "runs_before" not in src


# untuned_kernels_more.py at the configurations bench_untuned.py times (bf16 activations):
# (kernel, signature, num_warps).  batched_small_mm: its 8 batches are taken apart in
# registers (unstack); through trees of splits and joins, ptxas spilled for it
MORE_SIGNATURES = [
    (UM.rmsnorm_bwd, "*bf16:16,*bf16:16,*bf16:16,*fp32:16,*bf16:16,*fp32:16,i32:16,i32:16,"
     "i32:16,i32,4096", 8),
    (UM.swiglu_bwd, "*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,16384", 16),
    (UM.fused_add_rmsnorm, "*bf16:16,*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,fp32,4096", 8),
    (UM.per_token_quant_int8, "*bf16:16,*i8:16,*fp32:16,i32:16,i32:16,i32:16,4096", 8),
    (UM.softmax_looped, "*bf16:16,*bf16:16,i32:16,i32:16,2048", 8),
    (UM.kldiv_rows, "*bf16:16,*bf16:16,*fp32:16,i32:16,i32:16,fp32,16384", 16),
    (UM.embedding_fwd, "*i64:16,*bf16:16,*bf16:16,i32:16,i32:16,64,128", 4),
    (UM.topk2_softmax, "*bf16:16,*fp32:16,*i32:16,i32:16,64,64", 4),
    (UM.paged_decode, "*bf16:16,*bf16:16,*bf16:16,*i64:16,*i64:16,*bf16:16,fp32,i32:16,32,128,"
     "16", 4),
    (UM.fused_recurrent_gla, "*bf16:16,*bf16:16,*bf16:16,*bf16:16,*bf16:16,i32:16,fp32,64,64,"
     "32", 1),
    (UM.causal_softmax, "*bf16:16,*bf16:16,i32:16,fp32,2048", 8),
    (UM.linear_scan, "*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,64,64", 4),
    (UM.rope_interleaved, "*bf16:16,*fp32:16,*fp32:16,i32:16,i32:16,32,64", 4),
    (UM.softmax_bwd, "*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,4096", 8),
    (UM.causal_conv1d, "*bf16:16,*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,4,64,64", 4),
    (UM.bias_grad_atomic, "*bf16:16,*fp32:16,i32:16,i32:16,128,128", 4),
    (UM.embedding_bwd, "*i64:16,*bf16:16,*fp32:16,i32:16,i32:16,64,128", 4),
    (UM.welford_layernorm, "*bf16:16,*bf16:16,*bf16:16,*bf16:16,i32:16,fp32,1024", 4),
    (UM.batched_small_mm, "*bf16:16,*bf16:16,*bf16:16,i32:16,8,32", 4),
    (UM.transpose_tiles, "*bf16:16,*bf16:16,i32:16,i32:16,64,64", 4),
    (UM.chunk_gated_state, "*bf16:16,*bf16:16,*fp32:16,*bf16:16,i32:16,i32,128,128,64,64,64",
     4),
    (UM.chunk_gated_output, "*bf16:16,*bf16:16,*bf16:16,*fp32:16,*bf16:16,*bf16:16,fp32,"
     "i32:16,i32,128,128,64,64,64", 4),
]
SCALED_SIG = "*bf16:16,*bf16:16,*fp32:16,*fp32:16,*bf16:16,i32:16,i32:16,i32:16,128,128,64,8"
MOE_SIG = ("*bf16:16,*bf16:16,*bf16:16,*fp32:16,*i32:16,*i32:16,*i32:16,i32:16,i32:16,i32,"
           "i32:16,i32:16,i32:16,i32:16,i32:16,2,64,64,32,8")
INT4_SIG = ("*bf16:16,*i32:16,*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,i32:16,i32:16,i32:16,"
            "i32:16,i32:16,64,128,64")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_scales_loaded_in_a_k_loop_take_the_weights_layout(arch) -> None:
    """A 4-bit weight product's per-group scales and zeros, loaded in its K loop and
    broadcast against the unpacked weights, while their columns also index the product's
    stores: loaded in the weights' layout, with no conversion through shared memory (two
    a K step, each behind two barriers, before); and the product accumulates into the
    loop's accumulator (`acc += tl.dot(a, b)`), no second accumulator added after it."""
    src = UM.int4_matmul.source(INT4_SIG, arch=arch, num_warps=4, num_stages=3)
    assert "before x[..., None]: through shared memory" not in src
    loop = src[src.index("for (int k_ = 0;"):]
    assert not re.search(r"acc_\[r\] \+ ", loop)


def test_shifts_taken_back_keep_the_alignment_of_the_runs() -> None:
    """A causal convolution reads x at t - (W - 1) + w: at w = W - 1 the shift is taken back
    (t - 3 + 3 is t), and the load reads 16 bytes a vector as at t; at w = 1 (t - 2), 4
    bytes; the others an element at a time (Triton's arithmetic folding gives the same)."""
    sig = "*bf16:16,*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,4,64,64"
    src = UM.causal_conv1d.source(sig, arch="sm_90", num_warps=4)
    loads = re.findall(r"L\d+ load x: (\d+) x bf16", src)
    assert sorted(loads) == ["1", "1", "2", "8"], loads


def test_a_scan_across_warps_folds_long_lines_a_thread_each() -> None:
    """A scan of pairs along axis 0 of 64 x 64 on 4 warps: each line (a column) holds 16
    run totals (4 runs on each of 4 warps); a thread a line folds them in order into the
    runs' exclusive prefixes (15 combines a line), where a thread an entry did up to 14
    each, 8 entries a thread (0.81x Triton's speed)."""
    sig = "*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,64,64"
    src = UM.linear_scan.source(sig, arch="sm_90", num_warps=4)
    assert "a thread a line folds its entries in order" in src
    assert "own_entry" not in src


def test_a_transpose_reads_padded_rows() -> None:
    """tl.trans of a tile loaded along its rows, stored along the other axis: through
    shared memory in padded rows (`render_blocks._padded_rows`), so that a warp reading
    down a column meets few banks twice; unpadded rows of 64 put the column's 16 lanes
    in one bank (0.45-0.84x Triton's speed, 0.96-1.01 padded)."""
    src = UM.transpose_tiles.source("*bf16:16,*bf16:16,i32:16,i32:16", BLOCK_M=64,
                                    BLOCK_N=64, num_warps=4, arch="sm_90")
    assert "permute axes to [1, 0]: through shared memory" in src
    assert "::coord0(r) * 64 + " not in src and "::coord0(r) * 66 + " in src  # a word more


def test_a_transposed_mask_keeps_its_runs() -> None:
    """`tl.trans(ok)` has ok's runs along the other axis (passes.axis_info's rule for
    permute): the transposed tile is stored 16 bytes at a time, its mask checked once a
    vector, where it was stored an element at a time (0.41x Triton's speed), its mask
    exchanged through shared memory too."""
    src = UM.transpose_tiles.source("*bf16:16,*bf16:16,i32:16,i32:16", BLOCK_M=64,
                                    BLOCK_N=64, num_warps=4, arch="sm_90")
    assert "store: 8 x bf16 (16 B) along axis 1" in src
    # the mask, index arithmetic, computed again where its permute moves nothing
    # (layouts._permuted_index_arithmetic): one exchange, the tile's, and one barrier
    assert src.count("permute axes to [1, 0]: through shared memory") == 1
    assert src.count("permute axes to [1, 0]: in registers") == 1
    assert src.count("__syncthreads()") == 1


@pytest.mark.parametrize("target,arch", TARGETS)
def test_the_second_batch_compiles_cleanly(target: str, arch: str) -> None:
    """The kernels of untuned_kernels_more.py at the configurations bench_untuned.py times
    (bf16 activations), for every target: no spills, no warnings."""
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    for kernel, sig, warps in MORE_SIGNATURES:
        assert_clean_compile(kernel, sig, target, arch, num_warps=warps)
    assert_clean_compile(UM.int4_matmul, INT4_SIG, target, arch, num_warps=4, num_stages=3)
    assert_clean_compile(UM.fused_moe, MOE_SIG, target, arch, num_warps=4, num_stages=4)
    assert_clean_compile(UM.scaled_matmul, SCALED_SIG, target, arch, num_warps=8,
                         num_stages=3)


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name.replace(" ", "_"))
def test_untuned_kernel_matches_numpy_on_gpu(case) -> None:
    """The same tiny shapes on the GPU (register-tiled FMA dots, masked gathers and chunked
    scans all run here)."""
    cupy = pytest.importorskip("cupy")
    args = case.inputs(NumpyMaker(0), "float32", big=False)
    expected = case.reference(copy.deepcopy(args))
    dev = {k: cupy.asarray(v) for k, v in args.items()}
    case.launch(case.kernel, dev)
    for name in case.outputs:
        tt.assert_close(cupy.asnumpy(dev[name]), expected[name].astype(np.float32),
                        tt.Tolerance(*case.tolerance(name)), name)


@pytest.mark.gpu
def test_transpose_and_argmax_as_triton() -> None:
    """The transpose by tiles (padded rows, a permuted mask) and the router's top-2 (its
    argmax folding a thread's elements in order) through Triton on the same GPU: the
    same bits, on ragged shapes and on rows of tied values (no NaN, where Triton's
    compiled combine and NumPy's rule agree)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    from triton_clone import as_triton

    g = torch.Generator(device="cuda").manual_seed(5)
    for m, n in ((37, 45), (130, 70), (64, 64)):
        x = torch.randn((m, n), device="cuda", generator=g).to(torch.bfloat16)
        outs = []
        for kernel in (UM.transpose_tiles, as_triton(UM.transpose_tiles)):
            y = torch.zeros((n, m), device="cuda", dtype=torch.bfloat16)
            kernel[(tilecc.cdiv(m, 64), tilecc.cdiv(n, 64))](x, y, m, n, BLOCK_M=64,
                                                             BLOCK_N=64, num_warps=4)
            outs.append(y)
        assert torch.equal(outs[0], outs[1]) and torch.equal(outs[0], x.T)
    tokens = 45
    logits = torch.randint(-3, 4, (tokens, 64), device="cuda", generator=g).to(torch.bfloat16)
    outs = []
    for kernel in (UM.topk2_softmax, as_triton(UM.topk2_softmax)):
        w = torch.zeros((tokens, 2), device="cuda")
        ids = torch.zeros((tokens, 2), device="cuda", dtype=torch.int32)
        kernel[(1,)](logits, w, ids, tokens, E=64, BLOCK_T=64, num_warps=4)
        outs.append((w, ids))
    assert torch.equal(outs[0][1], outs[1][1])
    torch.testing.assert_close(outs[0][0], outs[1][0], rtol=1e-6, atol=1e-6)

