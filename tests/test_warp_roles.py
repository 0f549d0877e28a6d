"""Warp roles (passes.warp_roles): a persistent kernel's TMA copies issued by a producer
warpgroup of their own, the kernel's warps consuming each stage.

On CPU: which kernels get the two roles and which keep one, the source of each role (the
producer's loop over tiles with only what the copies read, the consumers' named barriers
and releases), the program's threads the launch takes, and clean compiles for sm_90a.  On
the GPU: products equal torch's over ragged shapes, few and many tiles per program, both
B layouts, and (with compute-sanitizer) no race between the roles."""

from __future__ import annotations

import os
import re
import runpy

import pytest

import tilecc
import tilecc.language as tl
from tilecc.runtime import compiler
from tilecc.transpiler.passes import warp_roles
from tilecc.transpiler.passes.warp_roles import PRODUCER_REGISTERS

try:
    from conftest_compilers import require_cuda_compiler
    from kernels_ptr import persistent_bt_kernel
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler
    from tests.kernels_ptr import persistent_bt_kernel
    from tests.test_compile_kernels import assert_clean_compile

EXAMPLE = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "examples",
                                      "persistent_matmul.py"), run_name="not_main")
persistent = EXAMPLE["persistent_matmul_kernel"]
persistent_bt = persistent_bt_kernel  # (B stored N x K, multiplied as b.T: tutorial 09)


