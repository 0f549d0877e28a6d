"""`tl.dot_scaled`: the product of two blocks in microscaling formats (OCP MX: fp4 e2m1,
fp8 e4m3 / e5m2 with an e8m0 scale per 32 elements along K, or an fp8 e4m3 scale per 16),
written in the kernel language and traced like any helper, so the interpreter, CUDA and
HIP share one definition.

It computes what Triton 3.6 computes on GPUs without block-scaled tensor-core instructions
(Hopper, Ampere, AMD): each operand is up-cast to bf16 (fp16 where either operand is
fp16), multiplied by its scale (2**(s - 127) for an e8m0 byte s, made in that type: s = 0
gives 0, as Triton's bit-for-bit construction does), NaN where the scale is the NaN
encoding (0xFF; unless `fast_math`), and the two products meet in an ordinary `tl.dot`
with an fp32 accumulator.  Up-casting fp4 / fp8 to bf16 is exact, and so is the scaling
away from bf16's overflow, so the result is the fp32-accumulated product of the exact
values.
"""

from __future__ import annotations

# `tl` is the language's core module (the package imports this one), as in random.py
from tilecc.language import core as tl
from tilecc.language.core import kernel_function

FORMATS = tl.constexpr(("e2m1", "e4m3", "e5m2", "bf16", "fp16"))


@kernel_function
def _e2m1_to_fp16(nibbles):
    """fp4 e2m1 codes (the low 4 bits of a uint32 block) as fp16 values, built as their 16
    bits: sign, 2 exponent bits (bias 1), 1 mantissa bit; exponent 0 is the subnormal 0 /
    0.5.  The exponent and mantissa bits shifted into place plus the bias (the code's 3
    low bits are both) give the normal values; the subnormal 0.5 is that bias alone.  (The
    trick of `_e2m1_pairs_to_bf16` would leave fp16 subnormals to a 16-bit product.)"""
    mag = nibbles & 7
    bits = tl.where(mag < 2, mag * 0x3800, (mag << 9) + 0x3800)  # 5 exponent bits, bias 15
    bits = bits | ((nibbles & 8) << 12)
    return bits.to(tl.uint16).to(tl.float16, bitcast=True)


@kernel_function
def _e2m1_pairs_to_bf16(wide):
    """The two e2m1 codes of each byte (the low bits of a uint32 block) as bf16 values,
    joined along a new last axis.  Each code's 3 low bits go under fp16's exponent and
    mantissa and its sign onto fp16's: the fp16 is the value times 2**-14 (the subnormal
    0.5 an fp16 subnormal), which widens to bf16 exactly and is scaled back exactly (all
    normal numbers).  Built so, a code costs a few bit operations and each pair one
    conversion and one bf16x2 product, where a compare and a select per code as in
    `_e2m1_to_fp16` made mxfp4 products run at 0.89x Triton's speed (1.18x so)."""
    low = ((wide & 8) << 12) | ((wide & 7) << 9)
    high = ((wide & 0x80) << 8) | ((wide & 0x70) << 5)
    tiny = tl.join(low, high).to(tl.uint16).to(tl.float16, bitcast=True)
    return tiny.to(tl.bfloat16) * 16384.0


@kernel_function
def _unpack_e2m1(packed, along_last: tl.constexpr, compute: tl.constexpr):
    """uint8 bytes holding two e2m1 values each (the first in the low bits), packed along
    the last dim or the one before it: the values, that dim twice as long."""
    tl.static_assert(packed.dtype == tl.uint8, "e2m1 format must be packed as uint8")
    wide = packed.to(tl.uint32)
    if compute == tl.bfloat16:
        pairs = _e2m1_pairs_to_bf16(wide)
    else:
        pairs = tl.join(_e2m1_to_fp16(wide & 15), _e2m1_to_fp16(wide >> 4))
    shape = packed.shape
    if along_last:
        if len(shape) == 2:
            return tl.reshape(pairs, (shape[0], shape[1] * 2))
        return tl.reshape(pairs, (shape[0], shape[1], shape[2] * 2))
    if len(shape) == 2:
        return tl.reshape(tl.permute(pairs, (0, 2, 1)), (shape[0] * 2, shape[1]))
    return tl.reshape(tl.permute(pairs, (0, 1, 3, 2)), (shape[0], shape[1] * 2, shape[2]))


@kernel_function
def _upcast(x, fmt: tl.constexpr, k_pack: tl.constexpr, is_rhs: tl.constexpr,
            compute: tl.constexpr):
    """An operand in `fmt` (fp8 / 16-bit floats as themselves or as their unsigned bits,
    e2m1 packed in uint8) as `compute` values."""
    if fmt == "e2m1":
        # K is the last dim of lhs, the one before of rhs; unpacked along M or N otherwise
        return _unpack_e2m1(x, k_pack != is_rhs, compute)
    tl.static_assert(k_pack, "only mxfp4 inputs can be packed along a dimension different "
                             "than K")
    if fmt == "e4m3":
        if x.dtype == tl.uint8:
            x = x.to(tl.float8e4nv, bitcast=True)
        tl.static_assert(x.dtype == tl.float8e4nv, "Unexpected dtype for e4m3")
    elif fmt == "e5m2":
        if x.dtype == tl.uint8:
            x = x.to(tl.float8e5, bitcast=True)
        tl.static_assert(x.dtype == tl.float8e5, "Unexpected dtype for e5m2")
    elif fmt == "bf16":
        if x.dtype == tl.uint16:
            x = x.to(tl.bfloat16, bitcast=True)
        tl.static_assert(x.dtype == tl.bfloat16, "Unexpected dtype for bf16")
    else:
        if x.dtype == tl.uint16:
            x = x.to(tl.float16, bitcast=True)
        tl.static_assert(x.dtype == tl.float16, "Unexpected dtype for fp16")
    return x.to(compute)


