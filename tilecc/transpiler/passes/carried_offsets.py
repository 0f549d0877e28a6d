"""Blocks of pointers a K loop advances by one step, or computes again from its index at
each step: the block before the loop, plus one scalar offset.

    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, ...)
        ...
        a_ptrs += BLOCK_K * stride_ak

carries one pointer per element (per register of the threads' layout) from iteration to
iteration, each advanced by the same step.  Where the step is one scalar, the block is its
value before the loop plus that scalar's running sum: the loop carries the sum (an int64,
as the pointers' own arithmetic is 64-bit) and each iteration adds it to the block from
before the loop where the block is read.  The threads then add one 64-bit offset to an
address they hold anyway instead of carrying every address through the loop, which NVCC
compiled into a copy of each advanced address at the end of every iteration (16 register
moves a K step in Triton's matmul tutorial at 128 x 128 x 64 on sm_90, of the loop's 172
instructions; 161 after, Triton's 131).  The loaded values are the same: the rewrite is
exact.

Only loops with a `tl.dot` are rewritten (the K loops the pipeline copies ahead of the
products), and only values the loop's result is not read of: after the loop the block
would have to be rebuilt.

A block a K loop computes from its index instead (Triton's persistent matmul tutorial):

    for ki in range(k_tiles):
        offs_k = ki * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak))

is, by distributing the products over the sums, a block that does not change in the loop
(`a_ptr + offs_am[:, None] * stride_am + tl.arange(0, BLOCK_K)[None, :] * stride_ak`,
computed before it) plus one scalar the loop computes (`ki * BLOCK_K * stride_ak`); where
that scalar is `a * index + b` (a, b unchanging) the loop carries it as the offset above,
else it is computed at each step (`hoist_offsets`).  Written as it stood, every copy
recomputed its address from the row offsets at each step, a remainder by M included where
the rows wrap (`% M`): on an H200 such a persistent matmul ran at 0.66x Triton's speed at
4096³, 0.99x after.  The K bounds of those loads' masks (`offs_k < K`) are split the same
way, into the block from before the loop against `K - ki * BLOCK_K`.  The split is exact
wherever the 32-bit offsets of the source do not overflow (a program whose offsets
overflow reads outside its tensors either way).  Only the loads of products' operands
that read vectors of 4 bytes or more are split: read element by element, the block's
pointers would outgrow the registers.
"""

from __future__ import annotations

from tilecc.language import dtypes as D
from tilecc.transpiler import ir
from tilecc.transpiler.ir import Kernel, Op, Region, Type, Value
from tilecc.transpiler.passes.axis_info import const_int, info


def carry_offsets(kernel: Kernel) -> bool:
    """Rewrite the blocks of pointers K loops advance by a scalar step (see above), except
    those that loads the copy engine may copy read (passes.pointer_tiles: the copies
    compute their coordinates from the loop index and read no pointer, which would leave
    the offset unread); whether any was rewritten (the blocks it replaced are left for
    passes.dce to drop)."""
    return _region(kernel.body, ir.uses(kernel))


def _region(region: Region, reads: dict[int, int]) -> bool:
    ops: list[Op] = []
    changed = False
    for op in region.ops:
        for r in op.regions:
            changed |= _region(r, reads)
        if op.kind == "for" and any(o.kind == "dot" for o in op.regions[0].ops):
            before = _rewrite(op, reads)
            ops += before
            changed |= bool(before)
        ops.append(op)
    region.ops = ops
    return changed


