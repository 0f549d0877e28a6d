"""Fused attention backward through tilecc, Triton's fused-attention tutorial and torch's
SDPA, side by side.

    python benchmarks/bench_attention_bwd.py [--quick] [--triton-tutorial PATH]

tilecc runs examples/attention.py's three backward kernels (`attention_backward`): each of
the two gradient kernels tries the example's configurations for the head dimension
(--quick: backward_config's only) and the fastest of each is kept.  "Triton src" is the
very same kernel source and blocks compiled by Triton (`tl` bound to `triton.language`,
as benchmarks/bench_attention.py does); "Triton tut" the backward of Triton's own
tutorial 06 (python/tutorials/06-fused-attention.py of a Triton checkout, imported from
PATH as it is; left out without the option); both need triton.  SDPA is torch's
`scaled_dot_product_attention` (whichever backend it picks).  Batch 4, 32 heads,
sequence 4096, head dimension 64 and 128, causal and not, fp16.  Times are device-event
medians of the backward alone, the tools timed side by side under a sustained load
(`timing.gpu_ms_queued`, the tool that starts a round rotating; tilecc's configurations
are chosen before, each timed alone): the forward runs once before; tilecc and "Triton
src" are timed as their three launches, the tutorial and SDPA through
`torch.autograd.grad`.  TFLOP/s counts
2.5 x 4·B·H·N²·D (the four products of the backward and the recomputed one), halved when
causal.  Every result is checked before it is timed, on two (batch, head) slices, against
the gradients of softmax attention in float64; one that fails is reported, not timed (the
tutorial's backward is written for the causal mask only: it applies it whatever it is
asked).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
sys.path.insert(0, os.path.dirname(__file__))
import attention as AT  # noqa: E402
from timing import gpu_ms_queued  # noqa: E402

B, H, N = 4, 32, 4096
SLICES = ((0, 0), (B - 1, H - 1))  # the (batch, head) pairs checked in float64


def bench(fn) -> float:
    """Median milliseconds of `fn` on the device."""
    try:
        from triton.testing import do_bench
    except ImportError:
        do_bench = None
    if do_bench is not None:
        return do_bench(fn, warmup=25, rep=100, return_mode="median")
    for _ in range(5):
        fn()
    times = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def reference(q, k, v, do, causal: bool) -> list:
    """dQ, dK, dV in float64 for each (batch, head) of SLICES."""
    out = []
    for b, h in SLICES:
        x = [t[b, h].detach().double().requires_grad_() for t in (q, k, v)]
        s = x[0] @ x[1].T / q.shape[-1] ** 0.5
        if causal:
            s = s.masked_fill(torch.ones(N, N, device="cuda", dtype=torch.bool).triu(1),
                              -float("inf"))
        (torch.softmax(s, dim=-1) @ x[2]).backward(do[b, h].double())
        out.append([t.grad for t in x])
    return out


def problem(grads, ref) -> str | None:
    """Why `grads` (dq, dk, dv of the whole problem) are wrong, or None."""
    for name, g in zip(("dq", "dk", "dv"), grads):
        if not torch.isfinite(g).all():
            return f"wrong result: {name} not finite"
    for (b, h), want in zip(SLICES, ref):
        for name, g, w in zip(("dq", "dk", "dv"), grads, want):
            err = ((g[b, h].double() - w).abs().max() / w.abs().max()).item()
            if err > 1e-2:
                return f"wrong result: {name}[{b}, {h}] off by {err:.1e} of its largest element"
    return None


def tilecc_best(q, k, v, out, lse, do, causal, quick: bool):
    """The fastest configuration of each gradient kernel (the other at its default),
    then the whole backward with both."""
    d = q.shape[-1]
    default = AT.backward_config(d, causal, "sm_{}{}".format(*torch.cuda.get_device_capability()))
    best_cfg = {}
    for part in ("dkdv", "dq"):
        configs = [tuple(default[part][key] for key in ("BLOCK_M", "BLOCK_N", "num_warps",
                                                        "num_stages"))]
        if not quick:
            configs += [c for c in AT.BWD_CONFIGS[d][part] if c not in configs]
        timed = []
        for bm, bn, warps, stages in configs:
            cfg = {part: {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": warps,
                          "num_stages": stages}}
            fn = lambda cfg=cfg: AT.attention_backward(q, k, v, out, lse, do, causal, cfg=cfg)
            try:
                fn()
                torch.cuda.synchronize()
            except Exception as e:  # a configuration this GPU cannot run
                print(f"  skipped {part} {(bm, bn, warps, stages)}: {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:100]}")
                continue
            timed.append((bench(fn), cfg[part]))
        best_cfg[part] = min(timed, key=lambda t: t[0])[1]
    fn = lambda: AT.attention_backward(q, k, v, out, lse, do, causal, cfg=best_cfg)  # noqa: E731
    label = " / ".join("{}: BM{BLOCK_M} BN{BLOCK_N} w{num_warps} s{num_stages}".format(p, **c)
                       for p, c in best_cfg.items())
    return fn, label, {**default, **best_cfg}


def same_source_through_triton(q, k, v, out, lse, do, causal, cfg):
    """The example's three backward kernels compiled by Triton (benchmarks/triton_clone.py),
    launched as `attention_backward` launches them."""
    from triton_clone import as_triton

    z, h, n, d = q.shape
    dq, dk, dv, delta = (torch.empty_like(t) for t in (q, k, v, lse))
    strides = (q.stride(0), q.stride(1), q.stride(2), h, n)
    pre, dkdv, dqp = cfg["delta"], cfg["dkdv"], cfg["dq"]
    as_triton(AT.attention_bwd_preprocess)[(-(-n // pre["BLOCK_M"]), z * h)](
        out, do, delta, *strides, HEAD_DIM=d, **pre)
    as_triton(AT.attention_bwd_dkdv)[(-(-n // dkdv["BLOCK_N"]), z * h)](
        q, k, v, do, dk, dv, lse, delta, d ** -0.5, *strides, HEAD_DIM=d, CAUSAL=causal,
        **dkdv)
    as_triton(AT.attention_bwd_dq)[(-(-n // dqp["BLOCK_M"]), z * h)](
        q, k, v, do, dq, lse, delta, d ** -0.5, *strides, HEAD_DIM=d, CAUSAL=causal, **dqp)
    return dq, dk, dv


def through_autograd(forward, q, k, v, do):
    """A callable that runs the backward of `forward`'s output alone, and its gradients."""
    x = [t.detach().requires_grad_() for t in (q, k, v)]
    o = forward(*x)
    fn = lambda: torch.autograd.grad(o, x, do, retain_graph=True)  # noqa: E731
    return fn, fn()


