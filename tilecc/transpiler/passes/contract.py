"""Additions contracted into the products they add, as Triton does: a sum into a `tl.dot`
that starts from zero, and 16-bit products into fused multiply-adds.

`acc += tl.dot(a, b)` (`acc + dot(a, b, 0)`, either side) is `tl.dot(a, b, acc)` where the
product is read nowhere else and its type is the sum's, as Triton's combine pass rewrites
it (not for fp8 products that accumulate imprecisely, nor for a subtraction).  The
product then accumulates into `acc` on the tensor cores, one accumulator carried by a K
loop, instead of a second accumulator added after each product retired (a product of
4-bit weights, `acc += tl.dot(a, b)` in its K loop: 941 instructions an iteration
against Triton's 546); its rounding is Triton's.

With `enable_fp_fusion` (the default), Triton lets its compiler contract `a * b + c` into
one fused multiply-add rounded once.  For 32- and 64-bit floats tilecc leaves that to the
native compiler (NVRTC and hiprtc contract `a * b + c` themselves).  In fp16 and bf16 the
generated C cannot leave it to them: a 16-bit product is computed in float and rounded to
16 bits before the sum reads it, and no compiler may drop a rounding written in the
source.  So `x1 * cos - x2 * sin` in bf16 rounded three times under tilecc and twice under
Triton; where the two products nearly cancel, the extra rounding's error (up to half a
bf16 ulp of a product) is most of the result, and rotary embeddings over bf16 activations
missed a tolerance Triton's results meet.

Here, before the layouts, an fp16 / bf16 `add` or `sub` one of whose operands is a
product of the same type read nowhere else becomes an `fma` (computed in float, rounded
once).  The choice follows the native compilers' contraction: the left product where both
operands are products; `c - a * b` as `fma(-a, b, c)` and `a * b - c` as
`fma(a, b, -c)` (negation is exact).  With fusion off, nothing changes.
"""

from __future__ import annotations

from tilecc.transpiler import ir
from tilecc.transpiler.ir import Kernel, Op, Region, Value

_SIXTEEN_BIT = {"fp16", "bf16"}


def fold_dot_adds(kernel: Kernel) -> None:
    """`x + dot(a, b, 0)` and `dot(a, b, 0) + x` as `dot(a, b, x)` (the module's
    docstring), in every region; the add becomes the product, at the add's place."""
    _fold_dot_adds(kernel.body, ir.uses(kernel))


def _fold_dot_adds(region: Region, uses: dict[int, int]) -> None:
    local: dict[int, Op] = {}  # result id -> this region's dots so far
    folded: set[int] = set()  # id(op) of dots now made by a later add
    for op in region.ops:
        for r in op.regions:
            _fold_dot_adds(r, uses)
        if op.kind == "dot":
            local[op.results[0].id] = op
        if op.kind != "binary" or op.attrs.get("fn") != "add":
            continue
        for side in (0, 1):
            dot = local.get(op.operands[side].id)
            other = op.operands[1 - side]
            if dot is None or id(dot) in folded or uses.get(dot.results[0].id, 0) != 1 or \
                    dot.attrs.get("imprecise_acc") or other.type != op.results[0].type or \
                    dot.results[0].type != op.results[0].type or not _zero(dot.operands[2]):
                continue
            folded.add(id(dot))
            op.kind, op.operands, op.attrs = "dot", [*dot.operands[:2], other], dict(dot.attrs)
            op.loc = dot.loc
            break
    region.ops = [o for o in region.ops if id(o) not in folded]


def _zero(v: Value) -> bool:
    """`v` is a block of zeros (a splat of the constant 0)."""
    splat = v.owner
    if splat is None or splat.kind != "splat":
        return False
    c = splat.operands[0].owner
    return c is not None and c.kind == "const" and c.attrs.get("value") == 0


def contract_products(kernel: Kernel) -> None:
    if kernel.fp_fusion:
        _contract(kernel.body, ir.uses(kernel))


def _contract(region: Region, uses: dict[int, int]) -> None:
    ops: list[Op] = []
    local: set[int] = set()  # id(op) of the region's ops so far
    fused: set[int] = set()  # id(op) of products folded into a later fma
    for op in region.ops:
        for r in op.regions:
            _contract(r, uses)
        ops.append(op)
        local.add(id(op))
        if not _is_binary(op, ("add", "sub")):
            continue
        side = next((i for i in (0, 1) if _fusable(op.operands[i], op, uses, local, fused)),
                    None)
        if side is None:
            continue
        product = op.operands[side].owner
        a, b = product.operands
        other = op.operands[1 - side]
        if op.attrs["fn"] == "sub":  # a*b - c = fma(a, b, -c); c - a*b = fma(-a, b, c)
            if side == 0:
                other = _negate(other, op, ops)
            else:
                a = _negate(a, op, ops)
        fused.add(id(product))
        op.kind, op.operands, op.attrs = "fma", [a, b, other], {}
    region.ops = [o for o in ops if id(o) not in fused]


def _is_binary(op: Op | None, fns: tuple[str, ...]) -> bool:
    return (op is not None and op.kind == "binary" and op.attrs.get("fn") in fns
            and op.results[0].dtype.short in _SIXTEEN_BIT)


def _fusable(v: Value, user: Op, uses: dict[int, int], local: set[int],
             fused: set[int]) -> bool:
    """`v` is a product of `user`'s type, made earlier in the same region, read once."""
    p = v.owner
    return (_is_binary(p, ("mul",)) and id(p) in local and id(p) not in fused
            and uses.get(v.id, 0) == 1 and v.type == user.results[0].type)


def _negate(v: Value, before: Op, ops: list[Op]) -> Value:
    """`-v`, made just before `before` (the last op of `ops`)."""
    neg = Op("unary", [v], [Value(v.type)], before.loc, {"fn": "neg"})
    ops.insert(len(ops) - 1, neg)
    return neg.results[0]