def _rewrite(loop: Op, reads: dict[int, int]) -> list[Op]:
    """Rewrite `loop`'s advanced pointer blocks; returns the ops to put before it (each
    offset's start, 0)."""
    body = loop.regions[0]
    before: list[Op] = []
    for j in range(len(body.yields)):
        arg, y, result = body.args[1 + j], body.yields[j], loop.results[j]
        step = _scalar_step(arg, y, body)
        if step is None or reads.get(result.id, 0) or any(
                o.kind == "load" and "descriptor" in o.attrs and _from(o.operands[0], arg)
                for o in ir.walk(body)):
            continue
        start = loop.operands[3 + j]
        if start.name is None:  # (held in registers now: named as the loop named it)
            start.name = arg.name
        loc = y.owner.loc
        zero = Op("const", [], [Value(Type(D.int64))], loc, {"value": 0})
        before.append(zero)
        name = f"{arg.name}_offset" if arg.name else None
        offset = Value(Type(D.int64), name)
        # where the block is read: the block from before the loop plus the offset
        spread = Op("splat", [offset], [Value(Type(D.int64, arg.type.shape))], loc)
        # (unnamed: written where it is read, `start[r] + offset`; `start` is held in
        # registers from before the loop, passes.emission)
        block = Op("addptr", [start, spread.result], [Value(arg.type)], loc,
                   {"carried_offset": True})
        for o in body.ops:
            if o is not y.owner:
                o.operands = [block.result if v is arg else v for v in o.operands]
        # (any region's ops reading the block: loads under a branch)
        for o in body.ops:
            for r in o.regions:
                _replace(r, arg, block.result)
        body.yields = [block.result if v is arg else v for v in body.yields]
        body.ops[:0] = [spread, block]
        # the offset's update, where the block's was
        wide = step
        update: list[Op] = []
        if step.owner is not None and step.owner.kind == "const":  # (an int64 constant)
            update.append(Op("const", [], [Value(Type(D.int64))], loc,
                             {"value": step.owner.attrs["value"]}))
            wide = update[-1].result
        elif step.dtype != D.int64:
            update.append(Op("cast", [step], [Value(Type(D.int64))], loc, {"bitcast": False}))
            wide = update[-1].result
        add = Op("binary", [offset, wide], [Value(Type(D.int64))], loc, {"fn": "add"})
        update.append(add)
        at = body.ops.index(y.owner)
        body.ops[at + 1:at + 1] = update
        # the loop carries the offset too; the block itself is read by its own update only
        # now, which passes.dce drops
        loop.operands.append(zero.result)
        body.args.append(offset)
        body.yields.append(add.result)
        loop.results.append(Value(Type(D.int64), name))
        loop.results[-1].owner = loop
    return before


def _scalar_step(arg: Value, y: Value, body: Region) -> Value | None:
    """The int scalar `y` advances the pointer block `arg` by (`y = arg + splat(s)`), or
    None."""
    if not (arg.type.is_block and arg.dtype.is_ptr()):
        return None
    op = y.owner
    if op is None or op not in body.ops or op.kind != "addptr" or op.operands[0] is not arg:
        return None
    spread = op.operands[1].owner
    if spread is None or spread.kind != "splat":
        return None
    s = spread.operands[0]
    if s.type.is_block or not s.dtype.is_int() or s.dtype == D.int1 or \
            s.dtype.is_int_unsigned() or s.dtype.bits > 64:
        return None  # (unsigned steps: rare, and widened otherwise than signed ones)
    return s


def _from(v: Value, arg: Value) -> bool:
    """Whether `v` is computed from `arg` (through ops of the loop's body)."""
    seen: set[int] = set()
    todo = [v]
    while todo:
        x = todo.pop()
        if x is arg:
            return True
        if x.id in seen or x.owner is None:
            continue
        seen.add(x.id)
        todo += x.owner.operands
    return False


def _replace(region: Region, old: Value, new: Value) -> None:
    for o in region.ops:
        o.operands = [new if v is old else v for v in o.operands]
        for r in o.regions:
            _replace(r, old, new)
    region.yields = [new if v is old else v for v in region.yields]


# --- blocks computed from the loop index --------------------------------------------------------

# the ops an unchanging value may be computed by before the loop: those that cannot fail
# where the loop would not have run (no division)
_HOISTABLE = {"const", "splat", "arange", "program_id", "num_programs", "cast", "cmp",
              "where", "addptr", "broadcast", "expand_dims", "binary"}
_NO_HOIST_FNS = {"div", "floordiv", "rem", "fdiv", "umulhi"}
# the ops a product's operand may be computed with from a load, element by element
_ELEMENTWISE = {"cast", "unary", "binary", "fma", "where", "extern", "permute", "reshape",
                "convert", "expand_dims"}


