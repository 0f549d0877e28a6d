"""The tile IR: typed SSA values in structured regions.

A `Value` is a scalar (shape ()) or a block (shape (N,), ...) of one dtype.  An `Op` has a
kind, operands, attributes, the user's source location and, for `for` / `if` / `while`,
nested `Region`s.  Loop-carried and branch-merged values flow through region arguments
and `Region.yields`, as in MLIR's scf dialect.  Passes annotate values through
`Value.info` (axis facts) and `Value.layout`; the renderer and the interpreter read the
same objects.  `Value.hints` holds what the kernel promised of a value (`tl.multiple_of`,
`tl.max_contiguous`, `tl.max_constancy`: one number per axis), attached to the value itself
as Triton attaches them to the op that defines it, so a hint holds for every use.

Op kinds (operands → result):
  const{value}                          → scalar
  program_id{axis}, num_programs{axis}  → i32 scalar
  counter{counter}: globaltimer smid memrealtime → the hardware's timer / SM id (scalar)
  arange{start,end}                     → i32 block
  splat(x)                              → block of x
  cast(x){bitcast}                      → x converted
  unary(x){fn}: neg invert not abs exp exp2 log log2 sqrt sqrt_rn rsqrt sin cos floor ceil erf
  binary(a,b){fn}: add sub mul div rem and or xor shl shr min max fmin fmax umulhi
                   fmin_nan fmax_nan (NaN-propagating)
                   land lor (scalars only) ; cmp(a,b){pred}: lt le gt ge eq ne
  fma(a,b,c) ; where(c,a,b) ; addptr(ptr, offset)
  extern(*args){fn}                     → a libdevice function (libdevice_table.TABLE[fn])
  load(ptr[, mask[, other]]) ; store(ptr, value[, mask]) ; device_assert(cond){msg}
  print(values...){prefix, hex}         tl.device_print: a line per element
  for(lo, hi, step, *init)   regions[0]: args (iv, *carried), yields carried
  if(cond)                   regions[0] then, regions[1] else: yields results
  while(*init)               regions[0] before: args carried, yields (cond,);
                             regions[1] body: args carried, yields carried
"""

from __future__ import annotations

import math

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Any, Iterator

from tilecc.errors import Loc
from tilecc.language.dtypes import dtype, pointer_type
from tilecc.transpiler.names import kernel_symbol

ScalarType = dtype | pointer_type


@dataclass(frozen=True)
class Type:
    dtype: ScalarType
    shape: tuple[int, ...] = ()

    @property
    def is_block(self) -> bool:
        return bool(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def with_dtype(self, d: ScalarType) -> "Type":
        return Type(d, self.shape)

    def __str__(self) -> str:
        name = self.dtype.short
        if self.dtype.is_ptr():
            name = f"{'const ' if self.dtype.const else ''}*{self.dtype.element_ty.short}"
        return f"{name}[{', '.join(map(str, self.shape))}]" if self.shape else name


_ids = itertools.count()


class Value:
    """An SSA value.  `name` is the Python variable it was bound to, if any."""

    __slots__ = ("id", "type", "name", "owner", "info", "layout", "hints")

    def __init__(self, type: Type, name: str | None = None):
        self.id = next(_ids)
        self.type = type
        self.name = name
        self.owner: Op | None = None  # defining op; None for region arguments
        self.info: Any = None  # AxisInfo, set by passes.axis_info
        self.layout: Any = None  # Layout, set by passes.layouts
        # promises of the kernel (tl.multiple_of...): hint name → one value per axis
        self.hints: dict[str, tuple[int, ...]] | None = None

    @property
    def dtype(self) -> ScalarType:
        return self.type.dtype

    def __repr__(self) -> str:
        return f"%{self.name or ''}{self.id}:{self.type}"


@dataclass(eq=False)
class Region:
    args: list[Value] = field(default_factory=list)
    ops: list["Op"] = field(default_factory=list)
    yields: list[Value] = field(default_factory=list)


@dataclass(eq=False)
class Op:
    kind: str
    operands: list[Value]
    results: list[Value]
    loc: Loc
    attrs: dict[str, Any] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)

    def __post_init__(self) -> None:
        for r in self.results:
            r.owner = self

    @property
    def result(self) -> Value:
        return self.results[0]


