"""mamba-ssm (github.com/state-spaces/mamba): the Triton half of Mamba-2.  The SSD scan
is five kernels chained through DRAM (chunk cumsum of dt, chunk states, state passing
across chunks, chunk scan, and their backward) with `tl.dot` over chunk-by-state tiles,
`tl.cumsum`, `triton.autotune` with `reset_to_zero`, `tl.atomic_add` for gradients
summed over programs; around it fused norms (residuals, prenorm, dropout masks, grouped
and gated RMSNorm), a SwiGLU, and the one-token state update of decoding.

The sdist also builds CUDA extensions (selective scan, causal conv1d): nothing of them is
needed here, only its Python under mamba_ssm/ops/triton.  References are written here:
the SSM recurrence step by step, the norms and gates from their definitions.
"""

from __future__ import annotations

import os
import sys
import types

import torch
import torch.nn.functional as F

from common import F32, Case, Ops, label, module, rnd

RELEASE = "mamba-ssm==2.3.2.post1"
ARCHIVE = "mamba_ssm-2.3.2.post1.tar.gz"
ROOT = "mamba_ssm-2.3.2.post1"
DEPS = ["einops-0.8.1-py3-none-any.whl", "packaging-25.0-py3-none-any.whl"]
MARKERS = ("mamba_ssm/",)

OPS = Ops()
TRITON = "mamba_ssm.ops.triton"


def load(src: str, device: str) -> None:
    """mamba_ssm hollowed: its __init__ imports the modules built on its CUDA extensions."""
    sys.path.insert(0, src)
    pkg = types.ModuleType("mamba_ssm")
    pkg.__path__ = [os.path.join(src, "mamba_ssm")]
    pkg.__file__ = os.path.join(pkg.__path__[0], "__init__.py")
    sys.modules["mamba_ssm"] = pkg


