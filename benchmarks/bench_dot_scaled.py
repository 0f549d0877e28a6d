"""Block-scaled matmul (`tl.dot_scaled`, mxfp8 and mxfp4) through tilecc and Triton.

    python benchmarks/bench_dot_scaled.py [--quick]

The kernel of `examples/block_scaled_matmul.py` (host-side descriptors for A and B, e8m0
scales per 32 elements) through both compilers: on GPUs without block-scaled tensor-core
instructions (Hopper) both up-cast to bf16 and use the bf16 tensor cores.  Each cell is the
best of the configurations tried, the two timed side by side at each
(`timing.fastest_configs`); every result is checked against a float32 product of the
scaled values first.  Last column: Triton time / tilecc time (above 1: tilecc faster).
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys

import numpy as np
import torch
from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
from timing import fastest_configs  # noqa: E402
from triton_clone import as_triton  # noqa: E402

import tilecc  # noqa: E402

EXAMPLE = runpy.run_path(os.path.join(HERE, "..", "examples", "block_scaled_matmul.py"),
                         run_name="bench")
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 8192)]
CONFIGS = [(128, 128, 64, 8, 3), (128, 128, 128, 8, 3), (128, 64, 128, 4, 3), (64, 64, 64, 4, 4)]


def launcher(kernel, descriptor, fmt, ops, c):
    """config -> a function launching the block-scaled matmul `kernel` at it, `descriptor`
    the TensorDescriptor class this compiler takes."""
    a, sa, b, sb = ops
    m, n = a.shape[0], b.shape[0]
    pack = 2 if fmt == "e2m1" else 1
    k = a.shape[1] * pack

    def at(config):
        bm, bn, bk, warps, stages = config
        ad = descriptor.from_tensor(a, [bm, bk // pack])
        bd = descriptor.from_tensor(b, [bn, bk // pack])
        return lambda: kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
            ad, sa, bd, sb, c, m, n, k, k // 32, k // 32, n, FORMAT=fmt, BLOCK_M=bm,
            BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)
    return at


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    configs = CONFIGS[:2] if args.quick else CONFIGS
    kernel = EXAMPLE["block_scaled_matmul_kernel"]
    print(f"{torch.cuda.get_device_name()}: block-scaled matmul, TFLOP/s (best configuration)")
    print(f"{'format':>6} {'M x K x N':>16} {'tilecc':>8} {'Triton':>8} {'tc/tr':>7}")
    for fmt in ("e4m3", "e2m1"):
        for m, k, n in SHAPES[:2] if args.quick else SHAPES:
            rng = np.random.default_rng(0)
            a, sa, b, sb, av, bv = EXAMPLE["random_operands"](rng, m, n, k, fmt)
            ops = [torch.from_numpy(x).cuda() for x in (a, sa, b, sb)]
            ref = (torch.from_numpy(av).cuda() @ torch.from_numpy(bv).cuda().T).float()
            c = torch.empty(m, n, device="cuda")
            got = fastest_configs(
                {"tc": launcher(kernel, tilecc.TensorDescriptor, fmt, ops, c),
                 "tr": launcher(as_triton(kernel), TritonDescriptor, fmt, ops, c)},
                configs, prepare=c.zero_, check=lambda tool: torch.testing.assert_close(
                    c, ref, rtol=1e-3, atol=1e-3 * ref.abs().max().item()))
            ours, theirs = got["tc"][0], got["tr"][0]
            tf = [2 * m * n * k / (t * 1e-3) / 1e12 for t in (ours, theirs)]
            print(f"{fmt:>6} {f'{m}x{k}x{n}':>16} {tf[0]:8.1f} {tf[1]:8.1f} {theirs / ours:7.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