def hoist_offsets(kernel: Kernel) -> bool:
    """Split the blocks of pointers K loops compute from their index into a block computed
    before the loop plus a scalar offset (see above), where a load reads them in vectors of
    4 bytes or more (`axis_info` analyzed); whether any was split (the blocks they replace
    are left for passes.dce, and the new values for axis_info to analyze again)."""
    return _hoist_region(kernel.body)


def _hoist_region(region: Region) -> bool:
    ops: list[Op] = []
    changed = False
    for op in region.ops:
        for r in op.regions:
            changed |= _hoist_region(r)
        if op.kind == "for" and any(o.kind == "dot" for o in op.regions[0].ops):
            splitter = _Splitter(op)
            if splitter.run():
                ops += splitter.before
                changed = True
        ops.append(op)
    region.ops = ops
    return changed


class _Splitter:
    """One loop's split: `run` rewrites the loads of its body, `before` the ops to put
    before the loop."""

    def __init__(self, loop: Op):
        self.loop, self.body = loop, loop.regions[0]
        self.before: list[Op] = []
        self.updates: list[Op] = []  # the carried offsets' updates, at the body's end
        self.inside: list[Op] = []  # the offsets' ops, put before the load that reads them
        self.hoisted: dict[int, Value] = {}
        defined = {v.id for o in self.body.ops for v in o.results} | \
            {a.id for a in self.body.args}
        self.invariant: set[int] = set()  # values of the body that do not change in it
        for o in self.body.ops:
            if o.kind in _HOISTABLE and not o.regions and len(o.results) == 1 and \
                    o.attrs.get("fn") not in _NO_HOIST_FNS and \
                    all(v.id not in defined or v.id in self.invariant for v in o.operands):
                self.invariant.add(o.result.id)
        self.defined = defined
        self.readers: dict[int, list[Op]] = {}
        for o in self.body.ops:
            for v in o.operands:
                self.readers.setdefault(v.id, []).append(o)

    def run(self) -> bool:
        """Whether a load was rewritten."""
        loads = [o for o in self.body.ops if o.kind == "load" and "descriptor" not in o.attrs
                 and _vectors(o) and self._feeds_product(o.result, set())]
        bounds = {id(c) for o in loads if len(o.operands) > 1
                  for c in _comparisons(o.operands[1])}
        ops: list[Op] = []
        split = False
        for o in self.body.ops:
            self.inside = []  # (what a rewrite that failed put there is dropped)
            done = False
            if o in loads:
                got = self._split_pointers(o)
                if got is not None:
                    o.operands = [got, *o.operands[1:]]
                    done = True
            elif id(o) in bounds:
                done = self._split_bound(o)
            if done:
                ops += self.inside
                split = True
            ops.append(o)
        self.body.ops = ops + self.updates
        # (what a split that failed copied before the loop is left unread: passes.dce)
        return split

    def _split_bound(self, cmp: Op) -> bool:
        """A bound of those loads' masks, `offs + s < n` (`offs` a block that does not change,
        `s` the step's scalar, `n` one value for the whole block), compared as
        `offs < n - s`: the block from before the loop against one scalar of the step, as
        Triton's tutorials write their K masks (`offs_k < K - k * BLOCK_K`).  Written as
        it stood, ptxas rebuilt each vector's coordinate at every step, a chain in front of
        every copy.  Exact where `n - s` does not overflow (nor `offs + s`, which the
        addresses computed as well)."""
        x, y = cmp.operands
        if not x.dtype.is_int() or x.dtype.is_int_unsigned() or x.dtype == D.int1:
            return False
        for side, other in ((0, y), (1, x)):
            got = self._split(cmp.operands[side])
            bound = _uniform(other)
            if got is None or got[0] is None or got[1] is None or bound is None or \
                    bound.dtype != got[1].dtype:
                continue
            moved = self._emit(self.inside, "binary", [bound, got[1]], Type(bound.dtype),
                               cmp.loc, fn="sub")
            spread = self._emit(self.inside, "splat", [moved], other.type, cmp.loc)
            cmp.operands = [got[0], spread] if side == 0 else [spread, got[0]]
            return True
        return False

    def _feeds_product(self, v: Value, seen: set[int]) -> bool:
        """Whether `v` is a product's A or B, or one is computed from it element by element
        (a cast, a transpose, a scale): the tiles the pipeline copies.  Not a row's values
        spread over a tile (attention's log-sum-exp), cheaper to address again than to
        hold."""
        if v.id in seen:
            return False
        seen.add(v.id)
        return any((r.kind == "dot" and any(x is v for x in r.operands[:2])) or
                   (r.kind in _ELEMENTWISE and len(r.results) == 1 and
                    r.result.type.numel == v.type.numel and self._feeds_product(r.result, seen))
                   for r in self.readers.get(v.id, ()))

    def _split_pointers(self, load: Op) -> Value | None:
        """The load's pointers as an unchanging block plus the body's offset, or None."""
        ptr = load.operands[0]
        if ptr.id not in self.defined or ptr.id in self.invariant or \
                ptr.owner is None or ptr.owner.attrs.get("carried_offset"):
            return None  # computed before the loop, unchanging, carried, or split already
        got = self._split(ptr)
        if got is None or got[0] is None or got[1] is None:
            return None
        start, offset = got
        if start.name is None:  # (`a = tl.load(A + ...)`: `a_ptrs`)
            start.name = ptr.name or (f"{load.result.name}_ptrs" if load.result.name else None)
        loc = load.loc
        carried = self._carried(offset, start.name, loc)
        if carried is not None:
            offset = carried
        else:
            offset = self._widen(offset, loc, self.inside)
        spread = self._emit(self.inside, "splat", [offset], Type(D.int64, ptr.type.shape), loc)
        return self._emit(self.inside, "addptr", [start, spread], ptr.type, loc,
                          carried_offset=True)

    def _carried(self, offset: Value, name: str | None, loc) -> Value | None:
        """Where the offset is `a * index + b` (`a`, `b` unchanging in the loop): a loop-
        carried int64 offset starting at `a * lo + b` and advanced by `a * step` (the form
        `carry_offsets` gives advanced blocks: the loop computed from the index ran 0.89x
        as fast on an H200, its addresses multiply-added from the index); else None."""
        form = self._affine(offset)
        if form is None or form[0] is None:
            return None
        slope, intercept = (None if x is None else self._widen(x, loc) for x in form)
        lo, _, step = (self._widen(self._hoist(x), loc) for x in self.loop.operands[:3])
        first = self._add(self._mul(slope, lo, loc), intercept, loc)
        if first is None:
            first = self._emit(self.before, "const", [], Type(D.int64), loc, value=0)
        stride = self._mul(slope, step, loc)
        if stride.name is None and stride.owner in self.before and name:
            stride.name = f"{name}_step"
        arg = Value(Type(D.int64), f"{name}_offset" if name else None)
        update = Op("binary", [arg, stride], [Value(Type(D.int64))], loc, {"fn": "add"})
        self.updates.append(update)
        self.loop.operands.append(first)
        self.body.args.append(arg)
        self.body.yields.append(update.result)
        result = Value(Type(D.int64), arg.name)
        result.owner = self.loop
        self.loop.results.append(result)
        return arg

    def _affine(self, v: Value) -> tuple[Value | None, Value | None] | None:
        """(a, b), unchanging in the loop (None: 0), with v = a * index + b; None where `v`
        is not of that form."""
        iv = self.body.args[0]
        if v is iv:
            return self._one(v), None
        if v.id not in self.defined or v.id in self.invariant:
            return None, self._hoist(v)
        op = v.owner
        if op is None or not (op in self.body.ops or op in self.inside) or v.type.is_block or \
                not v.dtype.is_int():
            return None
        if op.kind == "cast" and not op.attrs.get("bitcast") and op.operands[0].dtype.is_int():
            return self._affine(op.operands[0])  # (widened as a whole: see _widen)
        if op.kind != "binary" or op.attrs.get("fn") not in ("add", "sub", "mul"):
            return None
        fn = op.attrs["fn"]
        x, y = (self._affine(o) for o in op.operands)
        if x is None or y is None:
            return None
        loc = op.loc
        if fn == "mul":
            if x[0] is not None and y[0] is not None:
                return None  # (quadratic in the index)
            (a, b), c = (x, y[1]) if y[0] is None else (y, x[1])
            if c is None:
                return None, None
            return tuple(self._mul(t, c, loc) for t in (a, b))
        def combine(p, q):
            if fn == "add" or q is None:
                return self._add(p, q, loc)
            if p is None:  # 0 - q
                p = self._emit(self.before, "const", [], q.type, loc, value=0)
            elif p.dtype != q.dtype:
                p, q = self._widen(p, loc), self._widen(q, loc)
            return self._emit(self.before, "binary", [p, q], p.type, loc, fn="sub")
        return combine(x[0], y[0]), combine(x[1], y[1])

    def _one(self, v: Value) -> Value:
        return self._emit(self.before, "const", [], Type(v.dtype), self.loop.loc, value=1)

    def _mul(self, p: Value | None, q: Value | None, loc) -> Value | None:
        """p * q before the loop (None: 0), multiplications by 1 left out."""
        if p is None or q is None or _constant(p) == 0 or _constant(q) == 0:
            return None
        if _constant(p) == 1 or _constant(q) == 1:
            return q if _constant(p) == 1 else p
        if p.dtype != q.dtype:
            p, q = self._widen(p, loc), self._widen(q, loc)
        return self._emit(self.before, "binary", [p, q], p.type, loc, fn="mul")

    def _add(self, p: Value | None, q: Value | None, loc,
             where: list[Op] | None = None) -> Value | None:
        """p + q (either None: 0), as int64 where their types differ, before the loop or
        `where`."""
        if p is None or q is None:
            return q if p is None else p
        if p.dtype != q.dtype:
            p, q = self._widen(p, loc, where), self._widen(q, loc, where)
        return self._emit(self.before if where is None else where, "binary", [p, q],
                          p.type, loc, fn="add")

    def _widen(self, v: Value, loc, where: list[Op] | None = None) -> Value:
        """`v` as an int64, before the loop or `where`."""
        if v.dtype == D.int64:
            return v
        return self._emit(self.before if where is None else where, "cast", [v],
                          Type(D.int64), loc, bitcast=False)

    def _split(self, v: Value) -> tuple[Value | None, Value | None] | None:
        """(unchanging part, scalar changing part) of an int or pointer block `v`, each None
        where it is nothing (0; a pointer's changing part is an offset in elements); None
        where `v` is not such a sum."""
        if v.id not in self.defined or v.id in self.invariant:
            return self._hoist(v), None
        if not v.type.is_block:
            return (None, v) if v.dtype.is_int() and v.dtype != D.int1 else None
        op = v.owner
        if op is None or op not in self.body.ops:
            return None  # a loop-carried block
        loc = op.loc
        if op.kind == "splat":
            return self._split(op.operands[0])
        if op.kind in ("expand_dims", "broadcast"):
            got = self._split(op.operands[0])
            if got is None:
                return None
            part = None if got[0] is None else \
                self._emit(self.before, op.kind, [got[0]], v.type, loc, **op.attrs)
            return part, got[1]
        if op.kind == "cast" and not op.attrs.get("bitcast") and v.dtype.is_int() and \
                op.operands[0].dtype.is_int() and v.dtype != D.int1:
            got = self._split(op.operands[0])
            if got is None:
                return None
            return (None if got[0] is None else
                    self._emit(self.before, "cast", [got[0]], v.type, loc, **op.attrs),
                    None if got[1] is None else
                    self._emit(self.inside, "cast", [got[1]], Type(v.dtype), loc, **op.attrs))
        if op.kind == "addptr":
            base, off = self._split(op.operands[0]), self._split(op.operands[1])
            if base is None or off is None or base[0] is None:
                return None
            start = base[0] if off[0] is None else \
                self._emit(self.before, "addptr", [base[0], off[0]], v.type, loc)
            return start, self._add(base[1], off[1], loc, self.inside)
        if op.kind != "binary" or not v.dtype.is_int() or v.dtype == D.int1:
            return None
        fn = op.attrs.get("fn")
        x, y = op.operands
        if fn in ("add", "sub"):
            a, b = self._split(x), self._split(y)
            if a is None or b is None or (fn == "sub" and (
                    (a[0] is None and b[0] is not None) or (a[1] is None and b[1] is not None))):
                return None  # (a part subtracted from nothing: rare)
            def combine(p, q, where, t):
                if p is None or q is None:
                    return q if p is None else p
                return self._emit(where, "binary", [p, q], t, loc, fn=fn)
            return (combine(a[0], b[0], self.before, v.type),
                    combine(a[1], b[1], self.inside, Type(v.dtype)))
        if fn == "mul":
            for var, factor in ((x, y), (y, x)):
                scalar = _uniform(factor)
                if scalar is None or (factor.id in self.defined and
                                      factor.id not in self.invariant):
                    continue
                got = self._split(var)
                if got is None:
                    return None
                return (None if got[0] is None else
                        self._emit(self.before, "binary", [got[0], self._hoist(factor)],
                                   v.type, loc, fn="mul"),
                        None if got[1] is None else
                        self._emit(self.inside, "binary", [got[1], scalar], Type(v.dtype),
                                   loc, fn="mul"))
        return None

    def _hoist(self, v: Value) -> Value:
        """`v` computed before the loop: itself where it is, else a copy of the ops of the
        body that compute it (the originals stay for their other readers)."""
        if v.id not in self.defined:
            return v
        if v.id not in self.hoisted:
            op = v.owner
            copy = Op(op.kind, [self._hoist(o) for o in op.operands],
                      [Value(v.type, v.name)], op.loc, dict(op.attrs))
            self.before.append(copy)
            self.hoisted[v.id] = copy.result
        return self.hoisted[v.id]

    def _emit(self, where: list[Op], kind: str, operands: list[Value], t: Type, loc,
              **attrs) -> Value:
        op = Op(kind, operands, [Value(t)], loc, attrs)
        where.append(op)
        if where is self.inside:  # (computed in the body, as the ops it replaces)
            self.defined.add(op.result.id)
        return op.result


