"""A product's result stored in 16-byte vectors (passes/coalesce.py): converted through the
tl.dot tiles' shared memory once the loop is done, its pointers and mask computed again in
the stored layout.  Checked in the IR, in the source, on the interpreter (which runs the IR
the passes leave) against NumPy, compiled by NVRTC, and on the GPU."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import require_cuda_compiler
    from test_blocks import load_example
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler
    from tests.test_blocks import load_example
    from tests.test_compile_kernels import assert_clean_compile

MM = load_example("matmul")


def _signature(dtype: str = "bf16", aligned: bool = True, bm: int = 128, bn: int = 256,
               bk: int = 64) -> str:
    d = ":16" if aligned else ""
    return (f"*{dtype}:16,*{dtype}:16,*{dtype}:16,i32{d},i32{d},i32{d},i32{d},i32:1,i32{d},"
            f"i32:1,i32{d},i32:1,{bm},{bn},{bk},8,''")


def _lowered(signature: str, arch: str = "sm_90a", num_warps: int = 8, num_stages: int = 3):
    kernel, notes = MM.matmul_kernel.lower(MM.matmul_kernel._specs(signature, {}), "cuda",
                                           num_warps, num_stages=num_stages, arch=arch)
    stores = [op for op in kernel.body.ops if op.kind == "store"]
    converts = [op for op in kernel.body.ops if op.kind == "convert"]
    return stores, converts, notes


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_a_products_result_is_stored_in_16_byte_vectors_through_the_tiles(arch) -> None:
    """The matmul's epilogue: wgmma's (and mma.sync's) accumulator holds column pairs, 4-byte
    stores; converted once, after the loop, in the tiles' memory, each store is 16 bytes."""
    stores, converts, notes = _lowered(_signature(), arch)
    assert [s.attrs["plan"].vec for s in stores] == [8]
    assert [c.attrs.get("reuse_tiles") for c in converts] == [True]
    assert converts[0].result is stores[0].operands[1]
    assert any(", for 16-byte stores: through shared memory (the tl.dot tiles')" in n
               for n in notes)
    src = MM.matmul_kernel.source(_signature(), num_warps=8, num_stages=3, arch=arch)
    epilogue = src[src.index("// L68: tl.store"):]
    assert "__syncthreads();  // every thread is done with the tl.dot tiles" in epilogue
    assert "reinterpret_cast<tc::bfloat16*>(dynamic_smem)" in epilogue
    assert "tc::swizzled_chunk<32>(" in epilogue and "tc::load<8>(buffer" in epilogue
    # read back from the conversion, nothing is left to compute: one predicated store each
    assert "tc::store_if<8>(" in epilogue and "tc::store<2>(c_ptr" not in epilogue
    # sm_90: the accumulator's pairs go in as stmatrix's 8 x 8 blocks, 16 bytes a lane
    assert ("tc::stmatrix_x4(tc::smem_address(" in epilogue) == (arch == "sm_90a")
    assert ("tc::store<2>(" in epilogue) == (arch == "sm_80")  # sm_80: a pair a store


def test_no_conversion_where_the_store_would_be_no_wider() -> None:
    """Rows of unknown alignment (a stride not known to be a multiple of 16): the blocked
    layout's stores are no wider than the accumulator's, so nothing is converted."""
    stores, converts, _ = _lowered(_signature(aligned=False))
    assert converts == [] and [s.attrs["plan"].vec for s in stores] == [1]


def test_no_conversion_without_tiles_to_reuse() -> None:
    """On AMD (no pipeline: the operands are staged in the pool) the store stays as it is:
    the conversion would need shared memory of its own."""
    kernel, _ = MM.matmul_kernel.lower(MM.matmul_kernel._specs(_signature(), {}), "hip", 8,
                                       num_stages=3, arch="gfx90a")
    assert not [op for op in kernel.walk() if op.kind == "convert"]


@tilecc.jit
def dot_rows_kernel(a_ptr, b_ptr, c_ptr, n_tiles, BLOCK: tl.constexpr):
    """Products stored inside the loop: each tile's C from its own A and one B."""
    r = tl.arange(0, BLOCK)
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    for t in range(n_tiles):
        a = tl.load(a_ptr + t * BLOCK * BLOCK + r[:, None] * BLOCK + r[None, :])
        c = tl.dot(a, b).to(tl.float16)
        tl.store(c_ptr + t * BLOCK * BLOCK + r[:, None] * BLOCK + r[None, :], c)


def test_a_16_bit_store_inside_a_loop_goes_through_the_pool() -> None:
    """Inside the loop, not through the tl.dot tiles (the loop refills them) but through
    the pool of layout conversions, a step like any other there: a 16-bit accumulator
    stored 4 bytes a lane costs more than its two barriers (a chunked attention's state,
    stored each iteration: a third of the kernel's time).  Not on AMD, where it was not
    measured."""
    sig = "*fp16:16,*fp16:16,*fp16:16,i32,64"
    kernel, _ = dot_rows_kernel.lower(dot_rows_kernel._specs(sig, {}), "cuda", 4,
                                      num_stages=3, arch="sm_90a")
    converts = [op for op in kernel.walk() if op.kind == "convert"]
    assert len(converts) == 1 and "reuse_tiles" not in converts[0].attrs
    src = dot_rows_kernel.source(sig, arch="sm_90a", num_warps=4, num_stages=3)
    assert "for 16-byte stores in the loop: through shared memory" in src
    amd, _ = dot_rows_kernel.lower(dot_rows_kernel._specs(sig, {}), "hip", 4,
                                   num_stages=3, arch="gfx90a")
    assert not [op for op in amd.walk() if op.kind == "convert"]


@tilecc.jit
def running_state_kernel(a_ptr, b_ptr, c_ptr, n_tiles, EVERY: tl.constexpr,
                         BLOCK: tl.constexpr):
    """A product's accumulator stored every EVERY iterations before the next tile is added
    (fla's chunk_fwd_kernel_h stores its state under `if i_t % NTS == 0`): C_j = the sum
    of A_t @ B over t < j EVERY."""
    r = tl.arange(0, BLOCK)
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    acc = tl.zeros([BLOCK, BLOCK], dtype=tl.float32)
    for t in range(n_tiles):
        if t % EVERY == 0:
            tl.store(c_ptr + t // EVERY * BLOCK * BLOCK + r[:, None] * BLOCK + r[None, :],
                     acc.to(tl.float16))
        a = tl.load(a_ptr + t * BLOCK * BLOCK + r[:, None] * BLOCK + r[None, :])
        acc = tl.dot(a, b, acc)


RUNNING_SIG = "*fp16:16,*fp16:16,*fp16:16,i32,{every},64"


def _running_case(n_tiles: int, every: int):
    """Entries in {-1, 0, 1}: every partial sum exact in fp16 (below 2048)."""
    rng = np.random.default_rng(n_tiles * 10 + every)
    a = rng.integers(-1, 2, (n_tiles, 64, 64)).astype(np.float16)
    b = rng.integers(-1, 2, (64, 64)).astype(np.float16)
    sums = np.cumsum(a.astype(np.float64) @ b.astype(np.float64), axis=0)
    ref = np.stack([np.zeros((64, 64))] + list(sums[:-1]))[::every]
    return a, b, ref


@pytest.mark.parametrize("every", [1, 2])
def test_a_store_under_a_branch_of_the_loop_goes_through_the_pool(every) -> None:
    """The branches of a loop's body are its iterations' too: the store under `if` is
    converted there as in the body (the branch's condition is a scalar, so every thread
    reaches the conversion's barriers or none does); before, it was stored 4 bytes a
    lane.  The interpreter runs the converted IR to NumPy's result."""
    sig = RUNNING_SIG.format(every=every)
    src = running_state_kernel.source(sig, arch="sm_90a", num_warps=4, num_stages=3)
    notes = " ".join(src.split("#include")[0].replace("//", " ").split())
    assert "for 16-byte stores in the loop: through shared memory" in notes
    assert "store: 8 x fp16 (16 B) along axis 1" in notes
    n_tiles = 5
    a, b, ref = _running_case(n_tiles, every)
    c = np.full((len(ref), 64, 64), 7, np.float16)
    running_state_kernel.interpret[(1,)](a, b, c, n_tiles, EVERY=every, BLOCK=64)
    np.testing.assert_array_equal(c.astype(np.float64), ref)
    require_cuda_compiler()
    assert_clean_compile(running_state_kernel, sig, "cuda", "sm_90a", num_warps=4,
                         num_stages=3)


@pytest.mark.gpu
@pytest.mark.parametrize("every,warps", [(1, 4), (2, 4), (2, 8)])
def test_gpu_a_store_under_a_branch_of_the_loop(every, warps) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    n_tiles = 7
    a, b, ref = _running_case(n_tiles, every)
    c = torch.full((len(ref), 64, 64), 7.0, device="cuda", dtype=torch.float16)
    running_state_kernel[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c,
                               n_tiles, EVERY=every, BLOCK=64, num_warps=warps, num_stages=3)
    np.testing.assert_array_equal(c.cpu().numpy().astype(np.float64), ref)


@pytest.mark.parametrize("m,n,k", [(128, 256, 64), (200, 264, 72), (37, 24, 40)])
def test_the_interpreter_runs_the_converted_store(m, n, k) -> None:
    """The interpreter runs the IR with the conversion and the pointers and mask computed
    again in the stored layout: ragged edges included, the result is NumPy's."""
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), 7, np.float16)
    cfg = tilecc.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32,
                         "GROUP_SIZE_M": 8}, num_warps=4, num_stages=3)
    MM.launch(a, b, c, cfg)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-2, atol=5e-2)
    sig = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16," \
          "i32:1,64,64,32,8,''"
    kernel, _ = MM.matmul_kernel.lower(MM.matmul_kernel._specs(sig, {}), "cuda", 4,
                                       num_stages=3, debug=True)
    assert [op.attrs.get("reuse_tiles") for op in kernel.body.ops if op.kind == "convert"] \
        == [True]


