"""The tensor-descriptor matmul through tilecc and Triton, beside the block-pointer one.

    python benchmarks/bench_descriptor.py [--quick]

`tests/kernels_ptr.py` has `desc_matmul_kernel` (tl.make_tensor_descriptor, desc.load /
store) and `bp_matmul_kernel` (the same matmul with block pointers).  Both compilers copy
the descriptor kernel's operands with TMA on sm_90 (tilecc: its descriptors are made from
arguments, so the launch encodes their tensor maps); the block-pointer kernel runs
cp.async copies (tilecc) ahead of the tensor cores.  Each cell is the best of the
configurations tried, the kernels of a table timed side by side at each
(`timing.fastest_configs`); every result is checked against torch.matmul first.  Last
columns: Triton time / tilecc time (above 1: tilecc faster).

A second table runs the persistent matmul of `examples/persistent_matmul.py` (tutorial
09's pattern: host-side TensorDescriptor arguments, one program per SM) through both,
each given its own `TensorDescriptor` class (both: TMA copies from maps built on the host).
A third stores B as N x K and multiplies `b.T`, as tutorial 09 does: the persistent
kernel with host-side descriptors (`persistent_bt_kernel`) and `desc_bt_matmul` of
`tests/kernels_ptr.py` (descriptors made in the kernel).

    python benchmarks/bench_descriptor.py --fixed

times the persistent kernel instead at fixed configurations, both tools at the same one,
as a persistent launch (one program per SM) and as one program per output tile: where
the two ratios agree, a gap lies in the K loop, not in the walk over tiles.
"""

from __future__ import annotations

import argparse
import os
import sys

import runpy

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)
import kernels_ptr as KP  # noqa: E402
from bench_block_ptr import CONFIGS, SHAPES, fastest, launcher  # noqa: E402
from triton_clone import as_triton  # noqa: E402

import tilecc  # noqa: E402

EXAMPLE = runpy.run_path(os.path.join(HERE, "..", "examples", "persistent_matmul.py"),
                         run_name="bench")


def persistent_launcher(kernel, descriptor, a, b, c, bt: bool = False, per_tile: bool = False):
    """config -> a function launching the persistent host-descriptor matmul `kernel` at it,
    `descriptor` the TensorDescriptor class this compiler takes; `bt`: B is N x K;
    `per_tile`: one program per output tile instead of one per SM."""
    (m, k), n = a.shape, b.shape[0 if bt else 1]
    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def at(config):
        bm, bn, bk, warps, stages = config
        descs = (descriptor.from_tensor(a, [bm, bk]),
                 descriptor.from_tensor(b, [bn, bk] if bt else [bk, bn]),
                 descriptor.from_tensor(c, [bm, bn]))
        tiles = tilecc.cdiv(m, bm) * tilecc.cdiv(n, bn)
        programs = tiles if per_tile else sms
        return lambda: kernel[(min(programs, tiles),)](
            *descs, m, n, k, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
            GROUP_SIZE_M=8, NUM_SMS=programs, num_warps=warps, num_stages=stages)
    return at


def operands(m: int, k: int, n: int):
    """A (m x k) and B (k x n), random fp16 on the GPU (seeded), C, and A @ B in fp32."""
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    return a, b, torch.empty(m, n, device="cuda", dtype=torch.float16), a.float() @ b.float()


FIXED_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (1024, 32768, 1024), (8192, 512, 8192)]
# (M x K x N; the last: a short K, where the epilogue weighs most)
FIXED_CONFIGS = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (128, 128, 64, 4, 4)]


