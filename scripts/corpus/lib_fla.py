"""flash-linear-attention (`fla`, github.com/fla-org/flash-linear-attention; its kernels
ship as `fla-core`): chunked linear-attention recurrences (GLA, delta rules, retention,
HGRN), flash attention, norms, activations, convolutions.  Its Triton is the densest of
the corpus: `tl.dot` chains over chunks, `tl.make_block_ptr` with boundary checks,
autotune over block sizes and warps (through its own Autotuner subclass),
`triton.heuristics`, `tl.where`-masked triangular blocks, exp2/log2 gates.

References are written here from each op's definition (recurrences step by step), in
fla's layout: [batch, time, heads, dim]; lengths that are not multiples of its chunks.
"""

from __future__ import annotations

import os
import sys
import types

import torch
import torch.nn.functional as F

from common import F32, Case, Ops, label, module, rnd, without_torch_compile

RELEASE = "fla-core==0.6.0"
ARCHIVE = "fla_core-0.6.0-py3-none-any.whl"
ROOT = ""
DEPS = ["einops-0.8.1-py3-none-any.whl", "packaging-25.0-py3-none-any.whl"]
MARKERS = ("fla/",)

OPS = Ops()
TOL = (2e-2, 2e-2)  # tf32 dots (the interpreter rounds as the GPU does); chunked sums
B, T, H, K, V = 2, 100, 2, 32, 32  # T: one whole chunk of 64 and a partial one


def load(src: str, device: str) -> None:
    """fla.ops and fla.modules hollowed (their __init__ imports every op: one that failed
    to import would take all the others with it)."""
    sys.path.insert(0, src)
    import fla  # noqa: F401 - its __init__ imports only optional layers

    _hollow(src, "fla.ops")
    _hollow(src, "fla.modules")


def _hollow(src: str, name: str) -> types.ModuleType:
    """The package `name` without running its __init__."""
    pkg = types.ModuleType(name)
    pkg.__path__ = [os.path.join(src, *name.split("."))]
    pkg.__file__ = os.path.join(pkg.__path__[0], "__init__.py")
    sys.modules[name] = pkg
    parent, _, leaf = name.rpartition(".")
    setattr(sys.modules[parent], leaf, pkg)
    return pkg