@dataclass(frozen=True, eq=False)
class DescriptorRead:
    """`attrs["descriptor"]` of a load (or a store) through a tensor descriptor the launch
    can encode a tensor map of: the block's corner (one int32 scalar per dim, the values
    its bounds mask reads) — what a TMA copy of the block needs — and where the descriptor
    comes from.  A host-side descriptor: `param` is its kernel parameter, `args` None.  One made
    in the kernel from arguments alone: `param` is its base pointer's parameter, `args`
    its base, shape and strides, each a parameter name or an int.  `transposed`: the load
    reads the block transposed (`desc.load(...).T`, passes.transpose).  `bounds`: the
    descriptor's shape, as the bounds mask reads it (the copy engine writes only a store's
    boxes that start inside it; a load of A's rows in one box checks the rows' slabs)."""
    param: str
    corner: tuple[Value, ...]
    args: tuple | None = None
    transposed: bool = False
    # the descriptor's shape, as the bounds mask reads it (one scalar per dim)
    bounds: tuple = ()
    # the coordinates of the map's dims past the block's two (box 1 each; outermost
    # first): a load of pointers read as a box of a tensor map (passes.pointer_tiles), or
    # the leading unit dims of a descriptor's block that a reshape dropped
    # (passes.unit_dims: then `outer_bounds`, the descriptor's shape in those dims); of a
    # load of pointers also what the launch must find of arguments ((name, least value)
    # each), and the ops that compute the coordinates (dropped when no TMA copy reads them)
    outer: tuple = ()
    outer_bounds: tuple = ()
    requires: tuple = ()
    pointers: bool = False
    ops: tuple = ()


@dataclass
class Param:
    """A kernel parameter: a run-time value, or a constexpr folded at trace time."""

    name: str
    value: Value | None  # None for constexpr parameters
    constexpr: Any = None
    divisible_by_16: bool = False  # ints: value % 16 == 0; pointers: 16-byte aligned
    is_constexpr: bool = False
    divisor: int = 1  # ints: a divisor known otherwise (`i32:8`, a descriptor's strides)


