"""Kernels nobody tuned for tilecc: library-style Triton kernels (benchmarks/untuned_kernels.py,
a first dozen; untuned_kernels_more.py, a second batch) through tilecc and Triton at the
same block configuration, on one GPU.

    python benchmarks/bench_untuned.py [--only NAME_PREFIX] [--rounds N]

Each kernel's source is written once against `tl`; tilecc compiles it as it is and Triton
compiles the same function with `tl` bound to `triton.language` (triton_clone.py), with
the same grid, constexprs and num_warps.  Both outputs are checked against a torch
reference at the timed shape.  Timing (`timing.gpu_ms_queued`): each round queues
several calls of each tool back to back behind a sleep kernel between two events, the
tools interleaved; the median over rounds is kept.  A kernel that fails to compile, run
or match is reported in the table and the rest go on.  `tc/triton` is a speed ratio, as
in the other benchmarks: Triton's time over tilecc's (above 1: tilecc faster); the last
line is its geometric mean over the kernels that both ran correctly.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import untuned_kernels as U  # noqa: E402
import untuned_kernels_more as UM  # noqa: E402
from timing import copies_beyond_l2, gpu_ms_queued  # noqa: E402
from triton_clone import as_triton  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16,
          "int64": torch.int64, "int32": torch.int32, "int8": torch.int8}


class TorchMaker:
    def __init__(self, seed: int = 0):
        self.gen = torch.Generator(device="cuda").manual_seed(seed)

    def randn(self, shape, dtype):
        return torch.randn(shape, device="cuda", dtype=DTYPES[dtype], generator=self.gen)

    def empty(self, shape, dtype):
        fill = float("nan") if DTYPES[dtype].is_floating_point else -1
        return torch.full(shape, fill, device="cuda", dtype=DTYPES[dtype])

    def from_numpy(self, a):
        return torch.from_numpy(a).cuda()

    def zeros(self, shape, dtype):
        return torch.zeros(shape, device="cuda", dtype=DTYPES[dtype])

    def randbits(self, shape):
        return torch.randint(0, 2 ** 31, shape, device="cuda", dtype=torch.int32,
                             generator=self.gen)

    def randint(self, high, shape):
        return torch.randint(0, high, shape, device="cuda", generator=self.gen)

    def sort_desc(self, x):
        return torch.sort(x, dim=-1, descending=True).values.contiguous()

    def logsigmoid(self, shape, dtype):
        x = torch.randn(shape, device="cuda", generator=self.gen)
        return torch.nn.functional.logsigmoid(x).to(DTYPES[dtype])


# --- torch references (float32/float64 on the GPU), by case name ---------------------------
def _f(x):
    return x.double()


def ref_l2norm(a):
    x = _f(a["x"])
    return dict(y=x / torch.sqrt((x * x).sum(1, keepdim=True) + 1e-6))


def ref_rmsnorm(a):
    x = _f(a["x"])
    rstd = torch.rsqrt((x * x).mean(1) + 1e-6)
    return dict(y=x * rstd[:, None] * _f(a["w"]), rstd=rstd)


def ref_gated(a):
    x, z = _f(a["x"]), _f(a["z"])
    return dict(y=x * torch.rsqrt((x * x).mean(1, keepdim=True) + 1e-6) * _f(a["w"])
                * torch.nn.functional.silu(z))


def ref_swiglu(a):
    return dict(c=torch.nn.functional.silu(_f(a["a"])) * _f(a["b"]))


def ref_geglu(a):
    return dict(c=torch.nn.functional.gelu(_f(a["a"]), approximate="tanh") * _f(a["b"]))


def ref_sparsemax(a):
    z = _f(a["sorted"])
    k = torch.arange(1, z.shape[1] + 1, device=z.device, dtype=z.dtype)
    cs = z.cumsum(1)
    support = 1 + k * z > cs
    tau = (torch.where(support, z, 0).sum(1, keepdim=True) - 1) / support.sum(1, keepdim=True)
    return dict(y=torch.clamp(_f(a["x"]) - tau, min=0))


def ref_cumsum(a, BT=64):
    s = _f(a["s"])
    b, t, h = s.shape
    s = torch.nn.functional.pad(s, (0, 0, 0, -t % BT)).reshape(b, -1, BT, h)
    return dict(o=s.cumsum(2).reshape(b, -1, h)[:, :t])


def ref_ce(a):
    x = a["logits"].float()
    lse = torch.logsumexp(x, 1)
    rows = torch.arange(x.shape[0], device=x.device)
    g = torch.softmax(x, 1)
    g[rows, a["target"]] -= 1
    return dict(loss=lse - x[rows, a["target"]], logits=g / x.shape[0])


def ref_rope(a):
    q = _f(a["q"])
    s = a["cos"].shape[0]
    cos = _f(a["cos"]).repeat(q.shape[0] // s, 1)[:, None, :]
    sin = _f(a["sin"]).repeat(q.shape[0] // s, 1)[:, None, :]
    x1, x2 = q[..., :64], q[..., 64:]
    return dict(q=torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1))


def ref_taylor(a):
    q, k, v = (_f(a[n]) for n in "qkv")
    s = torch.einsum("btd,bsd->bts", q * 0.25, k)
    s = torch.tril(1 + s + 0.5 * s * s)
    z = s.sum(-1)
    return dict(o=torch.einsum("bts,bsd->btd", s, v) / z[..., None], z=z)


def ref_rnn(a):
    x, g = a["x"].float(), torch.exp(a["g"].float())
    h = torch.zeros_like(x[:, 0])
    out = torch.empty_like(x)
    for t in range(x.shape[1]):
        h = g[:, t] * h + (1 - g[:, t]) * x[:, t]
        out[:, t] = h
    return dict(o=out)


def ref_gn(a):
    x = a["x"].float()
    return dict(y=torch.nn.functional.group_norm(x, 64, a["w"].float(), a["b"].float(), 1e-5))


# the second dozen (untuned_kernels_more.py)
def ref_rms_bwd(a):
    dy, x, w = _f(a["dy"]), _f(a["x"]), _f(a["w"])
    rstd = _f(a["rstd"])[:, None]
    m = dy * w
    dx = rstd * m - rstd ** 3 * (m * x).mean(1, keepdim=True) * x
    programs = a["dw"].shape[0]
    run = -(-x.shape[0] // programs)
    per_row = torch.nn.functional.pad(dy * x * rstd, (0, 0, 0, run * programs - x.shape[0]))
    return dict(dx=dx, dw=per_row.reshape(programs, run, -1).sum(1))


def ref_swiglu_bwd(a):
    dc, x, b = _f(a["dc"]), _f(a["a"]), _f(a["b"])
    sig = torch.sigmoid(x)
    return dict(a=dc * (x * sig * (1 - sig) + sig) * b, b=dc * x * sig)


def ref_add_rms(a):
    s = _f(a["x"]) + _f(a["residual"])
    return dict(residual=s, y=s * torch.rsqrt((s * s).mean(1, keepdim=True) + 1e-6) * _f(a["w"]))


def ref_quant(a):
    x = _f(a["x"])
    absmax = x.abs().amax(1, keepdim=True).clamp(min=1e-10)
    return dict(xq=torch.round(x * (127 / absmax)), scale=absmax[:, 0] / 127)


def ref_softmax(a):
    return dict(y=torch.softmax(_f(a["x"]), 1))


def ref_kl(a):
    y, t = _f(a["y_pred"]), _f(a["y_true"])
    return dict(loss=(t * (torch.log(t.clamp(min=1e-10)) - y)).sum(1))


def ref_emb(a):
    return dict(out=_f(a["w"])[a["ids"]])


def ref_topk(a):
    p = torch.softmax(_f(a["logits"]), 1)
    rows = torch.arange(len(p), device=p.device)
    i1 = p.argmax(1)  # (the first of equal values, as tl.argmax)
    p2 = p.clone()
    p2[rows, i1] = -1.0
    i2 = p2.argmax(1)
    w1, w2 = p[rows, i1], p[rows, i2]
    return dict(weights=torch.stack([w1, w2], 1) / (w1 + w2)[:, None],
                ids=torch.stack([i1, i2], 1))


def ref_paged(a):
    q, k, v = _f(a["q"]), a["k"], a["v"]
    page = k.shape[1]
    out = torch.empty_like(q)
    for s in range(q.shape[0]):
        n = int(a["lens"][s])
        toks = torch.arange(n, device=q.device)
        pages = a["table"][s][toks // page]
        ks, vs = _f(k[pages, toks % page]), _f(v[pages, toks % page])  # [n, h, d]
        p = torch.softmax(torch.einsum("hd,nhd->hn", q[s], ks) * q.shape[-1] ** -0.5, 1)
        out[s] = torch.einsum("hn,nhd->hd", p, vs)
    return dict(out=out)


def ref_int4(a):
    packed = a["b"].long()
    k = packed.shape[0] * 8
    rows = torch.arange(k, device=packed.device)
    q = (packed[rows // 8] >> ((rows % 8) * 4)[:, None]) & 0xF
    group = k // a["scales"].shape[0]
    b = (q - _f(a["zeros"])[rows // group]) * _f(a["scales"])[rows // group]
    return dict(c=_f(a["a"]) @ b)


def ref_gla(a):
    q, k, v = (a[n].float() for n in "qkv")
    g = torch.exp(a["g"].float())
    scale = q.shape[-1] ** -0.5
    h = torch.zeros(q.shape[0], v.shape[2], q.shape[2], device=q.device)
    o = torch.empty_like(v)
    for t in range(q.shape[1]):
        h = h * g[:, t, None, :] + v[:, t, :, None] * k[:, t, None, :]
        o[:, t] = (h * q[:, t, None, :] * scale).sum(-1)
    return dict(o=o)


def ref_causal(a):
    rows, n = a["x"].shape
    x = a["x"].float() * 0.125
    future = torch.arange(n, device=x.device)[None, :] > \
        (torch.arange(rows, device=x.device) % n)[:, None]
    return dict(y=torch.softmax(x.masked_fill(future, float("-inf")), 1))


def ref_moe(a):
    tokens = a["a"].shape[0]
    top_k = a["c"].shape[0] // tokens
    slots = a["sorted_ids"].long()
    experts = a["expert_ids"].long().repeat_interleave(UM._MOE_BM)
    live = slots < tokens * top_k
    slots, experts = slots[live], experts[live]
    out = torch.full(a["c"].shape, float("nan"), device="cuda", dtype=torch.float64)
    for e in range(a["b"].shape[0]):  # each expert's slots, one product
        mine = slots[experts == e]
        out[mine] = _f(a["a"])[mine // top_k] @ _f(a["b"][e]) * _f(a["weights"])[mine][:, None]
    return dict(c=out)


def ref_scan(a, BT=64):
    x, y = torch.exp(a["a"].float()), a["b"].float()
    h = torch.empty_like(y)
    for t in range(x.shape[1]):
        h[:, t] = y[:, t] if t % BT == 0 else x[:, t] * h[:, t - 1] + y[:, t]
    return dict(h=h)


def ref_rope_il(a):
    x = _f(a["x"])
    pos = torch.arange(x.shape[0], device=x.device) % a["cos"].shape[0]
    cos, sin = _f(a["cos"])[pos][:, None, :], _f(a["sin"])[pos][:, None, :]
    even, odd = x[..., 0::2], x[..., 1::2]
    return dict(x=torch.stack([even * cos - odd * sin, odd * cos + even * sin], -1).flatten(-2))


def ref_softmax_bwd(a):
    dy, y = _f(a["dy"]), _f(a["y"])
    return dict(dx=y * (dy - (dy * y).sum(1, keepdim=True)))


def ref_conv(a):
    x = torch.nn.functional.pad(_f(a["x"]), (3, 0))
    acc = torch.nn.functional.conv1d(x, _f(a["w"])[:, None, :], _f(a["bias"]),
                                     groups=x.shape[1])
    return dict(o=torch.nn.functional.silu(acc))


def ref_scaled(a):
    return dict(c=_f(a["a"]) @ _f(a["b"]) * _f(a["sa"])[:, None] * _f(a["sb"])[None, :])


def ref_bias(a):
    return dict(db=_f(a["dy"]).sum(0))


def ref_emb_bwd(a):
    dw = torch.zeros(a["dw"].shape, device="cuda", dtype=torch.float64)
    return dict(dw=dw.index_add_(0, a["ids"], _f(a["dy"])))


def ref_bmm(a):
    return dict(c=_f(a["a"]) @ _f(a["b"]))


def ref_welford(a):
    x = _f(a["x"])
    y = (x - x.mean(1, keepdim=True)) * torch.rsqrt(x.var(1, unbiased=False, keepdim=True) + 1e-5)
    return dict(y=y * _f(a["w"]) + _f(a["b"]))


def ref_transpose(a):
    return dict(y=_f(a["x"]).T)


def _zeros_like_gpu(shape):
    return torch.zeros(shape, device="cuda", dtype=torch.float64)


def ref_chunk_state(a):
    return dict(h=UM.chunk_state_reference(_f(a["k"]), _f(a["v"]), _f(a["g"]), torch,
                                           _zeros_like_gpu))


def ref_chunk_output(a):
    q = _f(a["q"])
    return dict(o=UM.chunk_output_reference(q, _f(a["k"]), _f(a["v"]), _f(a["g"]), _f(a["h"]),
                                            q.shape[2] ** -0.5, torch, _zeros_like_gpu))


CASES = U.CASES + UM.CASES
REFERENCES = [ref_l2norm, ref_rmsnorm, ref_gated, ref_swiglu, ref_geglu, ref_sparsemax,
              ref_cumsum, ref_ce, ref_rope, ref_taylor, ref_rnn, ref_gn,
              ref_rms_bwd, ref_swiglu_bwd, ref_add_rms, ref_quant, ref_softmax, ref_kl,
              ref_emb, ref_topk, ref_paged, ref_int4, ref_gla, ref_causal, ref_moe, ref_scan,
              ref_rope_il, ref_softmax_bwd, ref_conv, ref_scaled, ref_bias, ref_emb_bwd,
              ref_bmm, ref_welford, ref_transpose, ref_chunk_state, ref_chunk_output]
assert len(REFERENCES) == len(CASES)


def clone_inputs(args: dict) -> dict:
    return {k: v.clone() for k, v in args.items()}


def check(case, kernel, base: dict, expected: dict) -> None:
    args = clone_inputs(base)
    case.launch(kernel, args)
    torch.cuda.synchronize()
    for name in case.outputs:
        got, exp = args[name], expected[name]
        rtol, atol = case.tolerance(name)
        if got.dtype != torch.float32:  # rounded to 16 bits at the end
            rtol, atol = max(rtol, 2e-2), max(atol, 2e-2)
        torch.testing.assert_close(got.double(), exp.double(), rtol=rtol, atol=atol,
                                   msg=lambda m: f"{name}: {m[:400]}")


def bench_case(case, ref, dtype: str, rounds: int) -> dict:
    """{"tc": ms | error, "tr": ms | error, "gbs": ...} for one kernel."""
    out = {}
    base = case.inputs(TorchMaker(0), dtype, big=True)
    expected = ref(clone_inputs(base))
    kernels = {"tc": case.kernel}
    try:
        kernels["tr"] = as_triton(case.kernel)
    except Exception as e:  # noqa: BLE001
        out["tr"] = f"clone failed: {type(e).__name__}: {e}"
    runnable = {}
    for tool, k in kernels.items():
        try:
            check(case, k, base, expected)
            runnable[tool] = k
        except Exception as e:  # noqa: BLE001 - reported in the table, the rest go on
            msg = str(e).strip().splitlines()
            out[tool] = f"{type(e).__name__}: {msg[0][:160] if msg else ''}"
            if os.environ.get("BENCH_VERBOSE"):
                traceback.print_exc()
    if not runnable:
        return out
    # in-place kernels (cross entropy, rope) run on their own copies: each call rewrites them
    # and every call reads from memory: buffer sets rotate over three L2 caches
    copies = copies_beyond_l2(sum(v.numel() * v.element_size() for v in base.values()))
    bufs = {tool: [clone_inputs(base) for _ in range(copies)] for tool in runnable}
    cases = {tool: (lambda i, k=k, a=bufs[tool]: case.launch(k, a[i % copies])) for tool, k
             in runnable.items()}
    times = gpu_ms_queued(cases, copies, rounds=rounds, calls=10)
    del bufs
    for tool, ts in times.items():
        out[tool] = statistics.median(ts)
    if case.moved and isinstance(out.get("tc"), float):
        out["gbs"] = case.moved(base[next(iter(base))].element_size()) / 1e9
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", help="kernels whose name starts with this")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    args = ap.parse_args()
    t0 = time.time()
    rows = []
    for case, ref in zip(CASES, REFERENCES):
        if args.only and not any(case.name.startswith(p) for p in args.only):
            continue
        try:
            res = bench_case(case, ref, args.dtype, args.rounds)
        except Exception as e:  # noqa: BLE001
            res = {"tc": f"{type(e).__name__}: {str(e)[:160]}", "tr": "not run"}
        rows.append((case.name, res))
        print(f"  {case.name}: done ({time.time() - t0:.0f} s)", file=sys.stderr)
    print(f"\n{torch.cuda.get_device_name()}, activations {args.dtype}; GPU ms per call "
          f"(median of {args.rounds} rounds)")
    print(f"{'kernel':<24} {'tilecc ms':>10} {'triton ms':>10} {'tc/triton':>10} "
          f"{'tc GB/s':>8} {'tr GB/s':>8}")
    ratios = []
    for name, res in rows:
        tc, tr = res.get("tc"), res.get("tr")
        if isinstance(tc, float) and isinstance(tr, float):
            ratios.append(tr / tc)
            gb = res.get("gbs")
            gbs = f"{gb / (tc * 1e-3):8.0f} {gb / (tr * 1e-3):8.0f}" if gb else ""
            print(f"{name:<24} {tc:10.4f} {tr:10.4f} {tr / tc:10.3f} {gbs}")
        else:
            cell = (lambda v: f"{v:10.4f}" if isinstance(v, float) else f"{'FAILED':>10}")
            print(f"{name:<24} {cell(tc)} {cell(tr)} {'-':>10}")
            for tool, v in (("tilecc", tc), ("triton", tr)):
                if not isinstance(v, float):
                    print(f"    {tool}: {v}")
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"{'geometric mean':<24} {'':>10} {'':>10} {geo:10.3f}   "
              f"({len(ratios)} kernels; {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
