"""The Liger-Kernel cases of liger_cases.py, continued: Liger's losses (cross entropy, fused linear
cross entropy, JSD, KL, TVD, GRPO) and the larger ops (attention residuals, mHC, fused MoE,
the SwiGLU MLP, multi-token and neighborhood attention); references in plain PyTorch."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from common import BF16, Case, NotApplicable, rnd
from liger_cases import DTYPES, liger, op


def _logits(bt, v, dtype, dev, scale=2.0):
    return rnd(bt, v, dtype=dtype, device=dev, scale=scale)


def _targets(bt, v, dev, ignore=0):
    t = torch.randint(0, v, (bt,))
    if ignore:
        t[torch.randperm(bt)[:ignore]] = -100
    return t.to(dev)


# --- cross entropy ------------------------------------------------------------------------


@op("cross_entropy")
def cross_entropy(dev):
    f = liger("cross_entropy").LigerCrossEntropyFunction
    for (dtype, atol, rtol) in DTYPES:
        for (bt, v, ignore) in [(8, 64, 0), (7, 1000, 2), (5, 333, 1)]:
            for smoothing in (0.0, 0.1):
                yield Case(f"{bt}x{v} {str(dtype)[6:]} ignored {ignore} smoothing {smoothing}",
                           [_logits(bt, v, dtype, dev), _targets(bt, v, dev, ignore)],
                           lambda x, t, s=smoothing: f.apply(x, t, None, -100, 0.0, s, "mean")[0],
                           lambda x, t, s=smoothing: F.cross_entropy(x, t, ignore_index=-100,
                                                                     label_smoothing=s),
                           atol * 10, rtol * 10, grad=[0])
    # softcap and z-loss: softcap·tanh(x/softcap) logits, lse² added
    yield Case("7x200 float32 softcap 5, z-loss 1e-2", [_logits(7, 200, torch.float32, dev),
                                                       _targets(7, 200, dev)],
               lambda x, t: f.apply(x, t, None, -100, 1e-2, 0.0, "mean", 5.0)[0],
               lambda x, t: _ce_softcap_z(x, t, 5.0, 1e-2), 1e-4, 1e-4, grad=[0])


def _ce_softcap_z(x, t, softcap, z_scale):
    x = softcap * torch.tanh(x / softcap)
    lse = torch.logsumexp(x, -1)
    return (F.cross_entropy(x, t, reduction="none") + z_scale * lse ** 2).mean()


@op("fused_linear_cross_entropy")
def fused_linear_cross_entropy(dev):
    f = liger("fused_linear_cross_entropy").LigerFusedLinearCrossEntropyFunction
    for (dtype, atol, rtol) in DTYPES:
        for (bt, h, v, bias) in [(8, 32, 64, False), (7, 48, 300, True)]:
            inputs = [rnd(bt, h, dtype=dtype, device=dev), rnd(v, h, dtype=dtype, device=dev, scale=0.2),
                      _targets(bt, v, dev, 1), rnd(v, dtype=dtype, device=dev) if bias else None]
            yield Case(f"{bt}x{h} -> {v} {str(dtype)[6:]}{' bias' if bias else ''}", inputs,
                       lambda x, w, t, b: f.apply(x, w, t, b)[0],
                       lambda x, w, t, b: F.cross_entropy(F.linear(x, w, b), t, ignore_index=-100),
                       atol * 10, rtol * 10, grad=[0, 1] + ([3] if bias else []))


# --- distances between distributions ------------------------------------------------------


def _jsd(log_q, log_p, beta, labels=None):
    """Generalized JSD of Liger's test: beta·KL(P‖M) + (1-beta)·KL(Q‖M), M = beta·P +
    (1-beta)·Q (forward KL(P‖Q) at beta 0, reverse at 1), mean over the counted rows."""
    p, q = log_p.exp(), log_q.exp()
    if beta == 0.0:
        rows = (p * (log_p - log_q)).sum(-1)
    elif beta == 1.0:
        rows = (q * (log_q - log_p)).sum(-1)
    else:
        log_m = torch.log(beta * p + (1 - beta) * q)
        rows = beta * (p * (log_p - log_m)).sum(-1) + (1 - beta) * (q * (log_q - log_m)).sum(-1)
    if labels is None:
        return rows.sum() / rows.shape[0]
    keep = labels != -100
    return torch.where(keep, rows, 0.0).sum() / keep.sum().clamp(min=1)


@op("jsd")
def jsd(dev):
    f = liger("jsd").LigerJSDFunction
    for (dtype, atol, rtol) in DTYPES:
        for (bt, v) in [(8, 64), (7, 333)]:
            for beta in (0.5, 0.0, 1.0):
                labels = _targets(bt, v, dev, 2) if beta == 0.5 else None
                yield Case(f"{bt}x{v} {str(dtype)[6:]} beta {beta}{' labels' if labels is not None else ''}",
                           [torch.log_softmax(_logits(bt, v, torch.float32, dev), -1).to(dtype),
                            torch.log_softmax(_logits(bt, v, torch.float32, dev), -1).to(dtype), labels],
                           lambda q, p, lab, b=beta: f.apply(q, p, lab, b),
                           lambda q, p, lab, b=beta: _jsd(q, p, b, lab),
                           atol * 10, rtol * 10, grad=[0])


@op("kl_div")
def kl_div(dev):
    f = liger("kl_div").LigerKLDivLossFunction
    for (dtype, atol, rtol) in DTYPES:
        for (bt, v) in [(8, 64), (7, 333)]:
            for reduction, log_target in (("batchmean", False), ("sum", True), ("none", False)):
                yield Case(f"{bt}x{v} {str(dtype)[6:]} {reduction}{' log target' if log_target else ''}",
                           [torch.log_softmax(_logits(bt, v, torch.float32, dev), -1).to(dtype),
                            (torch.log_softmax if log_target else torch.softmax)(
                                _logits(bt, v, torch.float32, dev), -1).to(dtype)],
                           lambda x, y, r=reduction, lt=log_target: f.apply(x, y, r, lt),
                           lambda x, y, r=reduction, lt=log_target: _kl(x, y, r, lt),
                           atol * 10, rtol * 10, grad=[0])


def _kl(x, y, reduction, log_target):
    out = F.kl_div(x, y, reduction="none", log_target=log_target)
    if reduction == "sum":
        return out.sum()
    return out.sum() / x.shape[0] if reduction == "batchmean" else out


@op("tvd")
def tvd(dev):
    f = liger("tvd").LigerTVDLossFunction

    def ref(p, q, labels):
        rows = (p - q).abs() / 2
        if labels is None:
            return rows.sum() / p.shape[0]
        keep = labels != -100
        return torch.where(keep[:, None], rows, 0.0).sum() / keep.sum()

    for (dtype, atol, rtol) in DTYPES:
        for (bt, v) in [(8, 64), (7, 333)]:
            for labels in (None, _targets(bt, v, dev, 2)):
                yield Case(f"{bt}x{v} {str(dtype)[6:]}{' labels' if labels is not None else ''}",
                           [torch.softmax(_logits(bt, v, torch.float32, dev), -1).to(dtype),
                            torch.softmax(_logits(bt, v, torch.float32, dev), -1).to(dtype), labels],
                           lambda p, q, lab: f.apply(p, q, lab, "batchmean"), ref,
                           atol * 10, rtol * 10, grad=[0])


@op("fused_linear_jsd")
def fused_linear_jsd(dev):
    f = liger("fused_linear_jsd").LigerFusedLinearJSDFunction

    def ref(xs, ws, xt, wt, labels, beta, temp):
        log_q = torch.log_softmax(F.linear(xs, ws) / temp, -1)
        log_p = torch.log_softmax(F.linear(xt, wt) / temp, -1)
        return _jsd(log_q, log_p, beta, labels)

    for (dtype, atol, rtol) in DTYPES:
        for (bt, h, v, beta, temp) in [(8, 32, 64, 0.5, 1.0), (7, 48, 300, 0.0, 2.0)]:
            labels = _targets(bt, v, dev, 2) if beta == 0.5 else None
            yield Case(f"{bt}x{h} -> {v} {str(dtype)[6:]} beta {beta} T {temp}",
                       [rnd(bt, h, dtype=dtype, device=dev), rnd(v, h, dtype=dtype, device=dev, scale=0.2),
                        rnd(bt, h, dtype=dtype, device=dev), rnd(v, h, dtype=dtype, device=dev, scale=0.2),
                        labels],
                       lambda xs, ws, xt, wt, lab, b=beta, t=temp: f.apply(xs, ws, xt, wt, lab, b, -100, t),
                       lambda xs, ws, xt, wt, lab, b=beta, t=temp: ref(xs, ws, xt, wt, lab, b, t),
                       atol * 10, rtol * 10, grad=[0, 1])


@op("grpo_loss")
def grpo_loss(dev):
    f = liger("grpo_loss").GrpoLossFunction

    def ref(logits, old, ref_logp, ids, adv, mask, temp, beta, eps_lo, eps_hi):
        logp = torch.log_softmax(logits[:, :-1] / temp, -1).gather(-1, ids[..., None])[..., 0]
        ratio = torch.exp(logp - old)
        clipped = torch.clamp(ratio, 1 - eps_lo, 1 + eps_hi)
        loss = -torch.min(ratio * adv[:, None], clipped * adv[:, None])
        kl = torch.exp(ref_logp - logp) - (ref_logp - logp) - 1
        return (loss + beta * kl) * mask, kl * mask

    for (b, l, v) in [(2, 5, 64), (3, 7, 333)]:
        logits = rnd(b, l + 1, v, device=dev)
        ids = torch.randint(0, v, (b, l)).to(dev)
        old = (torch.log_softmax(logits[:, :-1].float() / 0.9, -1).gather(-1, ids[..., None])[..., 0]
               + 0.1 * torch.randn(b, l).to(dev))
        ref_logp = old + 0.1 * torch.randn(b, l).to(dev)
        mask = torch.ones(b, l, dtype=torch.int32, device=dev)
        mask[0, -2:] = 0
        adv = torch.randn(b).to(dev)
        yield Case(f"{b}x{l + 1}x{v} float32", [logits, old, ref_logp, ids, adv, mask],
                   lambda lg, o, r, i, a, m: f.apply(lg, o, r, i, a, m, 0.9, 0.04, 0.2, 0.2, False,
                                                     "grpo", None, False)[:2],
                   lambda lg, o, r, i, a, m: ref(lg, o, r, i, a, m, 0.9, 0.04, 0.2, 0.2),
                   1e-4, 1e-4, grad=[0], bwd_outputs=[0])


# --- larger ops ---------------------------------------------------------------------------


@op("attn_res")
def attn_res(dev):
    f = liger("attn_res").LigerAttnResFunction

    def ref(v, w_query, w_norm):
        keys = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6) * w_norm
        alpha = torch.softmax((keys * w_query).sum(-1), dim=0)  # over the N blocks
        return (alpha[..., None] * v).sum(0)

    for (dtype, atol, rtol) in DTYPES:
        for (n, b, t, d) in [(4, 2, 3, 64), (3, 1, 5, 97)]:
            yield Case(f"{n} blocks {b}x{t}x{d} {str(dtype)[6:]}",
                       [rnd(n, b, t, d, dtype=dtype, device=dev), rnd(d, dtype=dtype, device=dev, scale=0.3),
                        rnd(d, dtype=dtype, device=dev)],
                       lambda v, q, w: f.apply(v, q, w, 1e-6), ref,
                       atol * 10, rtol * 10, grad=[0, 1, 2])


def _sinkhorn(logits, tmax, eps):
    mat = torch.softmax(logits, dim=-1) + eps
    mat = mat / (mat.sum(-2, keepdim=True) + eps)
    for _ in range(tmax - 1):
        mat = mat / (mat.sum(-1, keepdim=True) + eps)
        mat = mat / (mat.sum(-2, keepdim=True) + eps)
    return mat


@op("mhc")
def mhc(dev):
    m = liger("mhc")
    cfg = dict(tmax=8, rms_eps=1e-6, pre_eps=1e-4, sinkhorn_eps=1e-6, post_mult=2.0)

    def coeffs_ref(x, phi, b, a_pre, a_post, a_res):
        hc, c = x.shape[-2:]
        xm = x.reshape(-1, hc * c)
        mix = (xm @ phi) * torch.rsqrt(xm.pow(2).mean(-1, keepdim=True) + cfg["rms_eps"])
        h_pre = torch.sigmoid(mix[:, :hc] * a_pre + b[:hc]) + cfg["pre_eps"]
        h_post = torch.sigmoid(mix[:, hc:2 * hc] * a_post + b[hc:2 * hc]) * cfg["post_mult"]
        res = mix[:, 2 * hc:].view(-1, hc, hc) * a_res + b[2 * hc:].view(hc, hc)
        h_res = _sinkhorn(res, cfg["tmax"], cfg["sinkhorn_eps"])
        outer = x.shape[:-2]
        return h_pre.view(*outer, hc), h_post.view(*outer, hc), h_res.view(*outer, hc, hc)

    for (b, t, hc, c) in [(2, 4, 2, 32), (1, 5, 4, 48)]:
        k, mm = hc * c, hc * hc + 2 * hc
        scalars = [torch.tensor(1.0, device=dev) for _ in range(3)]
        yield Case(f"coeffs {b}x{t}x{hc}x{c} float32",
                   [rnd(b, t, hc, c, device=dev), rnd(k, mm, device=dev, scale=0.02),
                    rnd(mm, device=dev, scale=0.1), *scalars],
                   lambda x, phi, bb, p, q, r: m.LigerMHCCoeffsFunction.apply(
                       x, phi, bb, p, q, r, True, cfg["tmax"], cfg["rms_eps"], cfg["pre_eps"],
                       cfg["sinkhorn_eps"], cfg["post_mult"]),
                   coeffs_ref, 5e-4, 1e-3, grad=[0, 1, 2, 3, 4, 5], bwd_atol=2e-3, bwd_rtol=2e-3)
        for (dtype, atol, rtol) in DTYPES:
            yield Case(f"pre {b}x{t}x{hc}x{c} {str(dtype)[6:]}",
                       [rnd(b, t, hc, c, dtype=dtype, device=dev), rnd(b, t, hc, device=dev)],
                       lambda x, h: m.LigerMHCPreFunction.apply(x, h),
                       lambda x, h: (x * h[..., None]).sum(-2), atol * 10, rtol * 10, grad=[0, 1])
            yield Case(f"post/res {b}x{t}x{hc}x{c} {str(dtype)[6:]}",
                       [rnd(b, t, hc, c, dtype=dtype, device=dev), rnd(b, t, c, dtype=dtype, device=dev),
                        rnd(b, t, hc, device=dev), rnd(b, t, hc, hc, device=dev)],
                       lambda x, fo, hp, hr: m.LigerMHCPostResFunction.apply(x, fo, hp, hr),
                       lambda x, fo, hp, hr: fo[..., None, :] * hp[..., None] + hr @ x,
                       atol * 10, rtol * 10, grad=[0, 1, 2, 3])


@op("fused_moe")
def fused_moe(dev):
    f = liger("fused_moe").LigerFusedMoEFunction

    def ref(x, gate_up, down, idx, weights):
        g = gate_up[idx.long()]  # (T, K, 2I, H)
        gate, up = torch.einsum("tkoh,th->tko", g, x).chunk(2, dim=-1)
        y = torch.einsum("tkhi,tki->tkh", down[idx.long()], F.silu(gate) * up)
        return (y * weights[..., None]).sum(1)

    for (dtype, atol, rtol) in DTYPES:
        for (t, e, h, inter, k) in [(16, 4, 32, 48, 2), (13, 3, 40, 24, 1)]:
            idx = torch.stack([torch.randperm(e)[:k] for _ in range(t)]).to(torch.int32).to(dev)
            weights = torch.softmax(torch.randn(t, k), -1).to(dtype).to(dev)
            yield Case(f"T {t} E {e} H {h} I {inter} K {k} {str(dtype)[6:]}",
                       [rnd(t, h, dtype=dtype, device=dev), rnd(e, 2 * inter, h, dtype=dtype, device=dev, scale=0.1),
                        rnd(e, h, inter, dtype=dtype, device=dev, scale=0.1), idx, weights],
                       lambda x, gu, dn, i, w: f.apply(x, gu, dn, i, w), ref,
                       # float32: Liger's tolerances for its tf32 dots
                       max(atol * 10, 1e-3), max(rtol * 10, 1e-4), grad=[0, 1, 2, 4],
                       bwd_atol=max(atol * 10, 3e-3), bwd_rtol=max(rtol * 10, 1e-2))


@op("mlp")
def mlp(dev):
    f = liger("mlp").LigerMLPFunction
    if dev != "cuda":
        raise NotApplicable("LigerMLPFunction asserts CUDA tensors")

    def ref(x, wg, wu, wd):
        return F.linear(F.silu(F.linear(x, wg)) * F.linear(x, wu), wd)

    for (dtype, atol, rtol) in [(torch.float16, 1e-1, 2e-2), BF16]:
        for (b, t, h, inter) in [(2, 32, 64, 128), (1, 48, 96, 160)]:  # its input is B x S x H
            yield Case(f"{b}x{t}x{h} I {inter} {str(dtype)[6:]}",
                       [rnd(b, t, h, dtype=dtype, device=dev),
                        rnd(inter, h, dtype=dtype, device=dev, scale=0.1),
                        rnd(inter, h, dtype=dtype, device=dev, scale=0.1),
                        rnd(h, inter, dtype=dtype, device=dev, scale=0.1)],
                       lambda x, g, u, d: f.apply(x, g, u, d), ref, atol, rtol, grad=[0, 1, 2, 3])


@op("multi_token_attention")
def multi_token_attention(dev):
    f = liger("multi_token_attention").LigerMultiTokenAttentionFunction

    def ref(scores, w, b, pad):
        causal = torch.ones(scores.shape[-1], scores.shape[-1], dtype=torch.bool,
                            device=scores.device).triu(1)
        probs = torch.softmax(scores.masked_fill(causal, -1e9), -1)
        return F.conv2d(probs, w, b, padding=pad).masked_fill(causal, 0.0)

    for (dtype, atol, rtol) in DTYPES:
        for (b, c, l, ksz) in [(2, 4, 16, 3), (1, 3, 23, 5)]:
            yield Case(f"{b}x{c}x{l}x{l} kernel {ksz} {str(dtype)[6:]}",
                       [rnd(b, c, l, l, dtype=dtype, device=dev), rnd(c, c, ksz, ksz, dtype=dtype, device=dev, scale=0.3),
                        rnd(c, dtype=dtype, device=dev, scale=0.1)],
                       lambda s, w, bias, p=ksz // 2: f.apply(s, w, bias, 1, p),
                       lambda s, w, bias, p=ksz // 2: ref(s, w, bias, p),
                       atol * 10, rtol * 10, grad=[0, 1, 2])


@op("fused_neighborhood_attention")
def fused_neighborhood_attention(dev):
    f = liger("fused_neighborhood_attention").LigerFusedNeighborhoodAttentionFunction

    def ref(q, k, v, ksz, dil):
        n = q.shape[-2]
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        near = ((j - i).abs() <= (ksz // 2) * dil) & ((j - i) % dil == 0)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        return torch.softmax(s.masked_fill(~near.to(q.device), float("-inf")), -1) @ v

    for (dtype, atol, rtol) in DTYPES:
        for (b, h, n, d, ksz, dil) in [(1, 2, 16, 32, 7, 1), (2, 2, 19, 16, 5, 2)]:
            yield Case(f"{b}x{h}x{n}x{d} kernel {ksz} dilation {dil} {str(dtype)[6:]}",
                       [rnd(b, h, n, d, dtype=dtype, device=dev) for _ in range(3)],
                       lambda q, k, v, ks=ksz, dl=dil: f.apply(q, k, v, ks, dl),
                       lambda q, k, v, ks=ksz, dl=dil: ref(q, k, v, ks, dl),
                       max(atol * 10, 5e-3), max(rtol * 10, 5e-3), grad=[0, 1, 2])  # tf32 dots


@op("vocab_parallel_cross_entropy")
def vocab_parallel_cross_entropy(dev):
    f = liger("vocab_parallel_cross_entropy").LigerVocabParallelCEFunction
    for (dtype, atol, rtol) in DTYPES:
        for (s, b, v, smoothing) in [(4, 2, 64, 0.0), (3, 3, 333, 0.1)]:
            yield Case(f"{s}x{b}x{v} {str(dtype)[6:]} smoothing {smoothing} (one rank)",
                       [rnd(s, b, v, dtype=dtype, device=dev, scale=2.0), _targets(s * b, v, dev, 1).view(s, b)],
                       lambda x, t, sm=smoothing: f.apply(x, t, None, -100, sm, "pytorch", "global"),
                       lambda x, t, sm=smoothing: F.cross_entropy(
                           x.reshape(-1, x.shape[-1]), t.reshape(-1), ignore_index=-100,
                           label_smoothing=sm, reduction="none").view(t.shape),
                       atol * 10, rtol * 10, grad=[0])


@op("fused_linear_scaled_cross_entropy")
def fused_linear_scaled_cross_entropy(dev):
    raise NotApplicable("no Triton kernel: PyTorch on this path, CuTe DSL on sm_90")
    yield  # a generator, like the others


@op("tiled_mlp")
def tiled_mlp(dev):
    raise NotApplicable("no Triton kernel: runs the given MLP shard by shard")
    yield
