"""Softmax and layer norm through tilecc, Triton and torch, side by side in one run.

    python benchmarks/bench_norms.py [--quick] [--only softmax|layernorm_fwd|layernorm_bwd]

The kernels are the examples' own functions (examples/softmax.py, examples/layernorm.py):
tilecc compiles them as they are, and Triton compiles the very same function source with
`tl` bound to `triton.language`.  Both run over the same warp counts (1 to 16, leaving
each thread at most 64 elements of a row; 4 to 32 for the backward); the best of each is
shown.

Timing (`timing.gpu_ms_queued`): each round queues, for every candidate in turn, 40 calls
back to back behind a sleep kernel between two device events, rotating over copies of the
buffers that together exceed three L2 caches; a candidate's time is the median over the
rounds.  A 10 µs kernel timed one call at a time (`do_bench`) carries the events'
resolution, about 0.5 µs, in every sample.  The "spread" column gives the quartiles of
the tc/Triton ratios of single rounds: where it straddles 1.0, the two are at parity
within what one round can tell apart.  torch's layer norm backward (autograd) is timed
with `do_bench`.
GB/s counts the bytes each kernel must move (inputs read once, outputs written once).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import torch
import triton
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import layernorm as LN  # noqa: E402
import softmax as SM  # noqa: E402
from timing import copies_beyond_l2, gpu_ms_queued  # noqa: E402
from triton_clone import as_triton  # noqa: E402

M = 4096
SIZES = (1024, 4096, 16384)
ROUNDS = 15


def warps_for(block: int, warps_list: list[int]) -> list[int]:
    """The warp counts tried for a row of `block` elements, the same for both tools: those
    that leave each thread at most 64 elements (more spills, in either compiler)."""
    return [w for w in warps_list if block // (32 * w) <= 64] or warps_list[-1:]


def best(cases: dict, copies: int) -> dict:
    """`cases`: (tool, warps) -> fn(i).  Per tool ("tc", "tr", "torch"): (ms, warps,
    per-round ms) of its fastest candidate by median over the rounds."""
    times = gpu_ms_queued(cases, copies, rounds=ROUNDS)
    out = {}
    for (tool, warps), ts in times.items():
        med = statistics.median(ts)
        if tool not in out or med < out[tool][0]:
            out[tool] = (med, warps, ts)
    return out


def row(name: str, n: int, gb: float, t: dict, torch_ms: float | None = None) -> tuple:
    ratios = [tr / tc for tc, tr in zip(t["tc"][2], t["tr"][2])]  # tc/Triton in GB/s
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    th = torch_ms if torch_ms is not None else t["torch"][0]
    return (name, n, gb / (t["tc"][0] * 1e-3), gb / (t["tr"][0] * 1e-3), gb / (th * 1e-3),
            t["tc"][1], t["tr"][1], q1, q3)


def bench_softmax(warps_list) -> list[tuple]:
    tc_k, tr_k = SM.softmax_kernel, as_triton(SM.softmax_kernel)
    rows = []
    for n in SIZES:
        gb = 2 * M * n * 4 / 1e9
        copies = copies_beyond_l2(int(gb * 1e9))
        xs = [torch.randn(M, n, device="cuda", dtype=torch.float32) for _ in range(copies)]
        ys = {key: [torch.empty_like(x) for x in xs] for key in ("tc", "tr", "torch")}
        block = triton.next_power_of_2(n)

        def run(k, key, w):
            def go(i):
                x, y = xs[i % copies], ys[key][i % copies]
                k[(M,)](y, x, x.stride(0), y.stride(0), n, BLOCK_SIZE=block, num_warps=w)
            return go

        def torch_softmax(i):
            torch.softmax(xs[i % copies], dim=-1, out=ys["torch"][i % copies])
        cases = {("tc", w): run(tc_k, "tc", w) for w in warps_for(block, warps_list)} | \
            {("tr", w): run(tr_k, "tr", w) for w in warps_for(block, warps_list)} | \
            {("torch", 0): torch_softmax}
        t = best(cases, copies)
        for key in ("tc", "tr"):  # the last calls of the fastest ones were not overwritten
            run(tc_k if key == "tc" else tr_k, key, t[key][1])(0)
            torch.testing.assert_close(ys[key][0], torch.softmax(xs[0], dim=-1), rtol=1e-5,
                                       atol=1e-6)
        rows.append(row("softmax fp32", n, gb, t))
    return rows


def bench_layernorm_forward(warps_list) -> list[tuple]:
    tc_k, tr_k = LN.layer_norm_fwd, as_triton(LN.layer_norm_fwd)
    rows = []
    for n in SIZES:
        gb = 2 * M * n * 2 / 1e9
        copies = copies_beyond_l2(int(gb * 1e9))
        xs = [torch.randn(M, n, device="cuda", dtype=torch.float16) for _ in range(copies)]
        w, b = torch.randn(n, device="cuda", dtype=torch.float16), \
            torch.randn(n, device="cuda", dtype=torch.float16)
        outs = {key: [(torch.empty_like(x), torch.empty(M, device="cuda"),
                       torch.empty(M, device="cuda")) for x in xs] for key in ("tc", "tr")}
        torch_out = [torch.empty_like(x) for x in xs]
        block = min(65536 // 2, triton.next_power_of_2(n))

        def run(k, key, warps):
            def go(i):
                x, (y, mean, rstd) = xs[i % copies], outs[key][i % copies]
                k[(M,)](x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK_SIZE=block,
                        num_warps=warps)
            return go

        def torch_ln(i):  # torch has no out= here: its allocation is cached, not timed
            torch_out[i % copies] = torch.nn.functional.layer_norm(xs[i % copies], (n,), w, b,
                                                                   1e-5)
        cases = {("tc", w_): run(tc_k, "tc", w_) for w_ in warps_for(block, warps_list)} | \
            {("tr", w_): run(tr_k, "tr", w_) for w_ in warps_for(block, warps_list)} | \
            {("torch", 0): torch_ln}
        t = best(cases, copies)
        ref = torch.nn.functional.layer_norm(xs[0], (n,), w, b, 1e-5)
        for key in ("tc", "tr"):
            run(tc_k if key == "tc" else tr_k, key, t[key][1])(0)
            torch.testing.assert_close(outs[key][0][0], ref, rtol=1e-2, atol=1e-2)
        rows.append(row("layernorm fwd fp16", n, gb, t))
    return rows


def bench_layernorm_backward(warps_list) -> list[tuple]:
    kernels = {"tc": (LN.layer_norm_bwd_dx, LN.layer_norm_bwd_dwdb),
               "tr": (as_triton(LN.layer_norm_bwd_dx), as_triton(LN.layer_norm_bwd_dwdb))}
    programs = 2 * torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for n in SIZES:
        gb = 3 * M * n * 2 / 1e9
        copies = copies_beyond_l2(int(gb * 1e9))
        x = torch.randn(M, n, device="cuda", dtype=torch.float16, requires_grad=True)
        w = torch.randn(n, device="cuda", dtype=torch.float16, requires_grad=True)
        b = torch.randn(n, device="cuda", dtype=torch.float16, requires_grad=True)
        dy = torch.randn(M, n, device="cuda", dtype=torch.float16)
        y = torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5)
        xf = x.float()
        mean = xf.mean(dim=1).contiguous()
        rstd = (1 / torch.sqrt(xf.var(dim=1, unbiased=False) + 1e-5)).contiguous()
        # the copies rotate x and dy (what is read) and dx (what is written); every copy
        # of x is the same values, so each has the same mean and rstd
        xs = [x.detach().clone() for _ in range(copies)]
        dys = [dy.clone() for _ in range(copies)]
        block = triton.next_power_of_2(n)
        results = {}

        def run(key, warps):
            dx_k, dwdb_k = kernels[key]
            pdw = torch.empty((programs, n), dtype=torch.float32, device="cuda")
            pdb = torch.empty((programs, n), dtype=torch.float32, device="cuda")
            dxs = [torch.empty_like(x) for _ in range(copies)]
            dw = torch.empty(n, device="cuda")
            db = torch.empty(n, device="cuda")

            def go(i):
                xi, dyi, dx = xs[i % copies], dys[i % copies], dxs[i % copies]
                dx_k[(programs,)](dx, dyi, pdw, pdb, xi, w, mean, rstd, xi.stride(0), M, n,
                                  BLOCK_SIZE_N=block, num_warps=warps)
                dwdb_k[(triton.cdiv(n, 128),)](pdw, pdb, dw, db, programs, n,
                                               BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
                results[key] = (dx, dw, db)
            return go
        t = best({(key, w_): run(key, w_) for key in ("tc", "tr")
                  for w_ in [w_ for w_ in warps_list if w_ >= 4] + [32]}, copies)
        t_torch = do_bench(lambda: y.backward(dy, retain_graph=True), warmup=25, rep=100,
                           return_mode="median", grad_to_none=[x, w, b])
        x.grad = w.grad = b.grad = None
        y.backward(dy, retain_graph=True)
        for key in ("tc", "tr"):
            run(key, t[key][1])(0)
            dx, dw, db = results[key]
            torch.testing.assert_close(dx, x.grad, rtol=1e-2, atol=1e-2)
            torch.testing.assert_close(dw.to(w.dtype), w.grad, rtol=2e-2, atol=0.5)
            torch.testing.assert_close(db.to(b.dtype), b.grad, rtol=2e-2, atol=0.5)
        rows.append(row("layernorm bwd fp16", n, gb, t, torch_ms=t_torch))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one warp count, three rounds")
    ap.add_argument("--only", choices=["softmax", "layernorm_fwd", "layernorm_bwd"],
                    action="append", help="run only these benchmarks (repeatable)")
    args = ap.parse_args()
    global ROUNDS
    warps = [8] if args.quick else [1, 2, 4, 8, 16]
    ROUNDS = 3 if args.quick else ROUNDS
    benches = {"softmax": bench_softmax, "layernorm_fwd": bench_layernorm_forward,
               "layernorm_bwd": bench_layernorm_backward}
    rows = [row for name, bench in benches.items() if not args.only or name in args.only
            for row in bench(warps)]
    print(f"\n{torch.cuda.get_device_name()}, M = {M} rows (GB/s; best num_warps of each)")
    print(f"{'kernel':<20} {'N':>6} {'tilecc':>8} {'triton':>8} {'torch':>8} "
          f"{'tc/triton':>10} {'spread':>13} {'tc/torch':>9}  warps tc/tr")
    for name, n, tc, tr, th, wtc, wtr, lo, hi in rows:
        print(f"{name:<20} {n:>6} {tc:8.0f} {tr:8.0f} {th:8.0f} {tc / tr:10.3f} "
              f"{lo:6.3f}-{hi:.3f} {tc / th:9.3f}  {wtc}/{wtr}")


if __name__ == "__main__":
    main()
