"""Softmax and layer norm through tilecc, Triton and torch, side by side in one run.

    python benchmarks/bench_norms.py [--quick]

The kernels are the examples' own functions (examples/softmax.py, examples/layernorm.py):
tilecc compiles them as they are, and Triton compiles the very same function source with
`tl` bound to `triton.language`.  Each is timed with device events (median after warm-up,
`triton.testing.do_bench`, over three interleaved rounds) over the same warp counts for
both; the best of each is shown.
GB/s counts the bytes each kernel must move (inputs read once, outputs written once).
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import triton
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import layernorm as LN  # noqa: E402
import softmax as SM  # noqa: E402
from triton_clone import as_triton  # noqa: E402

M = 4096
SIZES = (1024, 4096, 16384)


ROUNDS = 3


def best(tc: dict, tr: dict) -> tuple[tuple[float, int], tuple[float, int]]:
    """(ms, warps) of the fastest warp count of tilecc (`tc`: warps → fn) and of Triton
    (`tr`): per candidate the median of ROUNDS medians, each round timing every candidate
    of both tools in turn, so that a drift of the GPU's clocks or load spreads over all of
    them instead of favouring one."""
    fns = {("tc", w): fn for w, fn in tc.items()} | {("tr", w): fn for w, fn in tr.items()}
    times: dict = {key: [] for key in fns}
    for _ in range(ROUNDS):
        for key, fn in fns.items():
            times[key].append(do_bench(fn, warmup=25, rep=100, return_mode="median"))
    med = {key: sorted(ts)[len(ts) // 2] for key, ts in times.items()}
    return tuple(min((t, w) for (tool, w), t in med.items() if tool == which)
                 for which in ("tc", "tr"))


def bench_softmax(warps_list) -> list[tuple]:
    tc_k, tr_k = SM.softmax_kernel, as_triton(SM.softmax_kernel)
    rows = []
    for n in SIZES:
        x = torch.randn(M, n, device="cuda", dtype=torch.float32)
        y_tc, y_tr = torch.empty_like(x), torch.empty_like(x)
        block = triton.next_power_of_2(n)

        def run(k, y, w):
            return lambda: k[(M,)](y, x, x.stride(0), y.stride(0), n, BLOCK_SIZE=block,
                                   num_warps=w)
        t_tc, t_tr = best({w: run(tc_k, y_tc, w) for w in warps_list},
                          {w: run(tr_k, y_tr, w) for w in warps_list})
        t_torch = do_bench(lambda: torch.softmax(x, dim=-1), warmup=25, rep=100,
                           return_mode="median")
        ref = torch.softmax(x, dim=-1)
        torch.testing.assert_close(y_tc, ref, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(y_tr, ref, rtol=1e-5, atol=1e-6)
        gb = 2 * x.numel() * x.element_size() / 1e9
        rows.append(("softmax fp32", n, gb / (t_tc[0] * 1e-3), gb / (t_tr[0] * 1e-3),
                     gb / (t_torch * 1e-3), t_tc[1], t_tr[1]))
    return rows


def bench_layernorm_forward(warps_list) -> list[tuple]:
    tc_k, tr_k = LN.layer_norm_fwd, as_triton(LN.layer_norm_fwd)
    rows = []
    for n in SIZES:
        x = torch.randn(M, n, device="cuda", dtype=torch.float16)
        w, b = torch.randn(n, device="cuda", dtype=torch.float16), \
            torch.randn(n, device="cuda", dtype=torch.float16)
        outs = {k: (torch.empty_like(x), torch.empty(M, device="cuda"),
                    torch.empty(M, device="cuda")) for k in ("tc", "tr")}
        block = min(65536 // 2, triton.next_power_of_2(n))

        def run(k, key, warps):
            y, mean, rstd = outs[key]
            return lambda: k[(M,)](x, y, w, b, mean, rstd, x.stride(0), n, 1e-5,
                                   BLOCK_SIZE=block, num_warps=warps)
        t_tc, t_tr = best({w_: run(tc_k, "tc", w_) for w_ in warps_list},
                          {w_: run(tr_k, "tr", w_) for w_ in warps_list})
        t_torch = do_bench(lambda: torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5),
                           warmup=25, rep=100, return_mode="median")
        ref = torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5)
        torch.testing.assert_close(outs["tc"][0], ref, rtol=1e-2, atol=1e-2)
        torch.testing.assert_close(outs["tr"][0], ref, rtol=1e-2, atol=1e-2)
        gb = 2 * x.numel() * x.element_size() / 1e9
        rows.append(("layernorm fwd fp16", n, gb / (t_tc[0] * 1e-3), gb / (t_tr[0] * 1e-3),
                     gb / (t_torch * 1e-3), t_tc[1], t_tr[1]))
    return rows


def bench_layernorm_backward(warps_list) -> list[tuple]:
    kernels = {"tc": (LN.layer_norm_bwd_dx, LN.layer_norm_bwd_dwdb),
               "tr": (as_triton(LN.layer_norm_bwd_dx), as_triton(LN.layer_norm_bwd_dwdb))}
    programs = 2 * torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for n in SIZES:
        x = torch.randn(M, n, device="cuda", dtype=torch.float16, requires_grad=True)
        w = torch.randn(n, device="cuda", dtype=torch.float16, requires_grad=True)
        b = torch.randn(n, device="cuda", dtype=torch.float16, requires_grad=True)
        dy = torch.randn(M, n, device="cuda", dtype=torch.float16)
        y = torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5)
        xf = x.float()
        mean = xf.mean(dim=1).contiguous()
        rstd = (1 / torch.sqrt(xf.var(dim=1, unbiased=False) + 1e-5)).contiguous()
        block = triton.next_power_of_2(n)
        results = {}

        def run(key, warps):
            dx_k, dwdb_k = kernels[key]
            pdw = torch.empty((programs, n), dtype=torch.float32, device="cuda")
            pdb = torch.empty((programs, n), dtype=torch.float32, device="cuda")
            dx = torch.empty_like(x)
            dw = torch.empty(n, device="cuda")
            db = torch.empty(n, device="cuda")
            results[key] = (dx, dw, db)

            def go():
                dx_k[(programs,)](dx, dy, pdw, pdb, x, w, mean, rstd, x.stride(0), M, n,
                                  BLOCK_SIZE_N=block, num_warps=warps)
                dwdb_k[(triton.cdiv(n, 128),)](pdw, pdb, dw, db, programs, n,
                                               BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
            return go
        t_tc, t_tr = best({w_: run("tc", w_) for w_ in warps_list + [32]},
                          {w_: run("tr", w_) for w_ in warps_list + [32]})
        run("tc", t_tc[1])()
        run("tr", t_tr[1])()
        t_torch = do_bench(lambda: y.backward(dy, retain_graph=True), warmup=25, rep=100,
                           return_mode="median", grad_to_none=[x, w, b])
        x.grad = w.grad = b.grad = None
        y.backward(dy, retain_graph=True)
        for key in ("tc", "tr"):
            dx, dw, db = results[key]
            torch.testing.assert_close(dx, x.grad, rtol=1e-2, atol=1e-2)
            torch.testing.assert_close(dw.to(w.dtype), w.grad, rtol=2e-2, atol=0.5)
            torch.testing.assert_close(db.to(b.dtype), b.grad, rtol=2e-2, atol=0.5)
        gb = 3 * x.numel() * x.element_size() / 1e9
        rows.append(("layernorm bwd fp16", n, gb / (t_tc[0] * 1e-3), gb / (t_tr[0] * 1e-3),
                     gb / (t_torch * 1e-3), t_tc[1], t_tr[1]))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one warp count, one round")
    ap.add_argument("--only", choices=["softmax", "layernorm_fwd", "layernorm_bwd"],
                    action="append", help="run only these benchmarks (repeatable)")
    args = ap.parse_args()
    global ROUNDS
    warps = [8] if args.quick else [4, 8, 16]
    ROUNDS = 1 if args.quick else ROUNDS
    benches = {"softmax": bench_softmax, "layernorm_fwd": bench_layernorm_forward,
               "layernorm_bwd": bench_layernorm_backward}
    rows = [row for name, bench in benches.items() if not args.only or name in args.only
            for row in bench(warps)]
    print(f"\n{torch.cuda.get_device_name()}, M = {M} rows (GB/s; best num_warps of each)")
    print(f"{'kernel':<20} {'N':>6} {'tilecc':>8} {'triton':>8} {'torch':>8} "
          f"{'tc/triton':>10} {'tc/torch':>9}  warps tc/tr")
    for name, n, tc, tr, th, wtc, wtr in rows:
        print(f"{name:<20} {n:>6} {tc:8.0f} {tr:8.0f} {th:8.0f} {tc / tr:10.3f} "
              f"{tc / th:9.3f}  {wtc}/{wtr}")


if __name__ == "__main__":
    main()
