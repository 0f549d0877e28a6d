"""The Liger-Kernel ops that the corpus runs (lib_liger.py): for each op module, the inputs
of a few calls of its autograd Function and a plain-PyTorch reference of what it computes
(written here from each op's definition; references get the inputs upcast to float32).

Shapes are small (the interpreter runs every program of a grid in turn) and include sizes
that are not powers of two; bfloat16 runs where the op takes it.  Tolerances follow
Liger's own tests: tight for float32, loose for bfloat16 against a float32 reference.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from common import BF16, F32, Case, NotApplicable, Ops, label, module, rnd  # noqa: F401

OPS = Ops()  # op -> (its module in liger_kernel.ops, cases)
DTYPES = [F32, BF16]


def op(name: str, module_name: str | None = None):
    return OPS.op(name, f"liger_kernel.ops.{module_name or name}")


def liger(module_name: str):
    return module(f"liger_kernel.ops.{module_name}")


def _rms(x, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


# --- norms --------------------------------------------------------------------------------


@op("rms_norm")
def rms_norm(dev):
    f = liger("rms_norm").LigerRMSNormFunction
    shapes = [(2, 3, 64), (5, 97), (3, 7, 300)]
    for (dtype, atol, rtol) in DTYPES:
        for shape in shapes:
            for offset, mode in ((0.0, "llama"), (1.0, "gemma")):
                yield Case(f"{label(shape, dtype)} {mode}",
                           [rnd(*shape, dtype=dtype, device=dev), rnd(shape[-1], dtype=dtype, device=dev)],
                           lambda x, w, o=offset, m=mode: f.apply(x, w, 1e-6, o, m, False),
                           lambda x, w, o=offset: _rms(x, 1e-6) * (o + w),
                           atol * 10, rtol * 10, grad=[0, 1])
    # many short rows: the kernel that normalizes a block of rows per program
    yield Case("32768x48 float32 block", [rnd(32768, 48, device=dev), rnd(48, device=dev)],
               lambda x, w: f.apply(x, w, 1e-6, 0.0, "llama", False),
               lambda x, w: _rms(x, 1e-6) * w, 1e-4, 1e-4, grad=[0, 1], bwd_atol=1e-2)


@op("layer_norm")
def layer_norm(dev):
    f = liger("layer_norm").LigerLayerNormFunction
    for (dtype, atol, rtol) in DTYPES:
        for shape in [(2, 3, 64), (5, 97), (3, 7, 300)]:
            h = shape[-1]
            yield Case(label(shape, dtype),
                       [rnd(*shape, dtype=dtype, device=dev), rnd(h, dtype=dtype, device=dev),
                        rnd(h, dtype=dtype, device=dev)],
                       lambda x, w, b: f.apply(x, w, b, 1e-6),
                       lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-6),
                       atol * 10, rtol * 10, grad=[0, 1, 2])


@op("group_norm")
def group_norm(dev):
    f = liger("group_norm").LigerGroupNormFunction
    for (dtype, atol, rtol) in DTYPES:
        for (b, c, g, h) in [(2, 6, 3, 32), (3, 4, 2, 49), (1, 8, 8, 100)]:
            yield Case(f"{b}x{c}x{h} groups {g} {str(dtype)[6:]}",
                       [rnd(b, c, h, dtype=dtype, device=dev), rnd(c, dtype=dtype, device=dev),
                        rnd(c, dtype=dtype, device=dev)],
                       lambda x, w, bias, c=c, g=g: f.apply(x, w, bias, c, g, 1e-6),
                       lambda x, w, bias, g=g: F.group_norm(x, g, w, bias, 1e-6),
                       atol * 10, rtol * 10, grad=[0, 1, 2])


@op("poly_norm")
def poly_norm(dev):
    f = liger("poly_norm").LigerPolyNormFunction

    def ref(x, w, b):
        return w[0] * _rms(x ** 3, 1e-6) + w[1] * _rms(x ** 2, 1e-6) + w[2] * _rms(x, 1e-6) + b

    for (dtype, atol, rtol) in DTYPES:
        for shape in [(2, 3, 64), (5, 97)]:
            yield Case(label(shape, dtype),
                       [rnd(*shape, dtype=dtype, device=dev), rnd(3, dtype=dtype, device=dev),
                        rnd(dtype=dtype, device=dev)],  # the bias: a 0-d tensor
                       lambda x, w, b: f.apply(x, w, b, 1e-6, False), ref,
                       atol * 20, rtol * 20, grad=[0, 1, 2])


@op("fused_add_rms_norm")
def fused_add_rms_norm(dev):
    f = liger("fused_add_rms_norm").LigerFusedAddRMSNormFunction

    def ref(x, r, w, offset):
        s = x + r
        return _rms(s, 1e-6) * (offset + w), s

    for (dtype, atol, rtol) in DTYPES:
        for shape in [(2, 3, 64), (5, 97)]:
            for offset, mode in ((0.0, "llama"), (1.0, "gemma")):
                yield Case(f"{label(shape, dtype)} {mode}",
                           [rnd(*shape, dtype=dtype, device=dev), rnd(*shape, dtype=dtype, device=dev),
                            rnd(shape[-1], dtype=dtype, device=dev)],
                           lambda x, r, w, o=offset, m=mode: f.apply(x, r, w, 1e-6, o, m, False),
                           lambda x, r, w, o=offset: ref(x, r, w, o),
                           atol * 10, rtol * 10, grad=[0, 1, 2])


@op("modulated_rms_norm")
def modulated_rms_norm(dev):
    f = liger("modulated_rms_norm").LigerModulatedRMSNormFunction

    def ref(x, w, scale, shift):
        y = _rms(x, 1e-6) * w * (1 + scale[:, None, :])
        return y if shift is None else y + shift[:, None, :]

    for (dtype, atol, rtol) in DTYPES:
        for (b, t, h) in [(2, 3, 64), (3, 5, 97)]:
            for has_shift in (True, False):
                shift = rnd(b, h, dtype=dtype, device=dev, scale=0.1) if has_shift else None
                yield Case(f"{b}x{t}x{h} {str(dtype)[6:]}{' shift' if has_shift else ''}",
                           [rnd(b, t, h, dtype=dtype, device=dev), rnd(h, dtype=dtype, device=dev),
                            rnd(b, h, dtype=dtype, device=dev, scale=0.1), shift],
                           lambda x, w, s, sh: f.apply(x, w, s, sh, 1e-6, 0.0, "llama", False),
                           ref, atol * 10, rtol * 10, grad=[0, 1, 2] + ([3] if has_shift else []))


@op("dyt")
def dyt(dev):
    m = liger("dyt")
    f = m.LigerDyTFunction
    if dev == "cpu":  # its backward sizes partial sums by the SM count of cuda/xpu/npu only:
        m.infer_device = lambda: "npu"  # on CPU take the npu path (a fixed count of rows)
    for (dtype, atol, rtol) in DTYPES:
        for shape in [(2, 3, 64), (5, 97), (4, 300)]:
            for beta in (True, False):
                h = shape[-1]
                yield Case(f"{label(shape, dtype)}{' beta' if beta else ''}",
                           [rnd(*shape, dtype=dtype, device=dev), torch.full((1,), 0.5, dtype=dtype, device=dev),
                            rnd(h, dtype=dtype, device=dev),
                            rnd(h, dtype=dtype, device=dev) if beta else None],
                           lambda x, a, g, b: f.apply(x, a, g, b),
                           lambda x, a, g, b: g * torch.tanh(a * x) + (0 if b is None else b),
                           atol * 10, rtol * 10, grad=[0, 1, 2] + ([3] if beta else []),
                           bwd_atol=atol * 100)


# --- activations --------------------------------------------------------------------------


@op("swiglu")
def swiglu(dev):
    m = liger("swiglu")
    for (dtype, atol, rtol) in DTYPES:
        for shape in [(2, 3, 64), (5, 97), (3, 300)]:
            yield Case(label(shape, dtype),
                       [rnd(*shape, dtype=dtype, device=dev), rnd(*shape, dtype=dtype, device=dev)],
                       lambda a, b: m.LigerSiLUMulFunction.apply(a, b),
                       lambda a, b: F.silu(a) * b, atol, rtol, grad=[0, 1])
        for shape in [(3, 2 * 64), (5, 2 * 97)]:
            yield Case(f"fused gate/up {label(shape, dtype)}", [rnd(*shape, dtype=dtype, device=dev)],
                       lambda y: m.LigerFusedGateUpSiLUMulFunction.apply(y, False),
                       lambda y: F.silu(y[..., :y.shape[-1] // 2]) * y[..., y.shape[-1] // 2:],
                       atol, rtol, grad=[0])


@op("geglu")
def geglu(dev):
    f = liger("geglu").LigerGELUMulFunction
    for (dtype, atol, rtol) in DTYPES:
        for shape in [(2, 3, 64), (5, 97), (3, 300)]:
            yield Case(label(shape, dtype),
                       [rnd(*shape, dtype=dtype, device=dev), rnd(*shape, dtype=dtype, device=dev)],
                       lambda a, b: f.apply(a, b),
                       lambda a, b: F.gelu(a, approximate="tanh") * b,
                       atol * 10, rtol * 10, grad=[0, 1])


@op("relu_squared")
def relu_squared(dev):
    f = liger("relu_squared").LigerReLUSquaredFunction
    for (dtype, atol, rtol) in DTYPES:
        for shape in [(2, 3, 64), (5, 97), (1000,)]:
            yield Case(label(shape, dtype), [rnd(*shape, dtype=dtype, device=dev)],
                       lambda x: f.apply(x), lambda x: F.relu(x) ** 2, atol, rtol, grad=[0])


@op("softmax")
def softmax(dev):
    f = liger("softmax").LigerSoftmaxFunction
    for (dtype, atol, rtol) in DTYPES:
        for shape in [(2, 3, 64), (5, 97), (3, 1000)]:
            yield Case(label(shape, dtype), [rnd(*shape, dtype=dtype, device=dev)],
                       lambda x: f.apply(x), lambda x: torch.softmax(x, -1), atol, rtol, grad=[0])


def _sparsemax(x, dim):
    """Martins & Astudillo (2016): the Euclidean projection onto the simplex."""
    x = x.transpose(dim, -1)
    z, _ = torch.sort(x, dim=-1, descending=True)
    k = torch.arange(1, x.shape[-1] + 1, dtype=x.dtype, device=x.device)
    cssv = z.cumsum(-1)
    support = (1 + k * z) > cssv
    k_z = support.sum(-1, keepdim=True)
    tau = (cssv.gather(-1, k_z - 1) - 1) / k_z.to(x.dtype)
    return torch.clamp(x - tau, min=0).transpose(dim, -1)


@op("sparsemax")
def sparsemax(dev):
    f = liger("sparsemax").LigerSparsemaxFunction
    for (dtype, atol, rtol) in [F32]:  # Liger tests sparsemax in float32
        for shape, dim in [((3, 64), -1), ((5, 97), -1), ((4, 6, 33), 1)]:
            yield Case(f"{label(shape, dtype)} dim {dim}", [rnd(*shape, dtype=dtype, device=dev)],
                       lambda x, d=dim: f.apply(x, d), lambda x, d=dim: _sparsemax(x, d),
                       1e-5, 1e-5, grad=[0])


# --- rotary embeddings --------------------------------------------------------------------


def _rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def _cos_sin(positions, hd, dev, dtype):
    inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    freqs = positions.float()[..., None] * inv
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype).to(dev), emb.sin().to(dtype).to(dev)


@op("rope")
def rope(dev):
    f = liger("rope").LigerRopeFunction

    def ref(q, k, cos, sin):
        c, s = cos.unsqueeze(1), sin.unsqueeze(1)
        return q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s

    for (dtype, atol, rtol) in DTYPES:
        for (b, hq, hk, t, hd) in [(1, 4, 2, 7, 64), (2, 3, 3, 5, 32), (2, 6, 2, 9, 128)]:
            cos, sin = _cos_sin(torch.arange(t)[None], hd, dev, dtype)
            yield Case(f"q {b}x{hq}x{t}x{hd} kv {hk} {str(dtype)[6:]}",
                       [rnd(b, hq, t, hd, dtype=dtype, device=dev),
                        rnd(b, hk, t, hd, dtype=dtype, device=dev), cos, sin],
                       lambda q, k, c, s: f.apply(q, k, c, s), ref, atol * 10, rtol * 10, grad=[0, 1])


@op("qwen2vl_mrope")
def qwen2vl_mrope(dev):
    f = liger("qwen2vl_mrope").LigerQwen2VLMRopeFunction

    def ref(q, k, cos, sin, section):
        def pick(x):  # the section of each of the 3 position axes (t, h, w), twice over
            parts = x.split(section * 2, dim=-1)
            return torch.cat([p[i % 3] for i, p in enumerate(parts)], dim=-1).unsqueeze(1)
        c, s = pick(cos), pick(sin)
        return q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s

    for (dtype, atol, rtol) in DTYPES:
        for (b, hq, hk, t, hd, section) in [(1, 4, 2, 7, 32, [4, 6, 6]), (2, 3, 1, 5, 64, [8, 12, 12])]:
            positions = torch.randint(0, 20, (3, b, t))
            cos, sin = _cos_sin(positions, hd, dev, dtype)
            yield Case(f"q {b}x{hq}x{t}x{hd} sections {section} {str(dtype)[6:]}",
                       [rnd(b, hq, t, hd, dtype=dtype, device=dev),
                        rnd(b, hk, t, hd, dtype=dtype, device=dev), cos, sin, section],
                       lambda q, k, c, s, sec: f.apply(q, k, c, s, sec), ref,
                       atol * 10, rtol * 10, grad=[0, 1])


@op("llama4_rope")
def llama4_rope(dev):
    f = liger("llama4_rope").LigerLlama4RopeFunction

    def ref(q, k, freqs):
        def apply(x):  # pairs of (real, imaginary) times the unit complex numbers `freqs`
            xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
            return torch.view_as_real(xc * freqs[None, :, None, :]).flatten(3)
        return apply(q), apply(k)

    for (dtype, atol, rtol) in DTYPES:
        for (b, t, hq, hk, hd) in [(1, 7, 4, 2, 64), (2, 5, 3, 3, 96)]:
            inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
            angles = torch.arange(t, dtype=torch.float32)[:, None] * inv
            freqs = torch.polar(torch.ones_like(angles), angles).to(dev)
            yield Case(f"q {b}x{t}x{hq}x{hd} kv {hk} {str(dtype)[6:]}",
                       [rnd(b, t, hq, hd, dtype=dtype, device=dev),
                        rnd(b, t, hk, hd, dtype=dtype, device=dev), freqs],
                       lambda q, k, fr: f.apply(q, k, fr), ref, atol * 10, rtol * 10, grad=[0, 1])


import liger_cases_losses  # noqa: E402,F401 - registers the losses and the other ops