@tilecc.jit
def persistent_pointer_store(a_desc, b_desc, c_ptr, M, N, K, BM: tl.constexpr,
                             BN: tl.constexpr, BK: tl.constexpr, NUM_SMS: tl.constexpr):
    """Persistent, its tiles stored through pointers: one role (the store's conversion
    would go through the tiles a producer refills)."""
    tiles_n = tl.cdiv(N, BN)
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * tiles_n, NUM_SMS):
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(tl.cdiv(K, BK)):
            acc = tl.dot(a_desc.load([tile // tiles_n * BM, k * BK]),
                         b_desc.load([k * BK, tile % tiles_n * BN]), acc)
        rm = tile // tiles_n * BM + tl.arange(0, BM)
        rn = tile % tiles_n * BN + tl.arange(0, BN)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilecc.jit
def tile_per_program(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr):
    """One output tile a program: one role (a producer gained nothing measurable)."""
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([tl.program_id(0) * BM, k * BK]),
                     b_desc.load([k * BK, tl.program_id(1) * BN]), acc)
    c_desc.store([tl.program_id(0) * BM, tl.program_id(1) * BN], acc.to(tl.float16))


def _sig(bm: int, bn: int, bk: int, bt: bool = False, sms: int = 132) -> str:
    b = f"[{bn}, {bk}]" if bt else f"[{bk}, {bn}]"
    return (f"tensordesc<fp16[{bm}, {bk}]>:16, tensordesc<fp16{b}>:16, "
            f"tensordesc<fp16[{bm}, {bn}]>:16, i32, i32, i32, {bm}, {bn}, {bk}, 8, {sms}")


def _roles(src: str) -> tuple[str, str]:
    """(the producer's branch, the consumers' code) of a two-role kernel's source."""
    start = src.index("if (threadIdx.x >= ")
    end = src.index("return;\n", start)
    return src[start:end], src[end:]


def test_a_persistent_tma_gemm_takes_a_producer_warpgroup() -> None:
    src = persistent.source(_sig(128, 256, 64), arch="sm_90a", num_warps=8, num_stages=3)
    assert "// Launch:         8 warps and a producer warpgroup of 4 x 32 threads = 384 " \
        "threads per program" in src
    assert "__launch_bounds__(384)" in src and "tc::launch_ranges<384>();" in src
    assert "by a producer warpgroup as each stage is released (3 stages; one wgmma kept " \
        "in flight)" in " ".join(src.replace("//", " ").split())
    producer, consumer = _roles(src)
    # the producer: registers given back, its first thread alone walks the tiles and the
    # K loops, each stage refilled once the consumers released it; no product, no store
    assert "if (threadIdx.x >= 256) {" in producer and "if (threadIdx.x == 256) {" in producer
    assert f"tc::registers_down<{PRODUCER_REGISTERS}>();" in producer
    assert "for (int tile_id = start_pid; tile_id < num_tiles; tile_id += 132)" in producer
    assert re.search(r"tc::mbarrier_wait\(tc::smem_address\(ki_released \+ ki_stage\),\s*"
                     r"ki_phase \^ 1\);", producer)
    assert "tc::tma_load_4d(" in producer and "tc::tma_load_2d(" in producer
    assert "threadIdx.x == 0" not in producer  # (it issues them itself)
    for absent in ("tc::wgmma_m", "tc::wgmma_wait", "tma_store", "accumulator", "__syncthreads",
                   "sync_consumers"):
        assert absent not in producer, absent
    # the consumers: registers taken, no copies, each stage waited for and released by
    # every warp once the product that read it retired; their barriers named ones
    assert "tc::registers_up<232>();" in consumer
    assert "tma_load" not in consumer and "mbarrier_expect_bytes" not in consumer
    assert "tc::mbarrier_wait(tc::smem_address(ki_landed + ki_stage), ki_phase);" in consumer
    assert consumer.count("tc::mbarrier_arrive(") == 2  # after wait_group 1, after the loop
    assert "if (ki != 0) {  // the previous iteration's product retired" in consumer
    assert "__syncthreads" not in consumer and "tc::sync_consumers<256>();" in consumer
    assert "tc::tma_store_2d(" in consumer
    # the stage counters run on across tiles: declared once, before each role's tile loop
    for role in (producer, consumer):
        assert role.count("int ki_stage = 0;") == 1
        assert role.index("int ki_stage = 0;") < role.index("for (int tile_id")
    # what only the copies read is not computed by the consumers
    assert "const int offs_am" in src.split("if (threadIdx.x >= ")[1].split("return;")[0]


def test_one_consumer_warpgroup_keeps_its_register_share() -> None:
    """One consumer warpgroup beside the producer: 256 threads, 255 registers each
    already, nothing to move; two take 232 of the 170 they would have."""
    src = persistent.source(_sig(64, 256, 128), arch="sm_90a", num_warps=4, num_stages=2)
    assert "__launch_bounds__(256)" in src and "if (threadIdx.x >= 128) {" in src
    assert "registers_up" not in src and "registers_down" not in src
    assert "tc::sync_consumers<128>();" in src
    roles = warp_roles.WarpRoles(None, None, frozenset())
    assert roles.consumer_registers(4) is None and roles.consumer_registers(8) == 232
    assert roles.consumer_registers(12) == 152  # (three: 128 each at 512 threads)


def test_b_transposed_takes_the_two_roles() -> None:
    src = persistent_bt.source(_sig(128, 256, 64, bt=True), arch="sm_90a", num_warps=8,
                               num_stages=3)
    producer, consumer = _roles(src)
    assert "tma_load" in producer and "tma_load" not in consumer


@pytest.mark.parametrize("kernel,sig,warps", [
    (persistent_pointer_store, "tensordesc<fp16[128, 64]>:16, tensordesc<fp16[64, 256]>:16, "
     "*fp16:16, i32, i32, i32, 128, 256, 64, 132", 8),
    (tile_per_program, "tensordesc<fp16[128, 64]>:16, tensordesc<fp16[64, 256]>:16, "
     "tensordesc<fp16[128, 256]>:16, i32, 128, 256, 64", 8),
    (persistent, _sig(128, 128, 64), 8),  # (a product too short: warp_roles.PRODUCT)
])
def test_kernels_outside_the_rule_keep_one_role(kernel, sig, warps) -> None:
    src = kernel.source(sig, arch="sm_90a", num_warps=warps, num_stages=3)
    assert "producer warpgroup" not in src and "__syncthreads();" in src
    assert f"__launch_bounds__({warps * 32}" in src


def test_sm_80_keeps_one_role() -> None:
    src = persistent.source(_sig(128, 128, 32), arch="sm_80", num_warps=8, num_stages=3)
    assert "producer warpgroup" not in src


def test_the_binary_carries_the_programs_threads(tmp_path, monkeypatch) -> None:
    """The launch takes a program's threads from the binary (from the disk cache too)."""
    require_cuda_compiler()
    monkeypatch.setenv("TILECC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "_compiled", {})
    two = persistent.compile(_sig(128, 256, 64), arch="sm_90a", num_warps=8, num_stages=3)
    assert two.threads == 384
    monkeypatch.setattr(compiler, "_compiled", {})
    again = persistent.compile(_sig(128, 256, 64), arch="sm_90a", num_warps=8, num_stages=3)
    assert again.threads == 384 and again.data == two.data
    one = persistent.compile(_sig(128, 128, 32), arch="sm_80", num_warps=8, num_stages=3)
    assert one.threads == 0  # (num_warps x 32)


@pytest.mark.parametrize("bm,bn,bk,warps,stages", [
    (128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (64, 256, 128, 4, 2)])
def test_two_role_kernels_compile_cleanly(bm, bn, bk, warps, stages) -> None:
    require_cuda_compiler()
    assert_clean_compile(persistent, _sig(bm, bn, bk), "cuda", "sm_90a", num_warps=warps,
                         num_stages=stages)
    assert_clean_compile(persistent_bt, _sig(bm, bn, bk, bt=True), "cuda", "sm_90a",
                         num_warps=warps, num_stages=stages)


# --- on the GPU ---------------------------------------------------------------------------------

def _cuda_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("needs an sm_90 GPU")
    return torch


def _run(kernel, m, n, k, bm, bn, bk, warps, stages, programs, bt=False, dtype="float16"):
    torch = _cuda_torch()
    tdtype = getattr(torch, dtype)
    torch.manual_seed(m + 3 * n + 7 * k)
    a = torch.randn(m, k, device="cuda").to(tdtype)
    b = torch.randn(n, k, device="cuda").to(tdtype) if bt else \
        torch.randn(k, n, device="cuda").to(tdtype)
    c = torch.full((m, n), -7.0, device="cuda", dtype=tdtype)
    d = tilecc.TensorDescriptor
    tiles = tilecc.cdiv(m, bm) * tilecc.cdiv(n, bn)
    kernel[(min(programs, tiles),)](
        d.from_tensor(a, [bm, bk]), d.from_tensor(b, [bn, bk] if bt else [bk, bn]),
        d.from_tensor(c, [bm, bn]), m, n, k, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
        BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, NUM_SMS=programs, num_warps=warps,
        num_stages=stages)
    ref = a.float() @ (b.float().T if bt else b.float())
    torch.testing.assert_close(c.float(), ref, rtol=1e-2, atol=1e-2 * k ** 0.5)


CONFIGS = [(128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (64, 256, 128, 4, 2)]
# ragged edges, a K shorter than a block, and a K of many stages; 1, 5 and 132 programs
# (one program walks every tile: each stage's phases go round many times)
SHAPES = [(512, 512, 1024), (300, 264, 200), (129, 520, 40), (1000, 1000, 1000)]


@pytest.mark.gpu
@pytest.mark.parametrize("bm,bn,bk,warps,stages", CONFIGS)
@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("programs", [1, 5, 132])
def test_gpu_two_roles_match_torch(bm, bn, bk, warps, stages, m, n, k, programs) -> None:
    _run(persistent, m, n, k, bm, bn, bk, warps, stages, programs)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("m,n,k", [(384, 520, 264), (1000, 1000, 1000)])
def test_gpu_two_roles_b_transposed_match_torch(dtype, m, n, k) -> None:
    _run(persistent_bt, m, n, k, 128, 256, 64, 8, 3, 132, bt=True, dtype=dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(300, 264, 200), (1000, 1000, 1000)])
def test_gpu_two_roles_equal_tritons(m, n, k) -> None:
    """The persistent example, in two roles here, and the same source through Triton."""
    torch = _cuda_torch()
    pytest.importorskip("triton")
    import sys

    from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    from triton_clone import as_triton

    torch.manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(k, n, device="cuda").half()
    out = []
    for kernel, d in ((persistent, tilecc.TensorDescriptor),
                      (as_triton(persistent), TritonDescriptor)):
        c = torch.full((m, n), -7.0, device="cuda").half()
        kernel[(min(132, tilecc.cdiv(m, 128) * tilecc.cdiv(n, 256)),)](
            d.from_tensor(a, [128, 64]), d.from_tensor(b, [64, 256]),
            d.from_tensor(c, [128, 256]), m, n, k, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256,
            BLOCK_SIZE_K=64, GROUP_SIZE_M=8, NUM_SMS=132, num_warps=8, num_stages=3)
        out.append(c)
    torch.testing.assert_close(out[0], out[1], rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(out[0].float(), a.float() @ b.float(), rtol=1e-2,
                               atol=1e-2 * k ** 0.5)  # (every tile written)


def test_attention_takes_a_producer_warpgroup_where_its_warps_release_stages() -> None:
    """Attention's loop at the top level, K and V by TMA, two products whose warps release
    the stage they read at the iteration's end (Pipeline.releases): the producer refills
    it from there, the consumers issue no copies; head dim 64 (a shorter product, one
    warpgroup) keeps one role."""
    attention = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "examples",
                                            "attention.py"), run_name="not_main")
    kernel = attention["attention_fwd"]
    sig = ("*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16,i32:16,i32:16,i32,"
           "i32:16,{d},128,{bn},{causal}")
    for causal in (False, True):
        src = kernel.source(sig.format(d=128, bn=128, causal=causal), arch="sm_90a",
                            num_warps=8, num_stages=3)
        producer, consumer = _roles(src)
        assert "tc::tma_load_4d(" in producer and "tma_load" not in consumer
        assert "for (int start_n = 0; start_n < " in producer
        # each warp releases the stage it read once its products retired (the loop's
        # previous block's, then the last block's); nothing else
        assert consumer.count("tc::mbarrier_arrive(") == 2
        assert "__syncwarp();  // this warp's products of the previous block's stage " \
            "retired" in consumer
        assert "__syncthreads" not in consumer
        assert "tc::sync_consumers<256>();" in consumer  # (Q staged once)
    one = kernel.source(sig.format(d=64, bn=64, causal=False), arch="sm_90a", num_warps=4,
                        num_stages=3)
    assert "producer warpgroup" not in one


def _attention_source(num_stages: int = 3, **blocks) -> str:
    attention = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "examples",
                                            "attention.py"), run_name="not_main")
    sig = ("*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16,i32:16,i32:16,i32,"
           "i32:16,{d},{bm},{bn},{causal}").format(**blocks)
    return attention["attention_fwd"].source(sig, arch="sm_90a", num_warps=8,
                                             num_stages=num_stages)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_overlaps_each_blocks_softmax_with_the_previous_blocks_product(causal) -> None:
    """Pipeline.overlapped: after the first block, each iteration issues its scores' product
    and then the previous block's P V, waits for the scores only (wgmma_wait<1>), works out
    the softmax under P V, then waits for it, releases its stage and rescales the output;
    P V's A is converted and packed after that wait (cast_pair_ordered) into registers
    carried to the next iteration; the last block's P V follows the loop."""
    src = _attention_source(d=128, bm=128, bn=128, causal=causal)
    _, consumer = _roles(src)
    assert "what lies between them computed under it" in re.sub(r"\n\s*//\s+", " ", src)
    first = consumer.index("the first block: its first product waited for")
    loop = consumer.index("for (int start_n = 0 + 128; start_n < ")
    last = consumer.index("the last block's second product")
    assert first < loop < last
    body = consumer[loop:last]
    scores, pv = body.index("wgmma_m64n128k16_f16_ss"), body.index("wgmma_m64n128k16_f16_rs")
    wait1, wait0 = body.index("tc::wgmma_wait<1>();"), body.index("tc::wgmma_wait<0>();")
    softmax = body.index("tc::exp2(")
    rescale = body.index("alpha[((r / 32)")
    # P converted from fp32 once, by the packing after the wait: no conversion before it
    pack = body.index("tc::cast_pair_ordered<tc::half>(p[r], p[r + 1])")
    assert scores < pv < wait1 < softmax < wait0 < rescale < pack
    assert "cast_pair(" not in body
    assert body.count("wgmma_wait") == 2  # neither product waits for itself
    assert "(v_stages + start_n_previous_stage * 16384)" in body[scores:pv]  # the last stage
    assert "tc::wgmma_wait<1>" not in consumer[:loop] + consumer[last:]


