"""Fused attention (forward) through tilecc, Triton and torch's SDPA, side by side.

    python benchmarks/bench_attention.py [--quick]

The kernel is examples/attention.py's `attention_fwd`: tilecc compiles it as it is, and
Triton compiles the very same function source with `tl` bound to `triton.language`.  Both
run the same block configurations (--quick: the example's own) and the best of each is
shown, beside `torch.nn.functional.scaled_dot_product_attention`.  Batch 4, 32 heads,
sequence 4096, head dimension 64 and 128, causal and not, fp16.  Times are device-event
medians after warm-up (`triton.testing.do_bench`); TFLOP/s counts 4·B·H·N²·D, halved when
causal.  Every result is checked against SDPA first.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import attention as AT  # noqa: E402
from triton_clone import as_triton  # noqa: E402

B, H, N = 4, 32, 4096
CONFIGS = AT.CONFIGS  # (BLOCK_M, BLOCK_N, num_warps, num_stages) per head dimension


def launcher(kernel, q, k, v, out, lse, causal, cfg):
    bm, bn, warps, stages = cfg
    d = q.shape[-1]
    grid = (-(-N // bm), B * H)
    return lambda: kernel[grid](q, k, v, out, lse, d ** -0.5, q.stride(0), q.stride(1),
                                q.stride(2), H, N, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn,
                                CAUSAL=causal, num_warps=warps, num_stages=stages)


def best(kernel, q, k, v, causal, configs, ref) -> tuple[float, str]:
    out_best = (float("inf"), "")
    for cfg in configs:
        out, lse = torch.empty_like(q), torch.empty((B * H, N), device="cuda")
        fn = launcher(kernel, q, k, v, out, lse, causal, cfg)
        try:
            fn()
            torch.cuda.synchronize()
        except Exception as e:  # a configuration this compiler cannot build
            print(f"  skipped {cfg}: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
            continue
        torch.testing.assert_close(out, ref, atol=2e-2, rtol=2e-2)
        t = do_bench(fn, warmup=25, rep=100, return_mode="median")
        out_best = min(out_best, (t, "BM{} BN{} w{} s{}".format(*cfg)))
    return out_best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the example's configuration only")
    args = ap.parse_args()
    tc_k, tr_k = AT.attention_fwd, as_triton(AT.attention_fwd)
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
            t_tc, c_tc = best(tc_k, q, k, v, causal, configs, ref)
            t_tr, c_tr = best(tr_k, q, k, v, causal, configs, ref)
            t_sdpa = do_bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                              warmup=25, rep=100, return_mode="median")
            flops = 4 * B * H * N * N * d * (0.5 if causal else 1.0)
            tf = [flops / t / 1e9 for t in (t_tc, t_tr, t_sdpa)]
            rows.append((d, causal, *tf, c_tc, c_tr))
    print(f"\n{torch.cuda.get_device_name()}: attention forward, B={B} H={H} N={N} fp16 "
          "(TFLOP/s; best configuration of each)")
    print(f"{'D':>4} {'causal':>6} {'tilecc':>8} {'Triton':>8} {'SDPA':>8} {'tc/Triton':>9} "
          f"{'tc/SDPA':>8}  tilecc config / Triton config")
    for d, causal, tc, tr, sd, c_tc, c_tr in rows:
        print(f"{d:>4} {str(causal):>6} {tc:8.1f} {tr:8.1f} {sd:8.1f} {tc / tr:9.3f} "
              f"{tc / sd:8.3f}  {c_tc} / {c_tr}")


if __name__ == "__main__":
    main()