def standins() -> None:
    """Driver-side stand-ins for what fla needs of Triton's API beyond the language, to see
    what lies behind those gaps: fla's `fla_cache_autotune` (a subclass of Triton's
    Autotuner that reads tuned configs from disk) replaced by plain `triton.autotune` with
    the same configs and keys; its probe `find_spec_cached("triton.experimental.gluon")`
    answering None where the import system raises ImportError; `torch.compile` (on two of
    its host-side helpers) left out."""
    import triton

    env = module("fla.utils.env")
    probe = env.find_spec_cached

    def find_spec_or_none(name):
        try:
            return probe(name)
        except ImportError:
            return None

    env.find_spec_cached = sys.modules["fla.utils"].find_spec_cached = find_spec_or_none
    without_torch_compile()

    src = os.path.dirname(sys.modules["fla"].__path__[0])
    _hollow(src, "fla.ops.utils")  # its __init__ would decorate kernels before the patch
    cache = module("fla.ops.utils.cache")
    del sys.modules["fla.ops.utils"]

    def plain_autotune(configs, key=None, prune_configs_by=None, reset_to_zero=None,
                       restore_value=None, pre_hook=None, post_hook=None, warmup=None,
                       rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
        return triton.autotune(configs, key or [], prune_configs_by=prune_configs_by,
                               reset_to_zero=reset_to_zero, restore_value=restore_value,
                               pre_hook=pre_hook, post_hook=post_hook)

    cache.fla_cache_autotune = plain_autotune


# --- references -------------------------------------------------------------------------------


def _outer(a, b):
    return a[..., :, None] * b[..., None, :]


def ref_linear_recurrence(q, k, v, scale, decay=None, decay_k=None, beta=None, h0=None):
    """S_t = d_t ⊙ S_{t-1} (+ delta-rule correction) + k_t v_tᵀ, o_t = scale · q_tᵀ S_t.
    decay: [B,T,H] (log, per head); decay_k: [B,T,H,K] (log, per key); beta: [B,T,H]
    switches to the delta rule S += k (β (v - Sᵀk))ᵀ."""
    b, t, h, kd = q.shape
    S = torch.zeros(b, h, kd, v.shape[-1], dtype=q.dtype, device=q.device) if h0 is None else h0.clone()
    out = []
    for i in range(t):
        if decay is not None:
            S = S * decay[:, i].exp()[..., None, None]
        if decay_k is not None:
            S = S * decay_k[:, i].exp()[..., None]
        if beta is None:
            S = S + _outer(k[:, i], v[:, i])
        else:
            u = v[:, i] - torch.einsum("bhk,bhkv->bhv", k[:, i], S)
            S = S + _outer(k[:, i], u * beta[:, i, :, None])
        out.append(torch.einsum("bhk,bhkv->bhv", q[:, i] * scale, S))
    return torch.stack(out, 1), S


def _qkv(dev, dtype=torch.float32, normalize=False):
    q, k, v = (rnd(B, T, H, K), rnd(B, T, H, K), rnd(B, T, H, V))
    if normalize:  # the delta rules keep |k| = 1 (fla's callers l2-normalize)
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
    return [x.to(dtype).to(dev) for x in (q, k, v)]


def _gate(*shape, dev):
    return F.logsigmoid(torch.randn(shape)).to(dev) / 4


# --- linear attention and its gated relatives --------------------------------------------------


def _chunk_case(name, fn, ref, inputs, grad, tol=TOL):
    return Case(f"{name} B{B} T{T} H{H} K{K} V{V}", inputs, fn, ref, *tol, grad=grad,
                bwd_atol=tol[0] * 5, bwd_rtol=tol[1] * 5)


@OPS.op("chunk_simple_gla", "fla.ops.simple_gla.chunk")
def chunk_simple_gla(dev):
    f = module("fla.ops.simple_gla.chunk").chunk_simple_gla
    yield _chunk_case("gated", lambda q, k, v, g: f(q, k, v, g=g, output_final_state=True),
                      lambda q, k, v, g: ref_linear_recurrence(q, k, v, K ** -0.5, decay=g),
                      [*_qkv(dev), _gate(B, T, H, dev=dev)], [0, 1, 2, 3])


@OPS.op("fused_recurrent_simple_gla", "fla.ops.simple_gla.fused_recurrent")
def fused_recurrent_simple_gla(dev):
    f = module("fla.ops.simple_gla.fused_recurrent").fused_recurrent_simple_gla
    yield _chunk_case("gated", lambda q, k, v, g: f(q, k, v, g=g, output_final_state=True),
                      lambda q, k, v, g: ref_linear_recurrence(q, k, v, K ** -0.5, decay=g),
                      [*_qkv(dev), _gate(B, T, H, dev=dev)], [0, 1, 2, 3])


@OPS.op("chunk_gla", "fla.ops.gla.chunk")
def chunk_gla(dev):
    f = module("fla.ops.gla.chunk").chunk_gla
    yield _chunk_case("per-key gate", lambda q, k, v, g: f(q, k, v, g, output_final_state=True),
                      lambda q, k, v, g: ref_linear_recurrence(q, k, v, K ** -0.5, decay_k=g),
                      [*_qkv(dev), _gate(B, T, H, K, dev=dev)], [0, 1, 2, 3])


@OPS.op("fused_recurrent_gla", "fla.ops.gla.fused_recurrent")
def fused_recurrent_gla(dev):
    f = module("fla.ops.gla.fused_recurrent").fused_recurrent_gla
    yield _chunk_case("per-key gate", lambda q, k, v, g: f(q, k, v, gk=g, output_final_state=True),
                      lambda q, k, v, g: ref_linear_recurrence(q, k, v, K ** -0.5, decay_k=g),
                      [*_qkv(dev), _gate(B, T, H, K, dev=dev)], [0, 1, 2, 3])


@OPS.op("chunk_linear_attn", "fla.ops.linear_attn.chunk")
def chunk_linear_attn(dev):
    f = module("fla.ops.linear_attn.chunk").chunk_linear_attn
    yield _chunk_case("unnormalized", lambda q, k, v: f(q, k, v, output_final_state=True,
                                                         normalize=False),
                      lambda q, k, v: ref_linear_recurrence(q, k, v, K ** -0.5),
                      _qkv(dev), [0, 1, 2])


@OPS.op("chunk_retention", "fla.ops.retention.chunk")
def chunk_retention(dev):
    f = module("fla.ops.retention.chunk").chunk_retention

    def ref(q, k, v):  # head h decays by 1 - 2^(-5-h) per step
        g = torch.log1p(-torch.exp2(-5.0 - torch.arange(H, dtype=torch.float32, device=q.device)))
        return ref_linear_recurrence(q, k, v, K ** -0.5, decay=g.expand(B, T, H))

    yield _chunk_case("fixed decays", lambda q, k, v: f(q, k, v, output_final_state=True), ref,
                      _qkv(dev), [0, 1, 2])


@OPS.op("chunk_delta_rule", "fla.ops.delta_rule.chunk")
def chunk_delta_rule(dev):
    f = module("fla.ops.delta_rule.chunk").chunk_delta_rule
    beta = torch.sigmoid(torch.randn(B, T, H)).to(torch.bfloat16).to(dev)
    yield _chunk_case("beta bfloat16", lambda q, k, v, b: f(q, k, v, b, output_final_state=True),
                      lambda q, k, v, b: ref_linear_recurrence(q, k, v, K ** -0.5, beta=b),
                      [*_qkv(dev, torch.bfloat16, normalize=True), beta], [0, 1, 2, 3],
                      tol=(5e-2, 5e-2))  # it refuses float32


@OPS.op("fused_recurrent_delta_rule", "fla.ops.delta_rule.fused_recurrent")
def fused_recurrent_delta_rule(dev):
    f = module("fla.ops.delta_rule.fused_recurrent").fused_recurrent_delta_rule
    beta = torch.sigmoid(torch.randn(B, T, H)).to(dev)
    yield _chunk_case("beta", lambda q, k, v, b: f(q, k, v, b, output_final_state=True),
                      lambda q, k, v, b: ref_linear_recurrence(q, k, v, K ** -0.5, beta=b),
                      [*_qkv(dev, normalize=True), beta], [0, 1, 2, 3])


@OPS.op("chunk_gated_delta_rule", "fla.ops.gated_delta_rule.chunk")
def chunk_gated_delta_rule(dev):
    f = module("fla.ops.gated_delta_rule.chunk").chunk_gated_delta_rule
    beta = torch.sigmoid(torch.randn(B, T, H)).to(dev)
    yield _chunk_case("gate, beta", lambda q, k, v, g, b: f(q, k, v, g, b, output_final_state=True),
                      lambda q, k, v, g, b: ref_linear_recurrence(q, k, v, K ** -0.5, decay=g, beta=b),
                      [*_qkv(dev, normalize=True), _gate(B, T, H, dev=dev), beta], [0, 1, 2, 3, 4])


@OPS.op("fused_recurrent_hgrn", "fla.ops.hgrn.fused_recurrent")
def fused_recurrent_hgrn(dev):
    f = module("fla.ops.hgrn.fused_recurrent").fused_recurrent_hgrn

    def ref(x, g):  # h_t = exp(g_t) h_{t-1} + x_t
        h, out = torch.zeros_like(x[:, 0]), []
        for i in range(x.shape[1]):
            h = g[:, i].exp() * h + x[:, i]
            out.append(h)
        return torch.stack(out, 1), h

    for d in (64, 100):
        yield Case(f"B{B} T{T} D{d}", [rnd(B, T, d, device=dev), _gate(B, T, d, dev=dev)],
                   lambda x, g: f(x, g, output_final_state=True), ref, 1e-4, 1e-4, grad=[0, 1],
                   bwd_atol=1e-3, bwd_rtol=1e-3)


@OPS.op("chunk_hgrn", "fla.ops.hgrn.chunk")
def chunk_hgrn(dev):
    f = module("fla.ops.hgrn.chunk").chunk_hgrn
    for case in fused_recurrent_hgrn(dev):
        case.fn = lambda x, g: f(x, g, output_final_state=True)
        # its backward drops the final state's gradient (`dht`): backward through the
        # outputs alone, else Triton and tilecc both "mismatch" the reference
        case.bwd_outputs = [0]
        yield case


@OPS.op("parallel_attn", "fla.ops.attn.parallel")
def parallel_attn(dev):
    f = module("fla.ops.attn.parallel").parallel_attn

    def ref(q, k, v):
        o = F.scaled_dot_product_attention(*(x.transpose(1, 2) for x in (q, k, v)), is_causal=True)
        return o.transpose(1, 2)

    for dtype, atol, rtol in (F32, (torch.bfloat16, 2e-2, 2e-2)):
        yield Case(f"causal B{B} T{T} H{H} K{K} {str(dtype)[6:]}", _qkv(dev, dtype), f, ref,
                   max(atol, TOL[0]), max(rtol, TOL[1]), grad=[0, 1, 2], bwd_atol=max(atol, TOL[0]) * 5)


# --- building blocks ----------------------------------------------------------------------------


@OPS.op("chunk_local_cumsum", "fla.ops.utils.cumsum")
def chunk_local_cumsum(dev):
    f = module("fla.ops.utils.cumsum").chunk_local_cumsum

    def ref(g, chunk, reverse):
        pad = (-g.shape[1]) % chunk
        x = F.pad(g, (0, 0, 0, pad) if g.dim() == 3 else (0, 0, 0, 0, 0, pad))
        x = x.reshape(g.shape[0], -1, chunk, *g.shape[2:])
        x = x.flip(2).cumsum(2).flip(2) if reverse else x.cumsum(2)
        return x.reshape(g.shape[0], -1, *g.shape[2:])[:, :g.shape[1]]

    for shape in ((B, T, H), (B, T, H, K)):
        for reverse in (False, True):
            yield Case(f"{label(shape, torch.float32)}{' reverse' if reverse else ''}",
                       [rnd(*shape, device=dev)], lambda g, r=reverse: f(g, 64, reverse=r),
                       lambda g, r=reverse: ref(g, 64, r), 1e-4, 1e-4, backward=False)


@OPS.op("solve_tril", "fla.ops.utils.solve_tril")
def solve_tril(dev):
    f = module("fla.ops.utils.solve_tril").solve_tril

    def ref(a):  # (I + A)⁻¹ of each chunk's strictly lower triangular block
        b, t, h, bt = a.shape
        blocks = a.reshape(b, t // bt, bt, h, bt).permute(0, 1, 3, 2, 4)
        inv = torch.linalg.inv(torch.eye(bt, device=blocks.device) + blocks)
        return inv.permute(0, 1, 3, 2, 4).reshape(b, t, h, bt)

    for bt in (16, 32, 64):
        t = 2 * bt
        a = torch.randn(B, t // bt, bt, H, bt) * 0.1
        a = a * torch.tril(torch.ones(bt, bt), -1)[None, None, :, None, :]
        yield Case(f"chunk {bt}, T {t}", [a.reshape(B, t, H, bt).to(dev)], lambda a: f(a), ref,
                   1e-4, 1e-4, backward=False)


@OPS.op("softmax_logsumexp", "fla.ops.utils.softmax")
def softmax_logsumexp(dev):
    sm = module("fla.ops.utils.softmax").softmax_fwd
    lse = module("fla.ops.utils.logsumexp").logsumexp_fwd
    for shape in ((4, 64), (3, 100), (2, 5, 300)):
        yield Case(f"softmax {label(shape, torch.float32)}", [rnd(*shape, device=dev)],
                   lambda x: sm(x), lambda x: torch.softmax(x, -1), 1e-5, 1e-5, backward=False)
        yield Case(f"logsumexp {label(shape, torch.float32)}", [rnd(*shape, device=dev)],
                   lambda x: lse(x), lambda x: torch.logsumexp(x, -1), 1e-4, 1e-5, backward=False)


@OPS.op("l2norm", "fla.modules.norm.l2norm")
def l2norm(dev):
    f = module("fla.modules.norm.l2norm").l2norm
    for shape in ((B, T, H, K), (7, 100), (3, 300)):
        yield Case(label(shape, torch.float32), [rnd(*shape, device=dev)], lambda x: f(x, 1e-6),
                   lambda x: x * torch.rsqrt((x * x).sum(-1, keepdim=True) + 1e-6),
                   1e-5, 1e-5, grad=[0], bwd_atol=1e-4)


@OPS.op("rms_norm", "fla.modules.norm.layernorm")
def rms_norm(dev):
    m = module("fla.modules.norm.layernorm")
    for shape in ((B, T, 64), (5, 97)):
        h = shape[-1]
        yield Case(f"rms {label(shape, torch.float32)}",
                   [rnd(*shape, device=dev), rnd(h, device=dev), rnd(h, device=dev)],
                   lambda x, w, b: m.rms_norm(x, w, b, eps=1e-6),
                   lambda x, w, b: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w + b,
                   1e-4, 1e-4, grad=[0, 1, 2], bwd_atol=1e-3)
        yield Case(f"layer {label(shape, torch.float32)} + residual",
                   [rnd(*shape, device=dev), rnd(h, device=dev), rnd(h, device=dev), rnd(*shape, device=dev)],
                   lambda x, w, b, r: m.layer_norm(x, w, b, residual=r, eps=1e-6),
                   lambda x, w, b, r: F.layer_norm(x + r, (h,), w, b, 1e-6),
                   1e-4, 1e-4, grad=[0, 1, 2, 3], bwd_atol=1e-3)


@OPS.op("rms_norm_gated", "fla.modules.norm.fused_norm_gate")
def rms_norm_gated(dev):
    m = module("fla.modules.norm.fused_norm_gate")
    for shape in ((B, T, 64), (5, 97)):
        h = shape[-1]
        yield Case(f"swish gate {label(shape, torch.float32)}",
                   [rnd(*shape, device=dev), rnd(*shape, device=dev), rnd(h, device=dev), rnd(h, device=dev)],
                   lambda x, g, w, b: m.rms_norm_gated(x, g, w, b, "swish", eps=1e-6),
                   lambda x, g, w, b: (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w + b) * F.silu(g),
                   1e-4, 1e-4, grad=[0, 1, 2, 3], bwd_atol=1e-3)


@OPS.op("swiglu", "fla.modules.activations.ops")
def swiglu(dev):
    m = module("fla.modules.activations.ops")
    for shape in ((B, T, 64), (5, 97)):
        yield Case(f"swiglu {label(shape, torch.float32)}", [rnd(*shape, device=dev), rnd(*shape, device=dev)],
                   lambda x, y: m.swiglu(x, y), lambda x, y: F.silu(x) * y, 1e-5, 1e-5, grad=[0, 1],
                   bwd_atol=1e-4)
        yield Case(f"logsigmoid {label(shape, torch.float32)}", [rnd(*shape, device=dev)],
                   lambda x: m.logsigmoid(x), F.logsigmoid, 1e-5, 1e-5, grad=[0])


@OPS.op("rotary", "fla.modules.rotary.ops")
def rotary(dev):
    f = module("fla.modules.rotary.ops").rotary_embedding

    def ref(x, cos, sin, interleaved):
        d = cos.shape[-1] * 2
        c = cos.repeat_interleave(2, -1) if interleaved else torch.cat([cos, cos], -1)
        s = sin.repeat_interleave(2, -1) if interleaved else torch.cat([sin, sin], -1)
        r = x[..., :d]
        if interleaved:
            rot = torch.stack([-r[..., 1::2], r[..., ::2]], -1).flatten(-2)
        else:
            rot = torch.cat([-r[..., d // 2:], r[..., :d // 2]], -1)
        return torch.cat([r * c[:, None] + rot * s[:, None], x[..., d:]], -1)

    for rot_dim in (K, K // 2):
        for interleaved in (False, True):
            ang = torch.rand(T, rot_dim // 2) * 6.0
            yield Case(f"rotary dim {rot_dim}{' interleaved' if interleaved else ''}",
                       [rnd(B, T, H, K, device=dev), ang.cos().to(dev), ang.sin().to(dev)],
                       lambda x, c, s, i=interleaved: f(x, c, s, interleaved=i),
                       lambda x, c, s, i=interleaved: ref(x, c, s, i), 1e-5, 1e-5, grad=[0])


@OPS.op("causal_conv1d", "fla.modules.causal_conv1d.ops")
def causal_conv1d(dev):
    f = module("fla.modules.causal_conv1d.ops").causal_conv1d

    def ref(x, w, b, act):
        y = F.conv1d(F.pad(x.transpose(1, 2), (w.shape[1] - 1, 0)), w[:, None], b, groups=w.shape[0])
        y = y.transpose(1, 2)
        return F.silu(y) if act else y

    for d, width, act in ((64, 4, "silu"), (100, 3, None)):
        yield Case(f"B{B} T{T} D{d} width {width} {act}",
                   [rnd(B, T, d, device=dev), rnd(d, width, device=dev, scale=0.5), rnd(d, device=dev)],
                   lambda x, w, b, a=act: f(x, w, b, activation=a, backend="triton")[0],
                   lambda x, w, b, a=act: ref(x, w, b, a), 1e-4, 1e-4, grad=[0, 1, 2], bwd_atol=1e-3)


@OPS.op("cross_entropy", "fla.modules.fused_cross_entropy.ops")
def cross_entropy(dev):
    f = module("fla.modules.fused_cross_entropy.ops").cross_entropy_loss
    for n, vocab, smoothing in ((8, 64, 0.0), (7, 1000, 0.1)):
        t = torch.randint(0, vocab, (n,))
        t[1] = -100
        yield Case(f"{n}x{vocab} smoothing {smoothing}", [rnd(n, vocab, device=dev, scale=2.0), t.to(dev)],
                   lambda x, t, s=smoothing: f(x, t, label_smoothing=s)[0],
                   lambda x, t, s=smoothing: F.cross_entropy(x, t, reduction="none", label_smoothing=s),
                   1e-4, 1e-4, grad=[0], bwd_atol=1e-4)

