"""The block-pointer matmul against the pointer-arithmetic one, through tilecc and Triton.

    python benchmarks/bench_block_ptr.py [--quick]

`tests/kernels_ptr.py` has the same matmul twice: `bp_matmul_kernel` (tl.make_block_ptr,
tl.advance, boundary_check) and `ptr_matmul_kernel` (pointer arithmetic and masks).
tilecc lowers block pointers to the pointer version's IR, so its two columns should match;
Triton compiles the very same sources (`triton_clone.as_triton`).  Each cell is the best
of the configurations tried, the four timed side by side at each
(`timing.fastest_configs`); TFLOP/s counts 2·M·N·K; every result is checked against
torch.matmul first.  The last columns: tilecc block-ptr / Triton block-ptr and tilecc
pointer / Triton pointer (time ratios, above 1: tilecc faster).
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)
import kernels_ptr as KP  # noqa: E402
from timing import fastest_configs  # noqa: E402
from triton_clone import as_triton  # noqa: E402

import tilecc  # noqa: E402

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (1000, 1000, 1000), (4097, 4096, 4096)]
CONFIGS = [(128, 256, 64, 8, 3), (128, 128, 64, 4, 4), (128, 128, 32, 4, 4),
           (64, 128, 32, 4, 4), (256, 128, 64, 8, 4)]


def launcher(kernel, a, b, c, strides: bool = True):
    """config -> a function launching `kernel` at it; `strides`: the kernel takes the
    operands' strides after M, N, K (the descriptor kernel reads row-major operands
    without)."""
    (m, k), n = a.shape, c.shape[1]
    given = (*a.stride(), *b.stride(), *c.stride()) if strides else ()

    def at(config):
        bm, bn, bk, warps, stages = config
        return lambda: kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
            a, b, c, m, n, k, *given, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
            num_warps=warps, num_stages=stages)
    return at


def fastest(launchers: dict, c, ref, configs) -> dict:
    """{name: ms}: each launcher's fastest configuration, all timed side by side
    (`timing.fastest_configs`), every result checked against `ref` first."""
    got = fastest_configs(launchers, configs, prepare=c.zero_, check=lambda name:
                          torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=0.25))
    return {name: ms for name, (ms, _) in got.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    configs = CONFIGS[:2] if args.quick else CONFIGS
    kernels = {"tc block": KP.bp_matmul_kernel, "tc ptr": KP.ptr_matmul_kernel,
               "tr block": as_triton(KP.bp_matmul_kernel),
               "tr ptr": as_triton(KP.ptr_matmul_kernel)}
    print(f"{torch.cuda.get_device_name()}: fp16 matmul, TFLOP/s (best configuration)")
    header = (f"{'M x K x N':>16} " + " ".join(f"{k:>9}" for k in kernels) +
              f" {'tc/tr blk':>10} {'tc/tr ptr':>10}")
    print(header)
    print("-" * len(header))
    for m, k, n in SHAPES:
        torch.manual_seed(0)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        ref = a.float() @ b.float()
        times = fastest({name: launcher(kern, a, b, c) for name, kern in kernels.items()},
                        c, ref, configs)
        tflops = " ".join(f"{2 * m * n * k / (t * 1e-3) / 1e12:9.1f}" for t in times.values())
        print(f"{f'{m}x{k}x{n}':>16} {tflops} "
              f"{times['tr block'] / times['tc block']:10.3f} "
              f"{times['tr ptr'] / times['tc ptr']:10.3f}", flush=True)


if __name__ == "__main__":
    main()
