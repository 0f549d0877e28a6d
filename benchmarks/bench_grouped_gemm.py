"""Grouped GEMM (Triton's tutorial 08 pattern, examples/grouped_gemm.py) through tilecc and
Triton, against one torch.matmul per problem.

    python benchmarks/bench_grouped_gemm.py

One launch multiplies every (A_g, B_g) pair; the matrices reach the kernel as int64 tables
of device addresses.  Triton compiles the same kernel source (`triton_clone.as_triton`).
Times are device-event medians, the three timed side by side at each block shape
(`timing.fastest_configs`, 40 queued calls a sample); TFLOP/s counts 2·M·N·K summed over
the group; every result is checked against torch.matmul first.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
from timing import fastest_configs  # noqa: E402
from triton_clone import as_triton  # noqa: E402

spec = importlib.util.spec_from_file_location(
    "grouped_gemm", os.path.join(HERE, "..", "examples", "grouped_gemm.py"))
GG = importlib.util.module_from_spec(spec)
spec.loader.exec_module(GG)

GROUPS = {
    "4 x 1024^3": [(1024, 1024, 1024)] * 4,
    "8 x 512^3": [(512, 512, 512)] * 8,
    "mixed": [(2048, 1024, 512), (512, 2048, 1024), (1000, 1000, 1000), (4096, 256, 4096)],
    "16 x 256^3": [(256, 256, 256)] * 16,
}
BLOCKS = [(128, 128, 32, 4), (64, 128, 32, 4), (128, 64, 64, 4)]


def main() -> None:
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    tr_kernel = as_triton(GG.grouped_matmul_kernel)
    print(f"{torch.cuda.get_device_name()}: fp16 grouped GEMM, TFLOP/s (best block shape)")
    header = f"{'group':>12} {'tilecc':>8} {'Triton':>8} {'torch loop':>10} {'tc/Triton':>9}"
    print(header)
    print("-" * len(header))
    for label, shapes in GROUPS.items():
        torch.manual_seed(0)
        a_list = [torch.randn(m, k, device="cuda", dtype=torch.float16) for m, n, k in shapes]
        b_list = [torch.randn(k, n, device="cuda", dtype=torch.float16) for m, n, k in shapes]
        c_list = [torch.empty(m, n, device="cuda", dtype=torch.float16) for m, n, k in shapes]
        refs = [a.float() @ b.float() for a, b in zip(a_list, b_list)]
        flops = sum(2 * m * n * k for m, n, k in shapes)
        tables = [torch.tensor([x.data_ptr() for x in xs], device="cuda", dtype=torch.int64)
                  for xs in (a_list, b_list, c_list)]
        sizes = torch.tensor([v for m, n, k in shapes for v in (m, n, k)], device="cuda",
                             dtype=torch.int32)
        lds = torch.tensor([v for a, b, c in zip(a_list, b_list, c_list)
                            for v in (a.stride(0), b.stride(0), c.stride(0))],
                           device="cuda", dtype=torch.int32)

        def launcher(kernel):
            def at(config):
                bm, bn, bk, warps = config
                return lambda: kernel[(sms,)](*tables, sizes, lds, len(shapes), NUM_SM=sms,
                                              BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                                              BLOCK_SIZE_K=bk, num_warps=warps)
            return at

        def zero() -> None:
            for c in c_list:
                c.zero_()

        def check(tool: str) -> None:
            if tool != "torch":
                for c, ref in zip(c_list, refs):
                    torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=0.25)

        got = fastest_configs(
            {"tilecc": launcher(GG.grouped_matmul_kernel), "Triton": launcher(tr_kernel),
             "torch": lambda config: lambda: [torch.matmul(a, b)
                                              for a, b in zip(a_list, b_list)]},
            BLOCKS, prepare=zero, check=check, calls=40, sleep=True)
        times = {tool: ms for tool, (ms, _) in got.items()}
        t_torch = times["torch"]
        tf = lambda t: flops / (t * 1e-3) / 1e12  # noqa: E731
        print(f"{label:>12} {tf(times['tilecc']):8.1f} {tf(times['Triton']):8.1f} "
              f"{tf(t_torch):10.1f} {times['Triton'] / times['tilecc']:9.3f}", flush=True)


if __name__ == "__main__":
    main()