@dataclass
class Kernel:
    name: str
    params: list[Param]
    body: Region
    loc: Loc
    # the compile options the kernel is traced and rendered with (runtime/options.py)
    num_warps: int
    num_stages: int  # depth of the cp.async pipeline feeding tl.dot in loops
    debug: bool
    maxnreg: int | None  # registers per thread at most (launch option; CUDA only)
    # False: the source itself keeps a * b + c two roundings (enable_fp_fusion=False), so
    # that an emitted or exported file honours it whatever flags build it
    fp_fusion: bool
    arch_specific: bool = False  # uses sm_90a-only instructions (wgmma): set by passes.settle
    # tensor maps the kernel takes after its parameters (specs.TensorMap: host descriptors
    # copied by TMA), in order: set by passes.settle
    tensor_maps: list = field(default_factory=list)
    # a producer warpgroup issuing a persistent loop's TMA copies, after the kernel's
    # num_warps (passes.warp_roles.WarpRoles): set by passes.settle
    warp_roles: Any = None
    # the `extern "C"` symbol (names.kernel_symbol: the name, unless C++ cannot take it)
    symbol: str = ""
    # Source text of each statement line, and the author's comments above it, keyed by
    # (file, line): the renderer writes them above the code the line produced.
    statements: dict[tuple[str, int], tuple[str, list[str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.symbol = self.symbol or kernel_symbol(self.name)

    def walk(self) -> Iterator[Op]:
        yield from walk(self.body)


def rewrite(region: Region, replaced: dict[int, "Op | None"], after: dict[int, list["Op"]],
            renamed: dict[int, Value]) -> None:
    """`region` and those nested in it rewritten in place: each op whose id is in
    `replaced` gives way to its replacement (None: dropped), the ops of `after[id(op)]`
    follow it, and every operand and yield reads `renamed`'s value for a renamed id (the
    folds of passes.transpose and passes.unit_dims)."""
    ops: list[Op] = []
    for op in region.ops:
        for r in op.regions:
            rewrite(r, replaced, after, renamed)
        new = replaced.get(id(op), op)
        for o in ([new] if new is not None else []) + after.get(id(op), []):
            o.operands = [renamed.get(v.id, v) for v in o.operands]
            ops.append(o)
    region.ops = ops
    region.yields = [renamed.get(v.id, v) for v in region.yields]


def walk(region: Region) -> Iterator[Op]:
    for op in region.ops:
        yield op
        for r in op.regions:
            yield from walk(r)


def uses(kernel: Kernel) -> dict[int, int]:
    """How many times each value id is read (operands and yields; the coordinates of a
    load of pointers that a tensor map may copy, passes.pointer_tiles)."""
    counts: dict[int, int] = {}

    def visit(region: Region) -> None:
        for op in region.ops:
            for v in op.operands:
                counts[v.id] = counts.get(v.id, 0) + 1
            read = op.attrs.get("descriptor")
            for v in (read.corner + read.outer) if read is not None and read.pointers else ():
                counts[v.id] = counts.get(v.id, 0) + 1  # (a TMA copy's coordinates)
            for r in op.regions:
                visit(r)
        for v in region.yields:
            counts[v.id] = counts.get(v.id, 0) + 1

    visit(kernel.body)
    return counts


_SCALARS = frozenset({int, float, str, bool, type(None)})


def fingerprint(kernel: Kernel) -> tuple:
    """Everything the renderer may read, as plain data that compares by value: the kernel's
    fields, and every op — kind, operands, results with their types and layouts, attributes
    (plans, pipelines: field by field), regions.  Two equal
    fingerprints: the same IR, so `render` checks that rendering left it unchanged."""
    # a value, layout or plan is read in many places: each object is turned into data
    # once per fingerprint (keyed by identity: nothing changes while it is taken)
    seen: dict[int, Any] = {}
    names_of: dict[type, tuple[str, ...]] = {}

    def data(x: Any) -> Any:
        kind = type(x)
        if kind in _SCALARS:
            return repr(x)
        if isinstance(x, Value):
            key = id(x)
            if key not in seen:
                seen[key] = ("value", x.id, x.name, repr(x.type), data(x.info), data(x.layout))
            return seen[key]
        if isinstance(x, Op):
            return ("op", id(x))
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            key = id(x)
            if key not in seen:
                if kind not in names_of:
                    names_of[kind] = tuple(f.name for f in dataclasses.fields(x))
                seen[key] = (kind.__name__,) + tuple(
                    (name, data(getattr(x, name))) for name in names_of[kind])
            return seen[key]
        if isinstance(x, (list, tuple)):
            return tuple(data(v) for v in x)
        if isinstance(x, (set, frozenset)):
            return ("set",) + tuple(sorted(map(repr, x)))
        if isinstance(x, dict):
            return ("dict",) + tuple(sorted((repr(k), data(v)) for k, v in x.items()))
        return repr(x)

    def region(r: Region) -> tuple:
        return (data(r.args), data(r.yields), tuple(
            (op.kind, id(op), data(op.loc), data(op.operands), data(op.results), data(op.attrs),
             tuple(region(x) for x in op.regions)) for op in r.ops))

    fields = tuple((f.name, data(getattr(kernel, f.name))) for f in dataclasses.fields(kernel)
                   if f.name != "body")
    return fields + (region(kernel.body),)


def format_kernel(kernel: Kernel) -> str:
    """A textual dump of the IR, for debugging and TILECC_DUMP."""
    lines = [f"kernel {kernel.name}(" + ", ".join(
        f"{p.name}={p.constexpr!r}" if p.is_constexpr else repr(p.value) for p in kernel.params)
        + ")"]

    def emit(region: Region, depth: int) -> None:
        pad = "  " * depth
        for op in region.ops:
            res = ", ".join(map(repr, op.results))
            attrs = " ".join(f"{k}={v!r}" for k, v in op.attrs.items())
            lines.append(f"{pad}{res + ' = ' if res else ''}{op.kind}"
                         f"({', '.join(map(repr, op.operands))}) {attrs}".rstrip())
            for i, r in enumerate(op.regions):
                lines.append(f"{pad}  region {i} args({', '.join(map(repr, r.args))})")
                emit(r, depth + 2)
                lines.append(f"{pad}    yield {', '.join(map(repr, r.yields))}")

    emit(kernel.body, 1)
    return "\n".join(lines)


def verify(kernel: Kernel) -> None:
    """Structural checks: every operand defined before use and in scope, yields match.

    Raises AssertionError: a failure here is a transpiler bug, not a user error."""
    def check(region: Region, visible: set[int]) -> None:
        scope = set(visible) | {a.id for a in region.args}
        for op in region.ops:
            for v in op.operands:
                assert v.id in scope, f"{op.kind} at {op.loc} reads {v!r} out of scope"
            for r in op.regions:
                check(r, scope)
            if op.kind in ("for", "if"):
                for r in op.regions:
                    assert len(r.yields) == len(op.results), f"{op.kind} yields mismatch"
                    for y, res in zip(r.yields, op.results):
                        assert y.type == res.type, f"{op.kind} at {op.loc}: {y!r} vs {res!r}"
            scope |= {r.id for r in op.results}
        for v in region.yields:
            assert v.id in scope, f"yield of {v!r} out of scope"

    check(kernel.body, {p.value.id for p in kernel.params if p.value is not None})
