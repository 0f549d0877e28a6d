"""Fused attention (forward) through tilecc, Triton and torch's SDPA, side by side.

    python benchmarks/bench_attention.py [--quick] [--block-ptr | --descriptors] [--sustained]

The kernel is examples/attention.py's `attention_fwd` (--block-ptr: the same written with
block pointers, `attention_block_ptr.py`; --descriptors: with tensor descriptors, K and V
by TMA, `attention_descriptor.py`): tilecc compiles it as it is, and
Triton compiles the very same function source with `tl` bound to `triton.language`.  Both
run the same block configurations (--quick: the example's own) and the best of each is
shown, beside `torch.nn.functional.scaled_dot_product_attention`.  Batch 4, 32 heads,
sequence 4096, head dimension 64 and 128, causal and not, fp16.  Times are device-event
medians after warm-up, the tools and SDPA interleaved for each configuration
(`timing.gpu_ms_queued`); TFLOP/s counts 4·B·H·N²·D, halved when causal.  Every result is
checked against SDPA first.  --sustained times each tool's fastest configuration again,
each alone under its own sustained load (`timing.gpu_ms_sustained`): rounds of a few calls
of each in turn give a kernel that draws more power than its neighbours the clock they
leave, which it does not get when it runs on its own.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import attention as AT  # noqa: E402
from timing import fastest_configs, gpu_ms_sustained  # noqa: E402
from triton_clone import as_triton  # noqa: E402

B, H, N = 4, 32, 4096
CONFIGS = AT.CONFIGS  # (BLOCK_M, BLOCK_N, num_warps, num_stages) per head dimension


def launcher(kernel, q, k, v, out, lse, causal, cfg):
    bm, bn, warps, stages = cfg
    d = q.shape[-1]
    grid = (-(-N // bm), B * H)
    where = (q.stride(0), q.stride(1), q.stride(2), H, N)
    if "Y" in kernel.arg_names:  # attention_descriptor.py: the heads' rows stacked
        where = (B * H * N, N)
    return lambda: kernel[grid](q, k, v, out, lse, d ** -0.5, *where, HEAD_DIM=d, BLOCK_M=bm,
                                BLOCK_N=bn, CAUSAL=causal, num_warps=warps,
                                num_stages=stages)


ROUNDS, CALLS = 11, 30


def best(kernels: dict, q, k, v, causal, configs, ref) -> dict:
    """{tool: (ms, label)}: each tool's fastest configuration, and SDPA's time.  Per
    configuration the tools and SDPA are timed interleaved under a sustained load
    (`timing.fastest_configs`), so that the GPU's clock, which moves under this load, is
    the same for all of them."""
    outs = {}

    def make(kernel, tool):
        def at(cfg):
            outs[tool] = torch.empty_like(q)
            lse = torch.empty((B * H, N), device="cuda")
            return launcher(kernel, q, k, v, outs[tool], lse, causal, cfg)
        return at

    launchers = {tool: make(kernel, tool) for tool, kernel in kernels.items()}
    launchers["SDPA"] = lambda cfg: (
        lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))

    def check(tool: str) -> None:
        if tool in outs:
            torch.testing.assert_close(outs[tool], ref, atol=2e-2, rtol=2e-2)

    return fastest_configs(launchers, configs, check=check, rounds=ROUNDS, calls=CALLS)


def sustained(kernels: dict, q, k, v, causal, got: dict) -> dict:
    """{tool: ms}: each tool at its fastest configuration in `got`, and SDPA, timed again
    each alone under its own sustained load (`timing.gpu_ms_sustained`), the median of
    its rounds."""
    cases = {"SDPA": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)}
    for tool, kernel in kernels.items():
        out, lse = torch.empty_like(q), torch.empty((B * H, N), device="cuda")
        cases[tool] = launcher(kernel, q, k, v, out, lse, causal, got[tool][1])
    timed = gpu_ms_sustained(cases, rounds=5)
    return {tool: statistics.median(times) for tool, times in timed.items()}


def label(cfg) -> str:
    return "BM{} BN{} w{} s{}".format(*cfg) if cfg is not None else ""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the example's configuration only")
    ap.add_argument("--block-ptr", action="store_true",
                    help="the kernel written with block pointers (attention_block_ptr.py)")
    ap.add_argument("--descriptors", action="store_true",
                    help="the kernel written with tensor descriptors, K and V by TMA "
                         "(attention_descriptor.py)")
    ap.add_argument("--sustained", action="store_true",
                    help="also time each tool's fastest configuration, and SDPA, each alone "
                         "under its own sustained load (timing.gpu_ms_sustained)")
    args = ap.parse_args()
    if args.block_ptr:
        from attention_block_ptr import attention_fwd_block_ptr as kernel
    elif args.descriptors:
        import triton  # (its descriptors made in a kernel need global scratch memory)

        from attention_descriptor import attention_fwd_descriptors as kernel
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8,
                                                                     device="cuda"))
    else:
        kernel = AT.attention_fwd
    tc_k, tr_k = kernel, as_triton(kernel)
    rows = []
    for d in (64, 128):
        for causal in (False, True):
            torch.manual_seed(0)
            q, k, v = (torch.randn(B, H, N, d, device="cuda", dtype=torch.float16)
                       for _ in range(3))
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            cfg = AT.config(d, causal)
            configs = [(cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["num_warps"], cfg["num_stages"])] \
                if args.quick else CONFIGS[d]
            got = best({"tilecc": tc_k, "Triton": tr_k}, q, k, v, causal, configs, ref)
            (t_tc, c_tc), (t_tr, c_tr), t_sdpa = got["tilecc"], got["Triton"], got["SDPA"][0]
            flops = 4 * B * H * N * N * d * (0.5 if causal else 1.0)
            tf = [flops / t / 1e9 for t in (t_tc, t_tr, t_sdpa)]
            alone = ()
            if args.sustained:
                ms = sustained({"tilecc": tc_k, "Triton": tr_k}, q, k, v, causal, got)
                alone = tuple(flops / ms[t] / 1e9 for t in ("tilecc", "Triton", "SDPA"))
            rows.append((d, causal, *tf, label(c_tc), label(c_tr), alone))
    print(f"\n{torch.cuda.get_device_name()}: attention forward, B={B} H={H} N={N} fp16 "
          "(TFLOP/s; best configuration of each)")
    print(f"{'D':>4} {'causal':>6} {'tilecc':>8} {'Triton':>8} {'SDPA':>8} {'tc/Triton':>9} "
          f"{'tc/SDPA':>8}  tilecc config / Triton config")
    for d, causal, tc, tr, sd, c_tc, c_tr, _ in rows:
        print(f"{d:>4} {str(causal):>6} {tc:8.1f} {tr:8.1f} {sd:8.1f} {tc / tr:9.3f} "
              f"{tc / sd:8.3f}  {c_tc} / {c_tr}")
    if args.sustained:
        print("\nthe same configurations, each tool alone under its own sustained load "
              "(TFLOP/s, the median of 5 rounds)")
        print(f"{'D':>4} {'causal':>6} {'tilecc':>8} {'Triton':>8} {'SDPA':>8} "
              f"{'tc/Triton':>9} {'tc/SDPA':>8}")
        for d, causal, *_, (tc, tr, sd) in rows:
            print(f"{d:>4} {str(causal):>6} {tc:8.1f} {tr:8.1f} {sd:8.1f} {tc / tr:9.3f} "
                  f"{tc / sd:8.3f}")


if __name__ == "__main__":
    main()