def fixed() -> None:
    """The persistent kernel at each fixed configuration, persistent and per tile."""
    kernel = EXAMPLE["persistent_matmul_kernel"]
    print(f"{torch.cuda.get_device_name()}: persistent matmul at fixed configurations, "
          "Triton time / tilecc time")
    print(f"{'M x K x N':>18} {'BMxBNxBK w s':>16} {'persistent':>11} {'per tile':>9}")
    for m, k, n in FIXED_SHAPES:
        a, b, c, ref = operands(m, k, n)
        for config in FIXED_CONFIGS:
            launchers = {}
            for per_tile in (False, True):
                launchers[("tc", per_tile)] = persistent_launcher(
                    kernel, tilecc.TensorDescriptor, a, b, c, per_tile=per_tile)
                launchers[("tr", per_tile)] = persistent_launcher(
                    as_triton(kernel), TritonDescriptor, a, b, c, per_tile=per_tile)
            got = fastest(launchers, c, ref, [config])
            ratios = [got[("tr", per_tile)] / got[("tc", per_tile)] for per_tile in (False, True)]
            bm, bn, bk, warps, stages = config
            print(f"{f'{m}x{k}x{n}':>18} {f'{bm}x{bn}x{bk} {warps} {stages}':>16} "
                  f"{ratios[0]:11.3f} {ratios[1]:9.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--fixed", action="store_true",
                        help="the persistent kernel at fixed configurations only")
    args = parser.parse_args()
    # Triton's device-side descriptors live in global scratch memory it asks for
    triton.set_allocator(lambda size, alignment, stream: torch.empty(
        size, device="cuda", dtype=torch.int8))
    if args.fixed:
        fixed()
        return
    configs = CONFIGS[:2] if args.quick else CONFIGS
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
        a, b, c, ref = operands(m, k, n)
        times = fastest({name: launcher(kern, a, b, c, strides)
                         for name, (kern, strides) in kernels.items()}, c, ref, configs)
        tflops = " ".join(f"{2 * m * n * k / (t * 1e-3) / 1e12:9.1f}" for t in times.values())
        print(f"{f'{m}x{k}x{n}':>16} {tflops} "
              f"{times['tr desc'] / times['tc desc']:11.3f} "
              f"{times['tr block'] / times['tc block']:10.3f}", flush=True)
    kernel = EXAMPLE["persistent_matmul_kernel"]
    print("\npersistent matmul, host-side descriptors, TFLOP/s (best configuration)")
    print(f"{'M x K x N':>16} {'tc host':>9} {'tr host':>9} {'tc/tr':>7}")
    for m, k, n in SHAPES:
        a, b, c, ref = operands(m, k, n)
        if k % 8:  # a descriptor's rows are multiples of 16 bytes
            continue
        got = fastest({"tc": persistent_launcher(kernel, tilecc.TensorDescriptor, a, b, c),
                       "tr": persistent_launcher(as_triton(kernel), TritonDescriptor, a, b, c)},
                      c, ref, configs)
        ours, theirs = got["tc"], got["tr"]
        tf = [2 * m * n * k / (t * 1e-3) / 1e12 for t in (ours, theirs)]
        print(f"{f'{m}x{k}x{n}':>16} {tf[0]:9.1f} {tf[1]:9.1f} {theirs / ours:7.3f}", flush=True)
    print("\nB stored N x K, multiplied as b.T (tutorial 09), TFLOP/s (best configuration)")
    print(f"{'M x K x N':>16} {'tc host':>9} {'tr host':>9} {'tc/tr':>7} {'tc desc':>9} "
          f"{'tr desc':>9} {'tc/tr':>7}")
    for m, k, n in SHAPES:
        if k % 8:
            continue
        torch.manual_seed(0)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        bt = torch.randn(n, k, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        ref = a.float() @ bt.float().T
        got = fastest({
            "tc host": persistent_launcher(KP.persistent_bt_kernel, tilecc.TensorDescriptor,
                                           a, bt, c, bt=True),
            "tr host": persistent_launcher(as_triton(KP.persistent_bt_kernel), TritonDescriptor,
                                           a, bt, c, bt=True),
            "tc made": launcher(KP.desc_bt_matmul, a, bt, c, False),
            "tr made": launcher(as_triton(KP.desc_bt_matmul), a, bt, c, False)}, c, ref, configs)
        host, made = [got["tc host"], got["tr host"]], [got["tc made"], got["tr made"]]
        tf = [2 * m * n * k / (t * 1e-3) / 1e12 for t in host + made]
        print(f"{f'{m}x{k}x{n}':>16} {tf[0]:9.1f} {tf[1]:9.1f} {host[1] / host[0]:7.3f} "
              f"{tf[2]:9.1f} {tf[3]:9.1f} {made[1] / made[0]:7.3f}", flush=True)


if __name__ == "__main__":
    main()