@kernel_function
def _along_k(s, x, group: tl.constexpr, is_rhs: tl.constexpr):
    """Scales [.., rows, K // group] spread over x's shape, each repeated `group` times
    along K: [.., rows, K] for lhs, [.., K, N] for rhs (whose scales come N-major).  One
    gather (a trip through shared memory) puts each where x's element is."""
    rank: tl.constexpr = len(x.shape)
    if is_rhs:
        if rank == 2:
            s = tl.trans(s)
        else:
            s = tl.permute(s, (0, 2, 1))
        k = tl.arange(0, x.shape[rank - 2]) // group
        if rank == 2:
            return tl.gather(s, tl.broadcast_to(k[:, None], x.shape), 0)
        return tl.gather(s, tl.broadcast_to(k[None, :, None], x.shape), 1)
    k = tl.arange(0, x.shape[rank - 1]) // group
    if rank == 2:
        return tl.gather(s, tl.broadcast_to(k[None, :], x.shape), 1)
    return tl.gather(s, tl.broadcast_to(k[None, None, :], x.shape), 2)


@kernel_function
def _scaled(x, scale, fast_math: tl.constexpr, is_rhs: tl.constexpr, compute: tl.constexpr):
    """x times its scales (e8m0 bytes: 2**(s - 127); fp8 e4m3 scales: their values), NaN
    where a scale is NaN unless `fast_math`."""
    rows = x.shape[len(x.shape) - 1] if is_rhs else x.shape[len(x.shape) - 2]
    k = x.shape[len(x.shape) - 2] if is_rhs else x.shape[len(x.shape) - 1]
    if scale.dtype == tl.float8e4nv:
        group: tl.constexpr = 16
    else:
        tl.static_assert(scale.dtype == tl.uint8, "scales are e8m0 bytes (uint8) or fp8 e4m3")
        group: tl.constexpr = 32
    tl.static_assert(scale.shape[len(scale.shape) - 2] == rows and
                     scale.shape[len(scale.shape) - 1] * group == k,
                     "a scale tensor must be [M, K // group] for lhs and [N, K // group] for "
                     "rhs (group 32 for e8m0 scales, 16 for e4m3 ones)")
    if len(scale.shape) < len(x.shape):  # one scale matrix for every batch
        scale = tl.broadcast_to(tl.expand_dims(scale, 0), (x.shape[0], *scale.shape))
    if scale.dtype == tl.float8e4nv:  # spread as bytes, then read as e4m3 values
        s = _along_k(scale.to(tl.uint8, bitcast=True), x, group, is_rhs)
        s = s.to(tl.float8e4nv, bitcast=True)
        factor = s.to(compute)
        nan = s != s
    else:
        s = _along_k(scale, x, group, is_rhs)
        factor = (s.to(tl.uint32) << 23).to(tl.float32, bitcast=True).to(compute)
        nan = s == 255
    out = x * factor
    if not fast_math:
        out = tl.where(nan, float("nan"), out)
    return out


@kernel_function
def dot_scaled(lhs, lhs_scale, lhs_format: tl.constexpr, rhs, rhs_scale,
               rhs_format: tl.constexpr, acc=None, fast_math: tl.constexpr = False,
               lhs_k_pack: tl.constexpr = True, rhs_k_pack: tl.constexpr = True,
               out_dtype: tl.constexpr = tl.float32):
    """lhs [M, K] times rhs [K, N] (or batches of them, 3-D), each in a microscaling format
    with optional scales (lhs_scale [M, K // 32], rhs_scale [N, K // 32]), plus `acc`;
    fp32.  e2m1 operands come packed two per uint8 along K (or along M / N where
    `*_k_pack` is False)."""
    tl.static_assert(out_dtype == tl.float32,
                     "Only float32 is supported for out_dtype at the moment")
    tl.static_assert(lhs_format in FORMATS, "lhs_format must be one of e2m1, e4m3, e5m2, "
                                            "bf16, fp16")
    tl.static_assert(rhs_format in FORMATS, "rhs_format must be one of e2m1, e4m3, e5m2, "
                                            "bf16, fp16")
    tl.static_assert(len(lhs.shape) == len(rhs.shape) and 2 <= len(lhs.shape) <= 3,
                     "Both inputs must be either 2D or 3D")
    if lhs_format == "fp16" or rhs_format == "fp16":
        compute: tl.constexpr = tl.float16
    else:
        compute: tl.constexpr = tl.bfloat16
    a = _upcast(lhs, lhs_format, lhs_k_pack, False, compute)
    b = _upcast(rhs, rhs_format, rhs_k_pack, True, compute)
    tl.static_assert(a.shape[len(a.shape) - 1] == b.shape[len(b.shape) - 2],
                     "Reduction dimension should pack the same number of elements")
    if lhs_scale is not None:
        a = _scaled(a, lhs_scale, fast_math, False, compute)
    if rhs_scale is not None:
        b = _scaled(b, rhs_scale, fast_math, True, compute)
    return tl.dot(a, b, acc, out_dtype=tl.float32)


# the functions `tl.<name>` names
FUNCTIONS = ("dot_scaled",)
