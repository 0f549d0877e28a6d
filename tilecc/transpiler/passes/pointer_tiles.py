"""Pointer blocks as tensor maps: `tl.load`s the copy engine can read on sm_90 (TMA).

A 2-D block of pointers written the usual way,

    kt = tl.load(K + (off_hz // H) * stride_z + (off_hz % H) * stride_h
                 + (start_n + offs_n)[None, :] * stride_m + offs_d[:, None],
                 mask=(start_n + offs_n)[None, :] < N_CTX, other=0.0)

is a box of a strided tensor: a pointer argument, one dim per stride (an argument or a
constant) with a coordinate each — the two the block's aranges run along (one of stride 1),
the others a single element — and a bound per masked dim.  Where a load that feeds a
product in a loop is of that form, it is marked as a read of the tensor map the launch
encodes from those arguments (`ir.DescriptorRead`, `pointers`): `passes.pipeline` may then
copy it by TMA exactly as a descriptor's block, and the loads it leaves to cp.async lose the
mark again (`unmark_unused`).

What makes the copy read what the load reads:
- the address is the same sum: a base pointer argument (16-byte aligned, specialized), plus
  coordinate x stride per dim; each coordinate a sum of non-negative values (program ids,
  ascending loop indices, their products, quotients and remainders...), so the copy engine,
  which reads nothing below a dim's 0, never clips where the load would read;
- the mask is a conjunction of `coordinate < bound` over the block's dims (a bound an int
  argument or a constant; `x < K - k * BK` is `x + k * BK < K`; `x >= 0` and a block
  pointer's `u32(x) < u32(max(n, 0))` too); an unmasked dim gets a bound no coordinate
  reaches; masked off reads `other`, which must be 0 (or NaN: the copy engine's fill);
- what the launch has to know: the strides but the last positive multiples of 16 bytes
  (Triton's rule for any tensor map), the arguments the coordinates divide by positive,
  those they add non-negative (`requires`).  A launch whose values break any of these runs
  a build without these copies (`runtime.launch`), so nothing rests on a guess.

Values a loop carries and advances by constant steps (`a_ptrs += BK * stride_ak`, a block
pointer and its offsets, `tl.advance`d) are what they start as plus the iterations before
times the step, for a loop counting by a constant step that divides each advance (from
`lo`: a start advanced by `lo` before the loop cancels it).  A marked load of such a
block of pointers reads it worked out that way from the loop's index (`from_index`), so
the loop no longer carries a block the copies never read (nor the source writes it).
The coordinates are computed in int32, as the copy engine takes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilecc.language import dtypes as D
from tilecc.transpiler import ir
from tilecc.transpiler.ir import DescriptorRead, Kernel, Op, Region, Type, Value

# a dim's extent where no mask bounds it: past any int32 coordinate plus a box
UNBOUNDED = 2 ** 31 - 1

# (stride parameter's name or None, constant factor): a dim of the tensor map
Key = tuple


@dataclass(frozen=True)
class Coord:
    """A sum: `const` + each leaf value times its multiplier (+ an arange 0..n along block
    axis `axis`, where set)."""
    terms: tuple = ()  # ((value, multiplier), ...), by value id
    const: int = 0
    axis: int | None = None

    def plus(self, o: "Coord", sign: int = 1) -> "Coord | None":
        if o.axis is not None and (sign < 0 or self.axis is not None):
            return None
        terms = dict((v.id, [v, m]) for v, m in self.terms)
        for v, m in o.terms:
            terms.setdefault(v.id, [v, 0])[1] += sign * m
        return Coord(_terms(terms.values()), self.const + sign * o.const,
                     self.axis if o.axis is None else o.axis)

    def times(self, k: int) -> "Coord":
        assert self.axis is None
        return Coord(_terms((v, m * k) for v, m in self.terms), self.const * k)

    def same(self, o: "Coord") -> bool:
        return self.axis == o.axis and self.const == o.const and \
            sorted((v.id, m) for v, m in self.terms) == sorted((v.id, m) for v, m in o.terms)


def _terms(pairs) -> tuple:
    return tuple(sorted(((v, m) for v, m in pairs if m), key=lambda t: t[0].id))


@dataclass
class Form:
    """An integer or pointer value as `base` (a pointer argument, for pointers) plus
    coordinate x stride per dim (`dims`: Key → Coord).  Scalar parts sit at factor 1."""
    base: Value | None = None
    dims: dict = field(default_factory=dict)


def mark(kernel: Kernel) -> bool:
    """Mark the loads (in loops, read by products alone) whose blocks a tensor map of
    arguments can copy (`attrs["descriptor"]`, a DescriptorRead with `pointers`); whether
    a marked load's pointers, which its loop carried, now come from the loop's index
    (`_Matcher.from_index`: the carried ones are then read by nothing but their update)."""
    params = {p.value.id: p for p in kernel.params if p.value is not None}
    loops: dict[int, Op] = {}  # a for loop's index value → the loop
    carried: dict[int, tuple[Op, int]] = {}  # a loop-carried value → its loop, its place
    for op in kernel.walk():
        if op.kind == "for":
            loops[op.regions[0].args[0].id] = op
            for j, arg in enumerate(op.regions[0].args[1:]):
                carried[arg.id] = (op, j)
    readers: dict[int, list[Op]] = {}
    for op in kernel.walk():
        for v in op.operands:
            readers.setdefault(v.id, []).append(op)
    m = _Matcher(params, loops, carried)
    _visit(kernel.body, m, readers, in_loop=False)
    return m.rewritten


def _visit(region: Region, m: "_Matcher", readers: dict, in_loop: bool) -> None:
    ops: list[Op] = []
    for op in region.ops:
        for r in op.regions:
            _visit(r, m, readers, in_loop or op.kind == "for")
        if in_loop and op.kind == "load" and "descriptor" not in op.attrs and \
                len(op.result.type.shape) == 2 and readers.get(op.result.id) and all(
                    r.kind == "dot" and op.result in r.operands[:2] and
                    op.result not in r.operands[2:] for r in readers[op.result.id]):
            read, new_ops = m.match(op)
            if read is not None:
                op.attrs["descriptor"] = read
                ops += new_ops + m.from_index(op, region)
        ops.append(op)
    region.ops = ops


class _Matcher:
    def __init__(self, params: dict, loops: dict, carried: dict):
        self.params = params
        self.carried = carried
        self.by_name = {p.name: p.value for p in params.values()}
        self.loops = loops
        self.forms: dict[int, Form | None] = {}
        # per match: block axis → the mask's value of its corner (`_bounds`)
        self.written: dict[int, Value] = {}
        self.rewritten = False  # a load's carried pointers replaced (`from_index`)

    # --- values as sums of coordinates times strides -------------------------------------

    def form(self, v: Value) -> Form | None:
        if v.id not in self.forms:
            self.forms[v.id] = self._form(v)
        return self.forms[v.id]

    def _form(self, v: Value) -> Form | None:
        op = v.owner
        if v.id in self.carried:
            return self._carried(v)
        if v.dtype.is_ptr():
            if v.type.is_block:
                if op is not None and op.kind in ("splat", "broadcast"):
                    return self.form(op.operands[0])
                if op is not None and op.kind == "expand_dims":
                    return _expanded(self.form(op.operands[0]), op, v)
            if op is not None and op.kind == "addptr":
                p, off = self.form(op.operands[0]), self.form(op.operands[1])
                ok = p is not None and p.base is not None and off is not None
                return _add(p, off) if ok else None
            p = self.params.get(v.id)
            return Form(base=v) if p is not None and not v.type.is_block else None
        if not v.dtype.is_int() or v.dtype == D.int1:
            return None
        got = None
        if op is not None:
            got = self._int_form(v, op)
        if got is None and not v.type.is_block and v.dtype == D.int32:
            got = Form(dims={(None, 1): Coord(((v, 1),))})  # a value of its own
        return got

    def _int_form(self, v: Value, op: Op) -> Form | None:
        k = op.kind
        if k == "const" and isinstance(op.attrs["value"], int):
            return Form(dims={(None, 1): Coord((), op.attrs["value"])})
        if k == "arange" and len(v.type.shape) == 1:
            return Form(dims={(None, 1): Coord((), op.attrs["start"], 0)})
        if k in ("splat", "broadcast"):
            return self.form(op.operands[0])
        if k == "expand_dims":
            return _expanded(self.form(op.operands[0]), op, v)
        if k == "cast" and not op.attrs.get("bitcast") and op.operands[0].dtype.is_int() and \
                op.operands[0].dtype.bits <= v.dtype.bits and op.operands[0].dtype != D.int1:
            # widened, or an int32 read unsigned: the same number where it is not negative,
            # which `match` requires of every coordinate
            src = op.operands[0]
            return self.form(src) if src.dtype == D.int32 or src.type.is_block else None
        if k != "binary":
            return None
        fn, (a, b) = op.attrs["fn"], op.operands
        if fn in ("add", "sub"):
            fa, fb = self.form(a), self.form(b)
            return _add(fa, fb, -1 if fn == "sub" else 1) if fa and fb else None
        if fn == "mul":
            fa, fb = self.form(a), self.form(b)
            if fa is None or fb is None:
                return None
            # (a parameter first: `BLOCK_N * stride_m` steps BLOCK_N along stride_m's dim)
            for x, y in ((fa, fb), (fb, fa)):
                p = self._parameter(y)
                if p is not None:
                    return _strided(x, p)
            for x, y in ((fa, fb), (fb, fa)):
                c = _constant(y)
                if c is not None:
                    return _scaled(x, c)
        return None

    def _carried(self, v: Value) -> Form | None:
        """A value a loop carries, advanced by the same constant steps each iteration
        (`ptrs += BLOCK_K * stride_k`, a block pointer's offsets): what it starts as, plus
        the steps of the iterations before, counted by the loop's index (from 0, by a
        constant step that divides each step's coordinate)."""
        loop, j = self.carried[v.id]
        body = loop.regions[0]
        if body.yields[j] is v:  # carried unchanged (a block pointer's other offset)
            return self.form(loop.operands[3 + j])
        lo, step = loop.operands[0], _constant_value(loop.operands[2])
        y = body.yields[j].owner
        if _leaf(lo) is None or step is None or step <= 0 or y is None or \
                y.kind not in ("addptr", "binary") or \
                (y.kind == "binary" and y.attrs["fn"] != "add"):
            return None
        a, inc = y.operands
        if inc is v and y.kind == "binary":
            a, inc = inc, a
        if a is not v:
            return None
        start, by = self.form(loop.operands[3 + j]), self.form(inc)
        if start is None or by is None or by.base is not None:
            return None
        # the iterations before: (index - lo) / step, lo a constant or an int32 value (what
        # a start advanced by lo before the loop cancels: Triton's `range(lo, hi, BLOCK_N)`
        # over block pointers moved to lo first; left over, a coordinate not known
        # non-negative, which `match` refuses)
        index, first = body.args[0], _constant_value(lo)
        steps: dict = {}
        for key, c in by.dims.items():  # each step: constants only
            if c.axis is not None or c.terms or c.const % step:
                return None
            q = c.const // step
            steps[key] = Coord(((index, q),), -q * first) if first is not None else \
                Coord(_terms([(index, q), (_leaf(lo), -q)]))
        return _add(start, Form(None, steps))

    def from_index(self, load: Op, region: Region) -> list[Op]:
        """Where `load` reads a block of pointers its loop carries and advances by the same
        step each iteration (`a_ptrs += BLOCK_K * stride_ak`), it reads instead the block
        the loop starts from, advanced by the step times the iterations before (from the
        loop's index, in 64 bits): the same addresses, for the interpreter and for
        cp.async where the pipeline leaves the block to it after all.  The carried
        pointers, then read by their update alone, go (passes.dce): the copy engine's
        copies never read them, and the source would keep the block and its update in
        every iteration.
        Returns the ops that compute it, to go before the load (in `region`, the loop's
        body)."""
        ptr = load.operands[0]
        if ptr.id not in self.carried:
            return []
        loop, j = self.carried[ptr.id]
        body = loop.regions[0]
        update = body.yields[j].owner
        if body is not region or update is None or update.kind != "addptr" or \
                update.operands[0] is not ptr:
            return []
        lo, step = loop.operands[0], _constant_value(loop.operands[2])
        step_ops = self._before_loop(update.operands[1], body)
        if step is None or step <= 0 or step_ops is None or _leaf(lo) is None:
            return []
        ops, step_value = step_ops
        i64 = Type(D.int64)

        def new(kind, operands, type=i64, **attrs) -> Value:
            op = Op(kind, operands, [Value(type)], load.loc, attrs)
            ops.append(op)
            return op.result

        count = body.args[0]  # (index - lo) / step iterations before this one
        if _constant_value(lo) != 0:
            count = new("binary", [count, lo], count.type, fn="sub")
        if step != 1:
            count = new("binary", [count, new("const", [], count.type, value=step)],
                        count.type, fn="div")
        offset = new("binary", [new("cast", [count]), new("cast", [step_value])], fn="mul")
        offset = new("splat", [offset], Type(D.int64, ptr.type.shape))
        new("addptr", [loop.operands[3 + j], offset], ptr.type)
        load.operands[0] = ops[-1].result
        self.rewritten = True
        return ops

    def _before_loop(self, v: Value, body: Region) -> tuple[list[Op], Value] | None:
        """(ops, value): the scalar an update adds at each step (a block of one value, a
        splat of it), as ops to go before the loop's load: the value itself where it is
        not made in `body`, else its pure ops made again from constants and values from
        before the loop; None where it reads anything else."""
        made = {id(o) for o in body.ops}
        if v.owner is not None and v.owner.kind == "splat":
            v = v.owner.operands[0]
        if v.type.is_block or not v.dtype.is_int():
            return None
        ops: list[Op] = []
        copies: dict[int, Value] = {}

        def again(x: Value) -> Value | None:
            op = x.owner
            if op is None or id(op) not in made:
                return None if x in body.args else x
            if op.kind not in ("const", "binary", "cast") or op.regions:
                return None
            if x.id not in copies:
                operands = [again(o) for o in op.operands]
                if any(o is None for o in operands):
                    return None
                clone = Op(op.kind, operands, [Value(x.type)], op.loc, dict(op.attrs))
                ops.append(clone)
                copies[x.id] = clone.result
            return copies[x.id]

        got = again(v)
        return (ops, got) if got is not None else None

    def _parameter(self, f: Form) -> str | None:
        """The int parameter `f` is, alone (a stride)."""
        c = f.dims.get((None, 1))
        if len(f.dims) != 1 or c is None or c.axis is not None or c.const or \
                len(c.terms) != 1 or c.terms[0][1] != 1:
            return None
        p = self.params.get(_unwidened(c.terms[0][0]).id)
        return p.name if p is not None and p.value.dtype.is_int() else None

    # --- what a coordinate needs to be non-negative ----------------------------------------

    def nonnegative(self, v: Value, needs: set) -> bool:
        """Whether `v` is never negative, given the parameters in `needs` ((name, least
        value)), to which it adds what it assumes."""
        v = _unwidened(v)
        op = v.owner
        p = self.params.get(v.id)
        if p is not None:
            needs.add((p.name, 0))
            return v.dtype.is_int()
        if v.id in self.loops:  # an ascending loop's index from a non-negative start
            loop = self.loops[v.id]
            lo, _, step = loop.operands[:3]
            return self.nonnegative(lo, needs) and self.positive(step, needs)
        if op is None:
            return False
        if op.kind == "const":
            return isinstance(op.attrs["value"], int) and op.attrs["value"] >= 0
        if op.kind in ("program_id", "num_programs"):
            return True
        if op.kind != "binary":
            return False
        fn, (a, b) = op.attrs["fn"], op.operands
        if fn in ("add", "mul", "max", "min", "or"):
            return self.nonnegative(a, needs) and self.nonnegative(b, needs)
        if fn in ("div", "rem"):
            return self.nonnegative(a, needs) and self.positive(b, needs)
        if fn == "shr":
            return self.nonnegative(a, needs)
        if fn == "and":
            return self.nonnegative(a, needs) or self.nonnegative(b, needs)
        return False

    def positive(self, v: Value, needs: set) -> bool:
        v = _unwidened(v)
        p = self.params.get(v.id)
        if p is not None and v.dtype.is_int():
            needs.add((p.name, 1))
            return True
        op = v.owner
        return op is not None and op.kind == "const" and isinstance(op.attrs["value"], int) \
            and op.attrs["value"] > 0

    # --- the match ------------------------------------------------------------------------

    def match(self, load: Op) -> tuple[DescriptorRead | None, list[Op]]:
        ptr = load.operands[0]
        f = self.form(ptr)
        if f is None or f.base is None:
            return None, []
        base = self.params[f.base.id]
        if not base.divisible_by_16:
            return None, []
        blocked = {c.axis: (key, c) for key, c in f.dims.items() if c.axis is not None}
        # (in the order the kernel adds them: `z * stride_z + h * stride_h`, z outermost)
        outer = [(key, c) for key, c in f.dims.items() if c.axis is None]
        if set(blocked) != {0, 1} or (None, 1) not in f.dims or \
                f.dims[(None, 1)].axis is None or len(outer) > 3:
            return None, []
        inner_axis = f.dims[(None, 1)].axis
        row_key, row = blocked[1 - inner_axis]
        if row_key[0] is not None and row_key[1] != 1:
            return None, []
        if any(key[0] is None or key[1] != 1 for key, _ in outer):
            return None, []
        # the masked dims' bounds
        bounds: dict[int, object] = {}
        self.written = {}
        if len(load.operands) > 1 and not self._bounds(load.operands[1], f, bounds):
            return None, []
        needs: set = set()
        coords = [c for _, c in outer] + [row, f.dims[(None, 1)]]
        for c in coords:
            if c.const < 0 or any(m < 0 or _leaf(v) is None or
                                  not self.nonnegative(v, needs) for v, m in c.terms):
                return None, []
        ops: list[Op] = []
        # a masked dim's corner as the mask computes it (a block pointer's carried offset:
        # what the copies then read, as the loads did), else summed from its parts
        values = [self.written[c.axis] if c.axis in self.written else _emit(c, load, ops)
                  for c in coords]
        for (key, _), v in zip(outer, values):  # (`off_hz // H` by stride_z: z_index)
            if v.name is None:
                v.name = (key[0][len("stride"):].lstrip("_") if key[0].startswith("stride") and
                          key[0] != "stride" else key[0]) + "_index"
        shape = [UNBOUNDED] * len(outer) + [bounds.get(row.axis, UNBOUNDED),
                                            bounds.get(inner_axis, UNBOUNDED)]
        strides = [key[0] for key, _ in outer] + \
            [row_key[0] if row_key[0] is not None else row_key[1], 1]
        args = (base.name, *shape, *strides)
        # rows bounded by an argument (and no dims past them): A's rows may go in one box
        # (passes.pipeline.a_rows_split), those past the last whole slab 8 at a time
        rows_bound = bounds.get(row.axis)
        rows = (self.by_name[rows_bound],) if isinstance(rows_bound, str) and not outer else ()
        read = DescriptorRead(base.name, (values[-2], values[-1]), args,
                              transposed=inner_axis == 0, bounds=rows,
                              outer=tuple(values[:-2]), requires=tuple(sorted(needs)),
                              pointers=True, ops=tuple(ops))
        return read, ops

    def _bounds(self, mask: Value, f: Form, bounds: dict) -> bool:
        """Record in `bounds` (block axis → a parameter name or an int) the `coordinate <
        bound` tests that `mask` is the conjunction of, over dims of `f`.  False where it is
        anything else."""
        op = mask.owner
        while op is not None and op.kind in ("broadcast", "splat"):
            if op.kind == "splat":
                return False
            op = op.operands[0].owner
        if op is None:
            return False
        if op.kind == "binary" and op.attrs["fn"] == "and":
            return all(self._bounds(x, f, bounds) for x in op.operands)
        if op.kind != "cmp" or op.attrs["pred"] not in ("lt", "gt", "ge", "le"):
            return False
        x, n = op.operands if op.attrs["pred"] in ("lt", "ge") else reversed(op.operands)
        unsigned = x.dtype.is_int_unsigned()
        if unsigned:  # `u32(x) < u32(max(n, 0))`: 0 <= x < n (block pointers' bounds)
            n = _at_least_zero(_signed(n))
            if n is None:
                return False
        fx = self.form(x)
        c = fx.dims.get((None, 1)) if fx is not None and len(fx.dims) == 1 else None
        if c is None or c.axis is None:
            return False
        if op.attrs["pred"] in ("ge", "le"):  # `x >= 0`: so is every coordinate (`match`)
            return not unsigned and _constant_value(_unsplat(n)) == 0 and \
                any(c.same(d) for d in f.dims.values())
        got = self._bound(n)
        if got is None:
            return False
        bound, rest = got  # x < bound + rest: x - rest < bound (`offs_k < K - k * BK`)
        c = c.plus(rest, -1)
        if c is None or c.axis in bounds or not any(c.same(d) for d in f.dims.values()):
            return False
        bounds[c.axis] = bound
        corner = _corner_value(x)
        if corner is not None and not rest.terms and not rest.const:
            fc = self.form(corner)
            got = fc.dims.get((None, 1)) if fc is not None and len(fc.dims) == 1 else None
            if got is not None and Coord(got.terms, got.const, c.axis).same(c):
                self.written[c.axis] = corner
        return True

    def _bound(self, n: Value) -> tuple | None:
        """`n` as a bound the launch knows (an int32 parameter's name, or a constant)
        plus the rest of it (a Coord), or None."""
        fn = self.form(n)
        c = fn.dims.get((None, 1)) if fn is not None and len(fn.dims) == 1 else None
        if c is None or c.axis is not None:
            return None
        if not c.terms:
            return (c.const, Coord()) if 0 <= c.const <= UNBOUNDED else None
        for v, m in c.terms:
            p = self.params.get(_unwidened(v).id)
            if m == 1 and p is not None and p.value.dtype == D.int32:
                rest = c.plus(Coord(((v, 1),)), -1)
                return (p.name, rest) if rest is not None else None
        return None


def _corner_value(x: Value) -> Value | None:
    """The scalar int32 `s` of a mask's `s + tl.arange(0, n)` (through expand_dims,
    broadcasts and unsigned casts), or None."""
    op = x.owner
    while op is not None and (op.kind in ("expand_dims", "broadcast") or (
            op.kind == "cast" and not op.attrs.get("bitcast") and x.type.is_block)):
        x = op.operands[0]
        op = x.owner
    if op is None or op.kind != "binary" or op.attrs["fn"] != "add":
        return None
    for s, r in (op.operands, reversed(op.operands)):
        r_op = _unsplat(r).owner
        while r_op is not None and r_op.kind in ("cast", "expand_dims", "broadcast"):
            r_op = r_op.operands[0].owner
        if r_op is not None and r_op.kind == "arange" and r_op.attrs["start"] == 0:
            v = _unsplat(s)
            v = v.owner.operands[0] if v.owner is not None and v.owner.kind == "cast" and \
                v.owner.operands[0].dtype == D.int32 else v
            return v if v.dtype == D.int32 and not v.type.is_block else None
    return None


def _unsplat(v: Value) -> Value:
    while v.owner is not None and v.owner.kind in ("splat", "broadcast"):
        v = v.owner.operands[0]
    return v


def _signed(v: Value) -> Value | None:
    """The int32 value `v` is the unsigned reading of (through splats), or None."""
    v = _unsplat(v)
    op = v.owner
    if op is None or op.kind != "cast" or op.attrs.get("bitcast") or \
            op.operands[0].dtype != D.int32 or v.dtype.bits != 32:
        return None
    return op.operands[0]


def _at_least_zero(n: Value | None) -> Value | None:
    """`m` where `n` is `max(m, 0)` (a bound no negative value reaches past), or None."""
    if n is None:
        return None
    n = _unsplat(n)
    op = n.owner
    if op is not None and op.kind == "binary" and op.attrs["fn"] == "max":
        a, b = op.operands
        if _constant_value(b) == 0:
            return a
        if _constant_value(a) == 0:
            return b
    k = _constant_value(n)
    return n if k is not None and k >= 0 else None


def _constant_value(v: Value) -> int | None:
    op = v.owner
    if op is not None and op.kind == "const" and isinstance(op.attrs["value"], int):
        return op.attrs["value"]
    return None


def _expanded(f: Form | None, op: Op, v: Value) -> Form | None:
    if f is None:
        return None
    axis = op.attrs["axis"] % len(v.type.shape)
    return Form(f.base, {k: Coord(c.terms, c.const,
                                  None if c.axis is None else
                                  c.axis + (c.axis >= axis)) for k, c in f.dims.items()})


def _add(a: Form, b: Form, sign: int = 1) -> Form | None:
    if b.base is not None:
        return None
    dims = dict(a.dims)
    for key, c in b.dims.items():
        got = dims.get(key, Coord()).plus(c, sign)
        if got is None:
            return None
        dims[key] = got
    return Form(a.base, dims)


def _constant(f: Form) -> int | None:
    c = f.dims.get((None, 1))
    if f.base is None and len(f.dims) == 1 and c is not None and c.axis is None and \
            not c.terms:
        return c.const
    return None


def _scaled(f: Form, k: int) -> Form | None:
    """`f` times the constant `k`: its scalar parts times k; a dim an arange runs along
    keeps its coordinate, its stride k times larger."""
    if f.base is not None:
        return None
    dims: dict = {}
    for (p, factor), c in f.dims.items():
        if c.axis is None:
            key, c = (p, 1), c.times(k)
        elif k == 0:
            return None
        else:
            key = (p, factor * k)
        got = c if key not in dims else dims[key].plus(c)
        if got is None:
            return None
        dims[key] = got
    return Form(None, dims)


def _strided(f: Form, p: str) -> Form | None:
    """`f` times the int parameter `p`: every dim of `f` (of constant factor 1) one of
    stride p."""
    if f.base is not None or any(key != (None, 1) for key in f.dims):
        return None  # (a stride of a parameter times a constant: no one argument)
    return Form(None, {(p, 1): f.dims[(None, 1)]})


def _unwidened(v: Value) -> Value:
    op = v.owner
    while op is not None and op.kind == "cast" and not op.attrs.get("bitcast") and \
            op.operands[0].dtype.is_int() and op.operands[0].dtype != D.int1 and \
            op.operands[0].dtype.bits <= v.dtype.bits:
        v = op.operands[0]
        op = v.owner
    return v


def _leaf(v: Value) -> Value | None:
    """`v` as an int32 (widened values: their source), or None."""
    v = _unwidened(v)
    return v if v.dtype == D.int32 and not v.type.is_block else None


def _emit(c: Coord, at: Op, ops: list[Op]) -> Value:
    """The int32 value of `c`'s scalar part (ops appended to `ops`, to go before `at`)."""
    def new(kind, operands, **attrs) -> Value:
        op = Op(kind, operands, [Value(Type(D.int32))], at.loc, attrs)
        ops.append(op)
        return op.result

    total = None
    for v, m in c.terms:
        x = _leaf(v)
        if m != 1:
            x = new("binary", [x, new("const", [], value=m)], fn="mul")
        total = x if total is None else new("binary", [total, x], fn="add")
    if total is None or c.const:
        k = new("const", [], value=c.const)
        total = k if total is None else new("binary", [total, k], fn="add")
    return total


def unmark_unused(kernel: Kernel) -> None:
    """Drop the mark (and the coordinates' ops) of the loads `mark` matched that no kept
    pipeline copies by TMA."""
    copied = set()
    for loop in kernel.walk():
        p = loop.attrs.get("pipeline") if loop.kind == "for" else None
        for ld, copy in zip(p.loads if p else (), p.tma if p else ()):
            if copy is not None:
                copied.add(id(ld))
    dropped: set[int] = set()
    for op in kernel.walk():
        read = op.attrs.get("descriptor")
        if read is not None and read.pointers and id(op) not in copied:
            del op.attrs["descriptor"]
            dropped |= {id(o) for o in read.ops}
    if dropped:
        _drop(kernel.body, dropped, ir.uses(kernel))


def _drop(region: Region, dropped: set[int], uses: dict[int, int]) -> None:
    # (in reverse: a coordinate's sum goes before the products it adds)
    kept: list[Op] = []
    for op in reversed(region.ops):
        for r in op.regions:
            _drop(r, dropped, uses)
        if id(op) in dropped and not uses.get(op.result.id, 0):
            for v in op.operands:
                uses[v.id] -= 1
            continue
        kept.append(op)
    region.ops = kept[::-1]
