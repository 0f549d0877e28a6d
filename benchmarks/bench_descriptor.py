"""The tensor-descriptor matmul through tilecc and Triton, beside the block-pointer one.

    python benchmarks/bench_descriptor.py [--quick]

`tests/kernels_ptr.py` has `desc_matmul_kernel` (tl.make_tensor_descriptor, desc.load /
store) and `bp_matmul_kernel` (the same matmul with block pointers).  Triton compiles the
descriptor kernel to TMA copies on sm_90; tilecc lowers a descriptor to a bounds-checked
block pointer (cp.async copies ahead of the tensor cores), so its two columns should match
and the Triton column shows what TMA is worth.  Each cell is the best of the configurations
tried; every result is checked against torch.matmul first.  Last columns: Triton time /
tilecc time (above 1: tilecc faster).
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import triton

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)
import kernels_ptr as KP  # noqa: E402
from bench_block_ptr import CONFIGS, SHAPES, best  # noqa: E402
from triton_clone import as_triton  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    configs = CONFIGS[:2] if args.quick else CONFIGS
    # Triton's device-side descriptors live in global scratch memory it asks for
    triton.set_allocator(lambda size, alignment, stream: torch.empty(
        size, device="cuda", dtype=torch.int8))
    kernels = {"tc desc": (KP.desc_matmul_kernel, False),  # (kernel, takes strides)
               "tr desc": (as_triton(KP.desc_matmul_kernel), False),
               "tc block": (KP.bp_matmul_kernel, True),
               "tr block": (as_triton(KP.bp_matmul_kernel), True)}
    print(f"{torch.cuda.get_device_name()}: fp16 matmul, TFLOP/s (best configuration)")
    header = (f"{'M x K x N':>16} " + " ".join(f"{k:>9}" for k in kernels) +
              f" {'tc/tr desc':>11} {'tc/tr blk':>10}")
    print(header)
    print("-" * len(header))
    for m, k, n in SHAPES:
        torch.manual_seed(0)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        ref = a.float() @ b.float()
        times = {name: best(kern, a, b, c, configs, ref, strides)
                 for name, (kern, strides) in kernels.items()}
        tflops = " ".join(f"{2 * m * n * k / (t * 1e-3) / 1e12:9.1f}" for t in times.values())
        print(f"{f'{m}x{k}x{n}':>16} {tflops} "
              f"{times['tr desc'] / times['tc desc']:11.3f} "
              f"{times['tr block'] / times['tc block']:10.3f}", flush=True)


if __name__ == "__main__":
    main()
