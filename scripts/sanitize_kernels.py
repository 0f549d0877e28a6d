"""Run the example and test kernels on ragged sizes, for compute-sanitizer (memcheck).

    compute-sanitizer --tool memcheck python scripts/sanitize_kernels.py
Every launch uses a size that is not a multiple of the block, so any unmasked lane past
the end of an array is an out-of-bounds access the sanitizer reports.
"""

import os
import sys

import cupy
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

import tilecc  # noqa: E402
from test_gpu import add_kernel, int_kernel, loop_kernel, silu_mul_kernel  # noqa: E402

for n in (1, 17, 1000, 4099, 100003):
    for dtype in (np.float32, np.float16):
        x = cupy.asarray(np.random.rand(n).astype(dtype))
        out = cupy.empty_like(x)
        add_kernel[(tilecc.cdiv(n, 1024),)](x, x, out, n, BLOCK_SIZE=1024)
        silu_mul_kernel[(tilecc.cdiv(n, 2048),)](x, x, out, n, BLOCK_SIZE=2048, num_warps=8)
    xf = cupy.asarray(np.random.rand(n).astype(np.float32))
    loop_kernel[(tilecc.cdiv(n, 256),)](xf, xf, n, 3, 2.0, BLOCK=256)
    a = cupy.arange(1, n + 1, dtype=cupy.int32)
    int_kernel[(tilecc.cdiv(n, 512),)](a, a, a, n, BLOCK=512)

# Every test case once, on a ragged size, first dtype that CuPy can hold.
import kernels as K  # noqa: E402

for case in K.CASES:
    dtype = next((d for d in case.dtypes if K.BF16 not in (d if isinstance(d, tuple) else (d,))),
                 None)
    if dtype is None:
        continue
    n = min(case.max_n, 3 * case.block + 5)
    args = case.make_args(n, dtype, np.random.default_rng(0), masked=True)
    dev = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    case.kernel[case.grid(n)](*dev)
# tl.dot cases (their cp.async copies skip masked-off vectors), at the largest sizes drawn
import kernels_dot as KD  # noqa: E402

for case in KD.CASES_DOT:
    for dtype in case.dtypes:
        if dtype == K.BF16:
            continue
        n = tuple(top for _, top in case.dims)
        args = case.make_args(n, dtype, np.random.default_rng(0))
        dev = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        case.kernel[case.grid(n)](*dev, **case.options)
# the attention example at a ragged length (masked keys and queries), both masks, d 64 / 128,
# forward and backward; the forward again over enough key blocks for the stages' mbarriers
# to go through several phases
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import attention as AT  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import attention_descriptor as AD  # noqa: E402

for d in (64, 128):
    for causal in (False, True):
        q, k, v, do = (cupy.asarray(np.random.default_rng(i).standard_normal((1, 2, 200, d)),
                                    dtype=cupy.float16) for i in range(4))
        out, lse = AT.attention(q, k, v, causal, xp=cupy)
        AT.attention_backward(q, k, v, out, lse, do, causal)
        q, k, v = (cupy.asarray(np.random.default_rng(i).standard_normal((1, 2, 700, d)),
                                dtype=cupy.float16) for i in range(3))
        AT.attention(q, k, v, causal, xp=cupy)
        # the same through tensor descriptors: K and V by TMA, the stages released by the
        # warps (8 key blocks)
        q, k, v = (cupy.asarray(np.random.default_rng(i).standard_normal((1, 2, 1024, d)),
                                dtype=cupy.float16) for i in range(3))
        out, lse = cupy.empty_like(q), cupy.empty((2, 1024), dtype=cupy.float32)
        AD.attention_fwd_descriptors[(8, 2)](q, k, v, out, lse, d ** -0.5, 2048, 1024,
                                             HEAD_DIM=d, BLOCK_M=128, BLOCK_N=128,
                                             CAUSAL=causal, num_warps=8, num_stages=3)
# atomics on blocks that several threads hold (one atomic per element, result broadcast)
import kernels_atomics as KA  # noqa: E402

for op in KA.OPS:
    for S in (4, 16, 64):
        dev = [cupy.asarray(a) for a in KA.rmw_args(op, S, np.int32)]
        KA.replicated_rmw_kernel[(1,)](*dev, S=S, C=S, OP=KA.OP_CODE[op])
# sort, topk, flip, gather, histogram, cat, map_elementwise: shared memory and shuffles
import kernels_reorder as KR  # noqa: E402

for case in KR.CASES_REORDER:
    dtype = next(d for d in case.dtypes if d != K.BF16)
    n = tuple(top for _, top in case.dims)
    args = case.make_args(n, dtype, np.random.default_rng(0))
    dev = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    case.kernel[case.grid(n)](*dev, **case.options)
# tensor descriptors: TMA copies on sm_90 (host-side descriptors and descriptors made in
# the kernel), bounds-checked loads elsewhere; ragged M, N and K
import runpy  # noqa: E402

import kernels_ptr as KP  # noqa: E402

PERSISTENT = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "examples",
                                         "persistent_matmul.py"), run_name="sanitize")
sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
for m, n, k in ((300, 264, 200), (129, 80, 48), (64, 64, 16)):
    a = cupy.asarray(np.random.rand(m, k).astype(np.float16))
    b = cupy.asarray(np.random.rand(k, n).astype(np.float16))
    c = cupy.zeros((m, n), np.float16)
    for warps, stages in ((4, 3), (8, 4)):
        PERSISTENT["matmul"](a, b, c, tilecc.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128,
                                                     "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8},
                                                    num_warps=warps, num_stages=stages), sms)
        KP.desc_matmul_kernel[(tilecc.cdiv(m, 128), tilecc.cdiv(n, 128))](
            a, b, c, m, n, k, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64,
            num_warps=warps, num_stages=stages)
# the pointer GEMM of examples/matmul.py on one warpgroup, 4 stages: the threads' cp.async
# copies arrive on each stage's mbarrier (no barrier makes a stage everyone's)
MM = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "examples", "matmul.py"),
                    run_name="sanitize")
for m, n, k in ((300, 264, 200), (129, 80, 48)):
    a = cupy.asarray(np.random.rand(m, k).astype(np.float16))
    b = cupy.asarray(np.random.rand(k, n).astype(np.float16))
    c = cupy.zeros((m, n), np.float16)
    for bm, bn, bk in ((128, 128, 64), (64, 256, 32)):
        MM["matmul_kernel"][(tilecc.cdiv(m, bm) * tilecc.cdiv(n, bn),)](
            a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
            BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, ACTIVATION="", num_warps=4, num_stages=4)
# block pointers moved in a loop carry their pointers (tl.advance adds to them): the
# block-pointer GEMM at ragged sizes, and a walk backwards by a run-time step, read after
# the loop past the tensor's start (masked)
for m, n, k in ((300, 264, 200), (129, 80, 48)):
    a = cupy.asarray(np.random.rand(m, k).astype(np.float16))
    b = cupy.asarray(np.random.rand(k, n).astype(np.float16))
    c = cupy.zeros((m, n), np.float16)
    for bm, bn, bk, warps, stages in ((128, 128, 64, 4, 4), (128, 256, 64, 8, 3),
                                      (64, 64, 32, 4, 3)):
        KP.bp_matmul_kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
            a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
            BLOCK_SIZE_K=bk, num_warps=warps, num_stages=stages)
for m, n, step in ((13, 70, 9), (16, 5, 3)):
    x = cupy.asarray(np.random.rand(m, n).astype(np.float32))
    KP.bp_walk_kernel[(1,)](x, cupy.zeros((16, 8), np.float32), m, n, n, step, BM=16, BN=8)
# loads read ahead for a product's operands (cp.async into each thread's own stages, read
# back with no barrier): int8 weights cast, fp8 descriptors up-cast with b.T; ragged sizes
import kernels_dot as RA  # noqa: E402

for m, n, k in ((300, 264, 200), (129, 80, 48)):
    rng = np.random.default_rng(m)
    a = cupy.asarray(rng.integers(-3, 4, (m, k)).astype(np.float16))
    b = cupy.asarray(rng.integers(-8, 8, (k, n)).astype(np.int8))
    s = cupy.ones(n, np.float16)
    c = cupy.zeros((m, n), np.float32)
    for bm, bn, bk, warps, stages in ((128, 128, 64, 4, 4), (64, 64, 32, 4, 3)):
        RA.int8_weights_kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
            a, b, s, c, m, n, k, BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=stages)
    import torch

    a8, b8 = (torch.randint(0, 64, shape, dtype=torch.uint8, device="cuda").view(
        torch.float8_e4m3fn) for shape in ((m, k), (n, k)))
    c8 = torch.zeros((m, n), device="cuda")
    for bm, bn, bk, warps in ((128, 128, 64, 8), (64, 64, 64, 4)):
        RA.upcast_bt_kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
            a8, b8, c8, m, n, k, BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=3)
    torch.cuda.synchronize()
# random programs: reductions, scans and atomics through shared memory, many dtypes
import tempfile  # noqa: E402

from test_random_kernels import CAMPAIGN_SEEDS  # noqa: E402
from tilecc.testing import random_kernels as RK  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    for seed in [*range(80), *CAMPAIGN_SEEDS]:
        prog = RK.generate(seed)
        dev = [RK._to_device(a) if isinstance(a, np.ndarray) else a for a in prog.make_args()]
        prog.load(tmp)[prog.grid](*dev, num_warps=prog.num_warps,
                                 num_stages=prog.num_stages)
cupy.cuda.runtime.deviceSynchronize()
print(f"sanitizer run: all launches completed ({len(K.CASES)} test cases, "
      f"{len(KD.CASES_DOT)} dot cases, {len(KR.CASES_REORDER)} reordering cases, "
      "4 attention forward and backward passes, 4 longer forward passes and 4 through "
      "descriptors, 12 descriptor "
      "matmuls, 4 pointer matmuls whose copies arrive on mbarriers, 6 block-pointer "
      "matmuls and 2 block-pointer walks whose loops carry the pointers, 16 read-ahead "
      "products, "
      f"{len(KA.OPS) * 3} replicated atomics and {80 + len(CAMPAIGN_SEEDS)} random programs "
      "included)")