def test_attention_keeps_its_loop_where_the_products_registers_would_not_fit() -> None:
    """A block of 256 queries on 8 warps (128 rows a warpgroup: scores, output and packed
    probabilities of 128 + 128 + 64 registers a thread; 2 stages, to fit shared memory)
    keeps the loop that waits for each product (settle.OVERLAP_REGISTERS)."""
    src = _attention_source(num_stages=2, d=128, bm=256, bn=128, causal=False)
    assert "producer warpgroup" in src and "_ordered" not in src


@pytest.mark.parametrize("causal", [False, True])
def test_attention_written_with_descriptors_overlaps_and_compiles_cleanly(causal) -> None:
    """Triton's Hopper form of the forward (`benchmarks/attention_descriptor.py`: K and V
    by descriptors, the loop's index read only by the copies where it is not causal, so
    the first block declares none): overlapped too, and clean for sm_90a (no spills, no
    products serialized by ptxas, no unused variable)."""
    kernel = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "benchmarks",
                                         "attention_descriptor.py"),
                            run_name="not_main")["attention_fwd_descriptors"]
    sig = f"*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32,i32:16,i32:16,128,128,128,{causal}"
    src = kernel.source(sig, arch="sm_90a", num_warps=8, num_stages=3)
    assert "tc::cast_pair_ordered<tc::half>(" in src
    first = src[src.index("the first block: its first product waited for"):]
    assert ("const int start_n = 0;" in first.split("\n")[1]) == causal
    require_cuda_compiler()
    assert_clean_compile(kernel, sig, "cuda", "sm_90a", num_warps=8, num_stages=3)
