"""Forms of `tl.dot` written as 2-D products and element-wise ops, as Triton's compiler
rewrites them: batched (3-D) products, and the split-precision sums of `input_precision`
"tf32x3", "bf16x3" and "bf16x6".  Everything here emits ordinary IR ops, so the
interpreter, CUDA and HIP compute the same thing.
"""

from __future__ import annotations

from typing import Callable

from tilecc.language import dtypes as D
from tilecc.transpiler import semantic as S
from tilecc.transpiler.ir import Op, Type, Value

SPLIT = ("tf32x3", "bf16x3", "bf16x6")


# ---- batched products: one 2-D product per batch ---------------------------------------

def batched(b, a: Value, w: Value, c: Value,
            product: Callable[[Value, Value, Value], Value]) -> Value:
    """`product` of each batch of a (B, M, K) and w (B, K, N) with c (B, M, N), stacked
    back into (B, M, N).  The batches are taken apart by `unstack` and put together by
    `stack`: where the batch axis is held in registers (passes.layouts), both copy
    registers."""
    parts = [product(x, y, z) for x, y, z in zip(_unstack(b, a), _unstack(b, w), _unstack(b, c))]
    return b.emit("stack", parts, Type(parts[0].dtype, (len(parts),) + parts[0].type.shape))


def _unstack(b, x: Value) -> list[Value]:
    """The B blocks (P, Q) of a (B, P, Q) block, in order.  A scalar broadcast (the zeros
    of a product with no accumulator) is broadcast to each block instead, so that it
    takes each product's accumulator layout where it is made."""
    n, shape = x.type.shape[0], x.type.shape[1:]
    if x.owner is not None and x.owner.kind == "splat":
        return [S.splat(b, x.owner.operands[0], shape) for _ in range(n)]
    parts = [Value(Type(x.dtype, shape)) for _ in range(n)]
    b.emit_op(Op("unstack", [x], parts, b.loc))
    return parts


# ---- split precision: fp32 products from several tf32 / bf16 ones ----------------------

def split_precision(b, a: Value, w: Value, c: Value, precision: str,
                    acc_dtype: D.dtype) -> Value:
    """fp32 x fp32 as Triton's F32DotTC pass computes it: each operand split into a sum
    of parts of lower precision (tf32x3: big = tf32 rounding, small = the rest; bf16x3 /
    bf16x6: hi, mid (, lo) in bf16), the cross products of the small parts summed first
    from zero, NaNs in that sum replaced by zeros (1.0 = 1.0 + 0.0 times an infinity would
    give 0 * inf), then the product of the big parts, then `c` added."""
    def dot(x: Value, y: Value, z: Value, p: str) -> Value:
        return b.emit("dot", [x, y, z], z.type, precision=p, acc_dtype=acc_dtype)

    zero = S.splat(b, S.constant(b, 0.0, D.float32), c.type.shape)
    if precision == "tf32x3":
        (a_big, a_small), (w_big, w_small) = _split_tf32(b, a), _split_tf32(b, w)
        small = dot(a_big, w_small, dot(a_small, w_big, zero, "tf32"), "tf32")
        big = (a_big, w_big, "tf32")
    else:
        n = 2 if precision == "bf16x3" else 3
        ap, wp = _split_bf16(b, a, n), _split_bf16(b, w, n)
        hi, mid, lo = 0, 1, 2
        pairs = [(mid, hi), (hi, mid)]
        if n == 3:
            pairs = [(mid, mid), (lo, hi), (hi, lo)] + pairs
        small = zero
        for i, j in pairs:
            small = dot(ap[i], wp[j], small, "ieee")
        big = (ap[hi], wp[hi], "ieee")
    is_nan = S.compare(b, "ne", small, small)
    small = S.where(b, is_nan, zero, small)
    return S.binary(b, "add", dot(big[0], big[1], small, big[2]), c)


def _split_tf32(b, x: Value) -> tuple[Value, Value]:
    """(big, small): x rounded to tf32 (to nearest, ties away from zero, as cvt.rna.tf32:
    add half of the dropped bits' weight, clear them), and x - big."""
    bits = S.cast(b, x, D.uint32, bitcast=True)
    rounded = S.binary(b, "and", S.binary(b, "add", bits, S.Const(0x1000)),
                       S.Const(0xFFFFE000))
    big = S.cast(b, rounded, D.float32, bitcast=True)
    big = S.where(b, S.compare(b, "ne", x, x), x, big)  # NaN stays NaN, whatever its payload
    return big, S.binary(b, "sub", x, big)


def _split_bf16(b, x: Value, n: int) -> list[Value]:
    """n bf16 parts of x: each the bf16 rounding of what the ones before leave."""
    parts = []
    for i in range(n):
        part = S.cast(b, x, D.bfloat16)
        parts.append(part)
        if i != n - 1:
            x = S.binary(b, "sub", x, S.cast(b, part, D.float32))
    return parts
