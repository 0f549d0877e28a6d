"""Elementwise kernels through tilecc, Triton and torch, side by side in one run.

    python benchmarks/bench_elementwise.py [--sizes 20,24,28] [--quick]

The same kernel source (the functions below, written against `triton.language`) goes
through `tilecc.jit` and `triton.jit`.  Each kernel is timed with device events (median
of repeated runs after warm-up, `triton.testing.do_bench`) over the same block sizes and
warp counts for both compilers; the best of each is reported.  GB/s counts each input
read once and the output written once.  Then the host cost of one warm launch is
measured for tilecc, Triton and a bare CuPy RawKernel of the same generated source.
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import host_us_per_launch
import torch
import triton
import triton.language as tl
from triton.testing import do_bench

import tilecc


def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def silu_mul(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    out = x * tl.sigmoid(x) * y
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


KERNELS = {"add": add, "silu_mul": silu_mul}
TORCH = {"add": lambda x, y: x + y, "silu_mul": lambda x, y: x * torch.sigmoid(x) * y}
CONFIGS = [(1024, 4), (2048, 4), (4096, 8), (8192, 8)]


def bench(fn) -> float:
    return do_bench(fn, warmup=50, rep=200, return_mode="median")


def run_tables(sizes: list[int], configs) -> list[tuple]:
    rows = []
    for name, fn in KERNELS.items():
        tc_k, tr_k = tilecc.jit(fn), triton.jit(fn)
        for dtype in (torch.float32, torch.float16):
            for log2n in sizes:
                n = 1 << log2n
                x = torch.randn(n, device="cuda", dtype=dtype)
                y = torch.randn(n, device="cuda", dtype=dtype)
                out_tc, out_tr = torch.empty_like(x), torch.empty_like(x)
                best = {"tilecc": (float("inf"), None), "triton": (float("inf"), None)}
                for block, warps in configs:
                    grid = (triton.cdiv(n, block),)
                    for label, k, out in (("tilecc", tc_k, out_tc), ("triton", tr_k, out_tr)):
                        t = bench(lambda: k[grid](x, y, out, n, BLOCK=block, num_warps=warps))
                        if t < best[label][0]:
                            best[label] = (t, (block, warps))
                ref = TORCH[name](x, y)
                tol = 1e-5 if dtype == torch.float32 else 2e-3
                torch.testing.assert_close(out_tc, ref, rtol=tol, atol=tol)
                torch.testing.assert_close(out_tr, ref, rtol=tol, atol=tol)
                t_torch = bench(lambda: TORCH[name](x, y))
                nbytes = 3 * n * x.element_size()
                gbs = {k: nbytes / (v[0] * 1e-3) / 1e9 for k, v in best.items()}
                rows.append((name, str(dtype).replace("torch.", ""), f"2^{log2n}",
                             gbs["tilecc"], gbs["triton"], nbytes / (t_torch * 1e-3) / 1e9,
                             gbs["tilecc"] / gbs["triton"], best["tilecc"][1], best["triton"][1]))
                del x, y, out_tc, out_tr, ref
                torch.cuda.empty_cache()
    return rows


def launch_overhead(iters: int = 20000) -> list[tuple[str, float]]:
    """Host µs per warm launch of a small kernel (n = 1024), launches not synchronized."""
    import cupy

    n = 1024
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    tc_k, tr_k = tilecc.jit(add), triton.jit(add)
    sig = "*fp32:16,*fp32:16,*fp32:16,i32:16,1024"
    src = tc_k.source(sig)
    from tilecc.transpiler.render import INCLUDE_DIR
    raw = cupy.RawKernel(src, "add", options=(f"-I{INCLUDE_DIR}", "--std=c++17"))
    cx, cout = cupy.asarray(x), cupy.asarray(out)
    cases = {
        "tilecc": lambda: tc_k[(1,)](x, x, out, n, BLOCK=1024),
        "triton": lambda: tr_k[(1,)](x, x, out, n, BLOCK=1024),
        "cupy RawKernel": lambda: raw((1,), (128,), (cx, cx, cout, np.int32(n))),
    }
    results = [(label, host_us_per_launch(fn, iters, torch.cuda.synchronize))
               for label, fn in cases.items()]
    return results


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20,24,28")
    ap.add_argument("--quick", action="store_true", help="one block configuration")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = run_tables(sizes, CONFIGS[:1] if args.quick else CONFIGS)
    print(f"\n{torch.cuda.get_device_name()}  (GB/s: inputs read once + output written once; "
          "best (BLOCK, num_warps) of each)")
    print(f"{'kernel':<9} {'dtype':<8} {'n':>5} {'tilecc':>8} {'triton':>8} {'torch':>8} "
          f"{'tilecc/triton':>14}  {'tilecc cfg':>12} {'triton cfg':>12}")
    for r in rows:
        print(f"{r[0]:<9} {r[1]:<8} {r[2]:>5} {r[3]:8.0f} {r[4]:8.0f} {r[5]:8.0f} {r[6]:14.3f}  "
              f"{str(r[7]):>12} {str(r[8]):>12}")
    print("\nhost cost of one warm launch (µs, small kernel, best of 5 x 20000)")
    ov = launch_overhead()
    base = dict(ov)
    for label, us in ov:
        print(f"  {label:<16} {us:6.2f} µs   ({us / base['triton']:.2f}x triton)")


if __name__ == "__main__":
    main()