def _swizzled_chunk(chunks: int, row: int, chunk: int) -> int:
    """tilecc.h's tc::swizzled_chunk<CHUNKS>(row, chunk), as the conversion uses it."""
    span = min(chunks, 8)
    rows_per_128b = 8 // chunks if chunks < 8 else 1
    return row * chunks + (chunk ^ ((row // rows_per_128b) % span))


@pytest.mark.parametrize("target,arch,warps,sig", [
    ("cuda", "sm_90a", 8, _signature("bf16")),
    ("cuda", "sm_90a", 4, _signature("fp16", bm=128, bn=128)),
    ("cuda", "sm_80", 4, _signature("fp16", bm=64, bn=64, bk=32)),
], ids=["wgmma-128x256-bf16", "wgmma-128x128-fp16", "mma-64x64-fp16"])
def test_the_swizzled_conversion_moves_every_element_in_whole_vectors(target, arch, warps,
                                                                      sig) -> None:
    """The conversion's positions (render_blocks.swizzled), evaluated with the layouts'
    own coordinates: each element of the block has one place, written and read there; a
    thread's run of registers is one vector at consecutive, aligned places; and a warp's
    16-byte reads and its writes of column pairs touch each bank no more often than the
    bytes they move require."""
    from tilecc.transpiler.render_blocks import _swizzled_runs

    kernel, _ = MM.matmul_kernel.lower(MM.matmul_kernel._specs(sig, {}), target, warps,
                                       num_stages=3, arch=arch)
    [convert] = [op for op in kernel.body.ops if op.kind == "convert"]
    x, y = convert.operands[0], convert.result
    rows, cols = x.type.shape
    esize = x.dtype.itemsize
    per_chunk = 16 // esize
    runs = _swizzled_runs(x, y)
    assert runs is not None and runs[1] == per_chunk

    def place(row: int, col: int) -> int:
        return _swizzled_chunk(cols // per_chunk, row, col // per_chunk) * per_chunk + \
            col % per_chunk

    assert sorted(place(r, c) for r in range(rows) for c in range(cols)) == \
        list(range(rows * cols))
    threads = warps * 32
    for value, run in ((x, runs[0]), (y, runs[1])):
        p = value.layout
        seen = set()
        for warp in range(warps):
            for first in range(0, p.regs, run):
                words: dict[int, set[int]] = {}
                for lane in range(32):
                    t = warp * 32 + lane
                    row, col = p.coords(t, first, 32)
                    assert col % run == 0 and place(row, col) % run == 0
                    for k in range(run):  # one vector: consecutive columns, consecutive places
                        assert p.coords(t, first + k, 32) == (row, col + k)
                        assert place(row, col + k) == place(row, col) + k
                        seen.add((row, col + k))
                    start = place(row, col) * esize
                    for word in range(start // 4, (start + run * esize + 3) // 4):
                        words.setdefault(word % 32, set()).add(word)
                distinct = sum(len(w) for w in words.values())
                assert max(len(w) for w in words.values()) <= -(-distinct // 32), \
                    (value.layout, warp, first)
        assert len(seen) == rows * cols and threads * p.regs >= rows * cols


@pytest.mark.parametrize("warps,sig", [
    (8, _signature("bf16")), (4, _signature("fp16", bm=128, bn=128)),
    (4, _signature("fp16", bm=64, bn=64, bk=32)), (8, _signature("fp16", bm=64, bn=128)),
], ids=["128x256-w8", "128x128-w4", "64x64-w4", "64x128-w8"])
def test_stmatrix_writes_each_accumulator_pair_where_the_reads_find_it(warps, sig) -> None:
    """sm_90's conversion writes the accumulator with stmatrix: evaluated with the layout's
    own coordinates (`stmatrix_lands`), every element lands where `swizzled` places it,
    where the reads look."""
    kernel, _ = MM.matmul_kernel.lower(MM.matmul_kernel._specs(sig, {}), "cuda", warps,
                                       num_stages=3, arch="sm_90a")
    [convert] = [op for op in kernel.body.ops if op.kind == "convert"]
    p, (rows, cols) = convert.operands[0].layout, convert.operands[0].type.shape
    assert p.matrix_fragments
    src = MM.matmul_kernel.source(sig, num_warps=warps, num_stages=3, arch="sm_90a")
    assert src.count("tc::stmatrix_x4(") == 1

    def place(row: int, col: int) -> int:
        return _swizzled_chunk(cols // 8, row, col // 8) * 8 + col % 8

    assert len(stmatrix_lands(p, warps, place)) == rows * cols


def stmatrix_lands(p, warps: int, place) -> set:
    """The elements stmatrix writes from placement `p` (render_blocks.fragment_rows), each
    checked to land at `place(row, col)` (in 16-bit elements), with each 8 x 8 block's
    rows in 8 different bank groups: lane i gives the start of row i % 8 of the block of
    registers (j, j + 1), j = r + 2 (i / 8), from its own coordinates; register k of lane
    i lands at column 2 (i % 4) of row i / 4 of block k."""
    landed = set()
    for warp in range(warps):
        for r in range(0, p.regs, 8):
            address = []  # lane i: the start of the 16-byte row it gives
            for i in range(32):
                row, col = p.coords(warp * 32 + i, r + 2 * (i // 8), 32)
                address.append(place(row - i // 4 + i % 8, col // 8 * 8))
            for i in range(32):
                for k in range(4):
                    held = [p.coords(warp * 32 + i, r + 2 * k + h, 32) for h in (0, 1)]
                    at = address[8 * k + i // 4] + 2 * (i % 4)
                    assert [place(*e) for e in held] == [at, at + 1], (warp, r, i, k)
                    landed.update(held)
            for k in range(4):
                assert len({address[8 * k + q] * 2 // 16 % 8 for q in range(8)}) == 8
    return landed


def test_only_fragment_pairs_go_by_stmatrix() -> None:
    """`Placement.matrix_fragments` holds exactly where every register pair of every warp is
    one 8 x 8 block in fragment order (checked against the coordinates, over placements
    near the accumulators')."""
    from tilecc.transpiler.passes.placement import Blocked, Placement

    def fragments(p: Placement) -> bool:
        warps = p.base.wpc[0] * p.base.wpc[1]
        if p.regs % 8:
            return False
        held = set()
        for warp in range(warps):
            for r in range(0, p.regs, 2):
                corners = set()
                for i in range(32):
                    (r0, c0), (r1, c1) = (p.coords(warp * 32 + i, r + h, 32) for h in (0, 1))
                    corners.add((r0 - i // 4, c0 - 2 * (i % 4)))
                    if (r1, c1) != (r0, c0 + 1):
                        return False
                    held.update({(r0, c0), (r1, c1)})
                if len(corners) != 1 or next(iter(corners))[1] % 8:
                    return False
        return len(held) == p.regs * warps * 32  # each element once

    cases = []
    for spt in ((1, 2), (2, 2), (1, 4), (1, 1)):
        for tpw in ((8, 4), (4, 8), (16, 2)):
            for wpc in ((4, 1), (2, 2), (1, 1)):
                for order in ((1, 0), (0, 1)):
                    for shape in ((64, 64), (16, 8), (128, 32), (8, 64)):
                        cases.append(Placement(Blocked(spt, tpw, wpc, order), shape))
    got = [(p.matrix_fragments, fragments(p)) for p in cases]
    assert all(a == b for a, b in got), [p for p, (a, b) in zip(cases, got) if a != b]
    assert sum(a for a, _ in got) >= 4


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_converted_epilogue_compiles_cleanly(arch) -> None:
    require_cuda_compiler()
    for dtype in ("fp16", "bf16"):
        assert_clean_compile(MM.matmul_kernel, _signature(dtype), "cuda", arch, num_warps=8,
                             num_stages=3)
    assert_clean_compile(MM.matmul_kernel, _signature("fp16", bm=128, bn=128), "cuda", arch,
                         num_warps=4, num_stages=4)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(256, 512, 128), (200, 264, 72), (1000, 1000, 1000)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gpu_matmul_with_the_converted_epilogue(m, n, k, dtype) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    dt = getattr(torch, dtype)
    torch.manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", dtype=dt)
    b = torch.randn(k, n, device="cuda", dtype=dt)
    ref = (a.float() @ b.float())
    for bm, bn, bk, w, s in [(128, 256, 64, 8, 3), (128, 128, 64, 4, 4), (64, 64, 32, 4, 3)]:
        c = torch.full((m, n), 7.0, device="cuda", dtype=dt)
        cfg = tilecc.Config({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk,
                             "GROUP_SIZE_M": 8}, num_warps=w, num_stages=s)
        MM.launch(a, b, c, cfg)
        torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=0.25 if k > 500 else 0.1)


def _persistent_example():
    import os
    import runpy

    path = os.path.join(os.path.dirname(__file__), "..", "examples", "persistent_matmul.py")
    return runpy.run_path(path, run_name="not_main")


PERSISTENT_SIGNATURE = ("tensordesc<fp16[128, 64]>:16, tensordesc<fp16[64, 256]>:16, "
                        "tensordesc<fp16[128, 256]>:16, i32:16, i32:16, i32:16, 128, 256, 64, "
                        "8, 132")


def test_a_persistent_kernels_output_tiles_are_stored_in_16_byte_vectors() -> None:
    """The store of each output tile, in the loop over tiles after its K loop, goes
    through the tiles' memory too (on sm_80: sm_90's copy engine writes them,
    test_tma_store.py); a barrier after the conversion's reads keeps the next tile's
    copies from overwriting what another thread has still to read."""
    kernel = _persistent_example()["persistent_matmul_kernel"]
    lowered, notes = kernel.lower(kernel._specs(PERSISTENT_SIGNATURE, {}), "cuda", 8,
                                  num_stages=3, arch="sm_80")
    converts = [op for op in lowered.walk() if op.kind == "convert"]
    stores = [op for op in lowered.walk() if op.kind == "store"]
    assert [(c.attrs.get("reuse_tiles"), c.attrs.get("tiles_again")) for c in converts] == \
        [(True, True)]
    assert [s.attrs["plan"].vec for s in stores] == [8]
    src = kernel.source(PERSISTENT_SIGNATURE, num_warps=8, num_stages=3, arch="sm_80")
    epilogue = src[src.index("// L59: c_desc.store"):]
    assert epilogue.index("every thread is done with the tl.dot tiles") < \
        epilogue.index("tc::load<8>(buffer") < \
        epilogue.index("__syncthreads();  // read by every thread: the tiles can be refilled") < \
        epilogue.index("tc::store_if<8>(")


def test_a_persistent_kernels_converted_store_compiles_cleanly() -> None:
    require_cuda_compiler()
    kernel = _persistent_example()["persistent_matmul_kernel"]
    assert_clean_compile(kernel, PERSISTENT_SIGNATURE, "cuda", "sm_80", num_warps=8,
                         num_stages=3)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(1000, 1000, 200), (520, 776, 136)])
def test_gpu_persistent_matmul_many_tiles_per_program(m, n, k) -> None:
    """Few programs, many output tiles each: every tile's conversion in the tiles' memory
    is done before the next tile's copies land there (64 x 32 blocks: rows of 64 bytes,
    which the copy engine's 128-byte boxes do not store), and the copy engine's stores
    of one tile have read their tile before the next is written there (the others)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    example = _persistent_example()
    torch.manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    ref = (a.float() @ b.float()).half()
    for bm, bn, bk, w, s in [(128, 256, 64, 8, 3), (128, 128, 64, 4, 4), (64, 32, 32, 4, 3),
                             (128, 256, 64, 8, 4)]:  # (the last: no room for the TMA tile)
        c = torch.full((m, n), 7.0, device="cuda", dtype=torch.float16)
        cfg = tilecc.Config({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk,
                             "GROUP_SIZE_M": 4}, num_warps=w, num_stages=s)
        example["matmul"](a, b, c, cfg, 3)
        torch.testing.assert_close(c, ref, rtol=1e-2, atol=5e-2)