def _comparisons(mask: Value) -> list[Op]:
    """The integer comparisons a mask is the conjunction of (through broadcasts)."""
    op = mask.owner
    if op is None:
        return []
    if op.kind in ("broadcast", "expand_dims"):
        return _comparisons(op.operands[0])
    if op.kind == "binary" and op.attrs.get("fn") == "and":
        return _comparisons(op.operands[0]) + _comparisons(op.operands[1])
    return [op] if op.kind == "cmp" and op.attrs.get("pred") in ("lt", "le", "gt", "ge") \
        else []


def _constant(v: Value) -> int | None:
    """The value of an integer constant, widened or not (axis_info's, past the casts)."""
    while v.owner is not None and v.owner.kind == "cast" and not v.owner.attrs.get("bitcast"):
        v = v.owner.operands[0]
    return const_int(v)


def _uniform(v: Value) -> Value | None:
    """The scalar a block holds in every element (a splat, broadcast or expanded), or `v`
    itself for a scalar; None otherwise."""
    while v.type.is_block:
        op = v.owner
        if op is None or op.kind not in ("splat", "broadcast", "expand_dims"):
            return None
        v = op.operands[0]
    return v


def _vectors(load: Op) -> bool:
    """Whether a load of a block may read 4 bytes or more at a time (the pointers' contiguity
    and alignment along some axis, as passes.layouts plans vectors)."""
    ptr = load.operands[0]
    if not ptr.type.is_block or not ptr.dtype.is_ptr():
        return False
    esize = ptr.dtype.element_ty.itemsize
    got = info(ptr)
    return any(min(c, max(1, d // esize)) * esize >= 4
               for c, d in zip(got.contiguity, got.divisibility))
