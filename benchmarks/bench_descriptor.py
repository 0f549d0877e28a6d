"""The tensor-descriptor matmul through tilecc and Triton, beside the block-pointer one.

    python benchmarks/bench_descriptor.py [--quick]

`tests/kernels_ptr.py` has `desc_matmul_kernel` (tl.make_tensor_descriptor, desc.load /
store) and `bp_matmul_kernel` (the same matmul with block pointers).  Triton compiles the
descriptor kernel to TMA copies on sm_90; tilecc lowers a descriptor to a bounds-checked
block pointer (cp.async copies ahead of the tensor cores), so its two columns should match
and the Triton column shows what TMA is worth.  Each cell is the best of the configurations
tried; every result is checked against torch.matmul first.  Last columns: Triton time /
tilecc time (above 1: tilecc faster).

A second table runs the persistent matmul of `examples/persistent_matmul.py` (tutorial
09's pattern: host-side TensorDescriptor arguments, one program per SM) through both,
each given its own `TensorDescriptor` class (Triton: TMA descriptors built on the host).
"""

from __future__ import annotations

import argparse
import os
import sys

import runpy

import torch
import triton
from triton.testing import do_bench
from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)
import kernels_ptr as KP  # noqa: E402
from bench_block_ptr import CONFIGS, SHAPES, best  # noqa: E402
from triton_clone import as_triton  # noqa: E402

import tilecc  # noqa: E402

EXAMPLE = runpy.run_path(os.path.join(HERE, "..", "examples", "persistent_matmul.py"),
                         run_name="bench")


def best_persistent(kernel, descriptor, a, b, c, configs, ref) -> float:
    """The fastest configuration's time (ms) of the persistent host-descriptor matmul,
    `descriptor` the TensorDescriptor class this compiler takes."""
    (m, k), n = a.shape, b.shape[1]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = float("inf")
    for bm, bn, bk, warps, stages in configs:
        descs = (descriptor.from_tensor(a, [bm, bk]), descriptor.from_tensor(b, [bk, bn]),
                 descriptor.from_tensor(c, [bm, bn]))
        grid = (min(sms, tilecc.cdiv(m, bm) * tilecc.cdiv(n, bn)),)

        def fn():
            kernel[grid](*descs, m, n, k, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
                         GROUP_SIZE_M=8, NUM_SMS=sms, num_warps=warps, num_stages=stages)
        try:
            c.zero_()
            fn()
            torch.cuda.synchronize()
        except Exception as e:  # a configuration this compiler cannot build
            print(f"  skipped {bm}x{bn}x{bk}: {type(e).__name__}: {str(e).splitlines()[0][:90]}")
            continue
        torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=0.25)
        out = min(out, do_bench(fn, warmup=25, rep=100, return_mode="median"))
    return out


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
    kernel = EXAMPLE["persistent_matmul_kernel"]
    print(f"\npersistent matmul, host-side descriptors, TFLOP/s (best configuration)")
    print(f"{'M x K x N':>16} {'tc host':>9} {'tr host':>9} {'tc/tr':>7}")
    for m, k, n in SHAPES:
        torch.manual_seed(0)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        ref = a.float() @ b.float()
        if k % 8:  # a descriptor's rows are multiples of 16 bytes
            continue
        ours = best_persistent(kernel, tilecc.TensorDescriptor, a, b, c, configs, ref)
        theirs = best_persistent(as_triton(kernel), TritonDescriptor, a, b, c, configs, ref)
        tf = [2 * m * n * k / (t * 1e-3) / 1e12 for t in (ours, theirs)]
        print(f"{f'{m}x{k}x{n}':>16} {tf[0]:9.1f} {tf[1]:9.1f} {theirs / ours:7.3f}", flush=True)


if __name__ == "__main__":
    main()