def _rms(x, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


# --- norms and activations -----------------------------------------------------------------


@OPS.op("layer_norm", f"{TRITON}.layer_norm")
def layer_norm(dev):
    m = module(f"{TRITON}.layer_norm")
    for dtype, atol, rtol in (F32, (torch.bfloat16, 5e-2, 2e-2)):
        for shape in ((2, 3, 64), (5, 97), (3, 300)):
            h = shape[-1]
            args = [rnd(*shape, dtype=dtype, device=dev), rnd(h, device=dev), rnd(h, device=dev),
                    rnd(*shape, dtype=dtype, device=dev)]
            yield Case(f"layer + residual, prenorm {label(shape, dtype)}", args,
                       lambda x, w, b, r: m.layer_norm_fn(x, w, b, residual=r, prenorm=True,
                                                          residual_in_fp32=True),
                       lambda x, w, b, r: (F.layer_norm(x + r, (x.shape[-1],), w, b, 1e-6), x + r),
                       max(atol, 1e-4), max(rtol, 1e-4), grad=[0, 1, 2, 3], bwd_atol=max(atol, 1e-3))
            yield Case(f"rms {label(shape, dtype)}", args[:3],
                       lambda x, w, b: m.rms_norm_fn(x, w, b),
                       lambda x, w, b: _rms(x, 1e-6) * w + b,
                       max(atol, 1e-4), max(rtol, 1e-4), grad=[0, 1, 2], bwd_atol=max(atol, 1e-3))


@OPS.op("rmsnorm_gated", f"{TRITON}.layernorm_gated")
def rmsnorm_gated(dev):
    m = module(f"{TRITON}.layernorm_gated")

    def ref(x, w, b, z, group, before):
        if not before:
            x = x * F.silu(z)
        xs = x.unflatten(-1, (-1, group)) if group else x
        y = _rms(xs, 1e-6).flatten(-2) if group else _rms(xs, 1e-6)
        y = y * w + b
        return y * F.silu(z) if before else y

    for (rows, h, group) in ((6, 64, None), (5, 96, 32)):
        for before in (True, False):
            yield Case(f"{rows}x{h} group {group} {'norm, gate' if before else 'gate, norm'}",
                       [rnd(rows, h, device=dev), rnd(h, device=dev), rnd(h, device=dev),
                        rnd(rows, h, device=dev)],
                       lambda x, w, b, z, g=group, n=before: m.rmsnorm_fn(x, w, b, z, 1e-6, g, n),
                       lambda x, w, b, z, g=group, n=before: ref(x, w, b, z, g, n),
                       1e-4, 1e-4, grad=[0, 1, 2, 3], bwd_atol=1e-3)


@OPS.op("swiglu", f"{TRITON}.k_activations")
def swiglu(dev):
    m = module(f"{TRITON}.k_activations")
    for shape in ((4, 128), (3, 5, 194)):
        yield Case(label(shape, torch.float32), [rnd(*shape, device=dev)], lambda xy: m.swiglu(xy),
                   lambda xy: F.silu(xy.chunk(2, -1)[0]) * xy.chunk(2, -1)[1], 1e-5, 1e-5, grad=[0],
                   bwd_atol=1e-4)


# --- the state space model ------------------------------------------------------------------


def ref_ssm(x, dt, A, B, C, D, z, dt_bias, h0=None):
    """h_t = exp(Δ_t A) h_{t-1} + Δ_t x_t B_tᵀ, y_t = h_t C_t + D x_t (· silu(z_t)), with
    Δ = softplus(dt + dt_bias); heads share B and C by groups."""
    b, t, nh, p = x.shape
    per_group = nh // B.shape[2]
    Bh, Ch = B.repeat_interleave(per_group, 2), C.repeat_interleave(per_group, 2)
    delta = F.softplus(dt + dt_bias)
    h = torch.zeros(b, nh, p, B.shape[-1], device=x.device) if h0 is None else h0.clone()
    ys = []
    for i in range(t):
        h = h * torch.exp(delta[:, i] * A)[..., None, None] \
            + (delta[:, i, :, None] * x[:, i])[..., None] * Bh[:, i, :, None, :]
        ys.append((h * Ch[:, i, :, None, :]).sum(-1) + D[:, None] * x[:, i])
    y = torch.stack(ys, 1)
    return (y * F.silu(z) if z is not None else y), h


@OPS.op("mamba_chunk_scan_combined", f"{TRITON}.ssd_combined")
def mamba_chunk_scan_combined(dev):
    m = module(f"{TRITON}.ssd_combined")
    b, t, nh, p, g, n = 2, 100, 4, 16, 2, 16
    for chunk, gated in ((32, False), (64, True)):
        inputs = [rnd(b, t, nh, p, device=dev), rnd(b, t, nh, device=dev, scale=0.5),
                  (-torch.rand(nh) - 0.5).to(dev), rnd(b, t, g, n, device=dev, scale=0.5),
                  rnd(b, t, g, n, device=dev, scale=0.5), rnd(nh, device=dev),
                  rnd(b, t, nh, p, device=dev) if gated else None, rnd(nh, device=dev, scale=0.5)]
        yield Case(f"B{b} T{t} H{nh} P{p} G{g} N{n} chunk {chunk}{' z' if gated else ''}", inputs,
                   lambda x, dt, A, B, C, D, z, bias, c=chunk: m.mamba_chunk_scan_combined(
                       x, dt, A, B, C, c, D=D, z=z, dt_bias=bias, dt_softplus=True,
                       return_final_states=True),
                   ref_ssm, 2e-2, 2e-2, grad=[0, 1, 2, 3, 4, 5] + ([6] if gated else []) + [7],
                   bwd_atol=5e-2, bwd_rtol=5e-2)


@OPS.op("selective_state_update", f"{TRITON}.selective_state_update")
def selective_state_update(dev):
    m = module(f"{TRITON}.selective_state_update")

    def ref(state, x, dt, A, B, C, D, z, dt_bias):
        per_group = x.shape[1] // B.shape[1]
        Bh, Ch = B.repeat_interleave(per_group, 1), C.repeat_interleave(per_group, 1)
        delta = F.softplus(dt + dt_bias)
        state = state * torch.exp(delta[..., None] * A) + (delta * x)[..., None] * Bh[:, :, None, :]
        y = (state * Ch[:, :, None, :]).sum(-1) + D * x
        return y * F.silu(z), state

    def call(state, *args):
        return m.selective_state_update(state, *args, dt_softplus=True), state  # in place

    for (b, nh, p, g, n) in ((2, 4, 16, 2, 16), (3, 2, 24, 1, 32)):
        yield Case(f"B{b} H{nh} P{p} G{g} N{n}",
                   [rnd(b, nh, p, n, device=dev), rnd(b, nh, p, device=dev), rnd(b, nh, p, device=dev),
                    (-torch.rand(nh, p, n)).to(dev), rnd(b, g, n, device=dev), rnd(b, g, n, device=dev),
                    rnd(nh, p, device=dev), rnd(b, nh, p, device=dev), rnd(nh, p, device=dev)],
                   call, ref, 1e-4, 1e-4, backward=False)