def load_tutorial(path: str | None):
    if path is None:
        return None
    try:
        import triton  # noqa: F401
    except ImportError:
        print("triton is not importable: Triton's tutorial left out")
        return None
    spec = importlib.util.spec_from_file_location("triton_fused_attention_tutorial", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.attention


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the example's configurations only")
    ap.add_argument("--triton-tutorial", metavar="PATH",
                    help="Triton's python/tutorials/06-fused-attention.py")
    args = ap.parse_args()
    tutorial = load_tutorial(args.triton_tutorial)
    try:
        import triton  # noqa: F401

        has_triton = True
    except ImportError:
        has_triton = False
    rows = []
    for d in (64, 128):
        for causal in (False, True):
            torch.manual_seed(0)
            q, k, v, do = (torch.randn(B, H, N, d, device="cuda", dtype=torch.float16)
                           for _ in range(4))
            scale = d ** -0.5
            ref = reference(q, k, v, do, causal)
            notes = {}

            # tilecc: the autograd Function's gradients checked, the kernels timed
            _, grads = through_autograd(lambda *x: AT.flash_attention(*x, causal), q, k, v, do)
            notes["tilecc"] = problem(grads, ref)
            out, lse = torch.empty_like(q), torch.empty((B * H, N), device="cuda")
            cfg = AT.config(d, causal, "sm_{}{}".format(*torch.cuda.get_device_capability()))
            AT.attention_fwd[(-(-N // cfg["BLOCK_M"]), B * H)](
                q, k, v, out, lse, scale, q.stride(0), q.stride(1), q.stride(2), H, N,
                HEAD_DIM=d, CAUSAL=causal, **cfg)
            fn, tc_label, tc_cfg = tilecc_best(q, k, v, out, lse, do, causal, args.quick)
            notes["tilecc"] = notes["tilecc"] or problem(fn(), ref)
            timed = {}  # timed together below
            if notes["tilecc"] is None:
                timed["tilecc"] = fn
            if has_triton:  # the same kernels and blocks, compiled by Triton
                fn = lambda: same_source_through_triton(  # noqa: E731
                    q, k, v, out, lse, do, causal, tc_cfg)
                try:
                    notes["Triton src"] = problem(fn(), ref)
                except Exception as e:  # a kernel Triton cannot build
                    notes["Triton src"] = f"failed: {type(e).__name__}: {str(e)[:100]}"
                if notes["Triton src"] is None:
                    timed["Triton src"] = fn

            contenders = {"SDPA": lambda *x: F.scaled_dot_product_attention(
                *x, is_causal=causal)}
            if tutorial is not None:
                contenders["Triton tut"] = lambda *x: tutorial(*x, causal, scale)
            for name, forward in contenders.items():
                try:
                    fn, grads = through_autograd(forward, q, k, v, do)
                except Exception as e:  # a tool that cannot build its kernels on this GPU
                    notes[name] = f"failed: {type(e).__name__}: {str(e)[:100]}"
                    continue
                notes[name] = problem(grads, ref)
                if notes[name] is None:
                    timed[name] = fn
                del fn, grads
            rounds = gpu_ms_queued({name: (lambda i, fn=fn: fn()) for name, fn in timed.items()},
                                   copies=1, rounds=11, calls=5, sleep=False)
            times = {name: statistics.median(ms) for name, ms in rounds.items()}
            del timed
            flops = 2.5 * 4 * B * H * N * N * d * (0.5 if causal else 1.0)
            rows.append((d, causal, times, notes, flops, tc_label))
            torch.cuda.empty_cache()

    names = ["tilecc"] + ["Triton src"] * has_triton + ["Triton tut"] * (tutorial is not None) \
        + ["SDPA"]
    print(f"\n{torch.cuda.get_device_name()}: attention backward, B={B} H={H} N={N} fp16 "
          "(TFLOP/s; ratio = the other's time / tilecc's, above 1: tilecc faster)")
    print(f"{'D':>4} {'causal':>6} " + " ".join(f"{n:>10}" for n in names)
          + " " + " ".join(f"{'vs ' + n:>13}" for n in names[1:]) + "  tilecc config")
    for d, causal, times, notes, flops, label in rows:
        tf = " ".join(f"{flops / times[n] / 1e9:10.1f}" if n in times else f"{'n/a':>10}"
                      for n in names)
        ratios = " ".join(f"{times[n] / times['tilecc']:13.3f}"
                          if n in times and "tilecc" in times else f"{'-':>13}"
                          for n in names[1:])
        print(f"{d:>4} {str(causal):>6} {tf} {ratios}  {label}")
        for n, why in notes.items():
            if why:
                print(f"       {n}: {why}")


if __name__ == "__main__":
    main()
