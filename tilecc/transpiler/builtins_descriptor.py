"""Tensor descriptors made in the kernel: `tl.make_tensor_descriptor(base, shape, strides,
block_shape, padding_option="zero")`, `desc.load(offsets)`, `desc.store(offsets, value)`,
`desc.atomic_add / _min / _max / _and / _or / _xor(offsets, value)` (also as
`tl.load_tensor_descriptor` / `tl.store_tensor_descriptor`).

A descriptor is a trace-time object, as a block pointer is: its block is read and written
through the block-pointer lowering (`builtins_block_ptr`) with every dimension bounds-
checked, which is what a descriptor means — a load outside the tensor reads the padding
(zero, or NaN), a store or atomic outside it is dropped.  That is plain loads and stores on
every target (Triton uses TMA on sm_90 for the same results).
A load through a host-side descriptor (a kernel argument), or through one made in the
kernel from arguments alone (`make_tensor_descriptor(a_ptr, [M, K], [K, 1], ...)`, whose
tensor map the launch can encode just as well), is marked with where it reads
(`ir.DescriptorRead`): on sm_90, where it feeds a warpgroup product in a pipelined loop,
the copy engine moves the block (TMA, `passes.pipeline`) with the same results.
Triton's checks at creation are made the same way: 1 to 5 dims, a contiguous last dim
(stride 1) and at least 16 bytes of it in the block, shape int32 and strides int64.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tilecc.language import dtypes as D
from tilecc.transpiler import builtins_block_ptr as BP
from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import bind, constant, handles, kernel_value
from tilecc.transpiler.builtins_blocks import atomic_rmw, expand_dims
from tilecc.transpiler.ir import DescriptorRead, Type, Value
from tilecc.transpiler.semantic import Const


@dataclass(frozen=True, eq=False)
class TensorDescriptor:
    base: Value  # a scalar pointer
    shape: tuple  # int32 scalars (Value or Const), one per dim
    strides: tuple  # int64 scalars
    block_shape: tuple[int, ...]
    padding: str  # "zero" or "nan"
    tile: Value  # the block's element offsets from its corner (as a block pointer's)
    host: str | None = None  # a kernel argument (a host-side descriptor): its parameter
    # made in the kernel from arguments alone: base, shape and strides as parameter names
    # and ints (`argument_parts`), from which the launch can encode its tensor map
    args: tuple | None = None

    @property
    def dtype(self) -> D.dtype:
        return self.base.dtype.element_ty

    def at(self, b, offsets: tuple) -> BP.BlockPointer:
        """The block pointer to the block at `offsets`."""
        wide = tuple(S.cast(b, s, D.int64) for s in self.shape)
        rank = len(self.block_shape)
        return BP.BlockPointer(self.base, wide, self.strides, offsets, self.block_shape,
                               tuple(reversed(range(rank))), self.tile)


def unwrap(x: Any) -> Any:
    return x.value if isinstance(x, Const) and isinstance(x.value, TensorDescriptor) else x


# what `desc.<attr>` gives, and the methods a descriptor has
def attribute(desc: TensorDescriptor, attr: str) -> Const | None:
    if attr == "block_shape":
        return Const(desc.block_shape)
    if attr == "dtype":
        return Const(desc.dtype)
    if attr == "block_type":
        return Const(D.block_type(desc.dtype, desc.block_shape))
    if attr in ("shape", "strides"):
        return Const(getattr(desc, attr))
    return None


METHODS = ("load", "store", "atomic_add", "atomic_min", "atomic_max", "atomic_and",
           "atomic_or", "atomic_xor", "gather", "scatter")


@handles("make_tensor_descriptor")
def _make(tracer, name, base, shape, strides, block_shape, padding_option):
    b = tracer.b
    base = BP.unwrap(base)
    if not isinstance(base, Value) or not base.dtype.is_ptr() or base.type.is_block:
        raise TypeError("tl.make_tensor_descriptor: `base` must be a pointer (not a block of "
                        "pointers)")
    shape_ = BP.items(shape, "shape")
    strides_ = BP.items(strides, "strides")
    block = BP.dims(block_shape, "block_shape")
    ndim = len(shape_)
    if not 1 <= ndim <= 5:
        raise ValueError(f"Expected 1 <= ndim <= 5 but got {ndim} dimensions")
    if len(strides_) != ndim:
        raise ValueError(f"Expected {ndim} strides but got {len(strides_)}")
    if len(block) != ndim:
        raise ValueError(f"Expected block_shape to have {ndim} dimensions but got {len(block)}")
    last = strides_[-1]
    if not isinstance(last, Const) or last.value != 1:
        got = last.value if isinstance(last, Const) else "a run-time value"
        raise ValueError(f"Tensor descriptor last dim must be 1 but got {got}")
    for n in block:
        if n <= 0 or n & (n - 1):
            raise ValueError(f"tl.make_tensor_descriptor: block_shape {list(block)} must be "
                             "powers of 2")
    shape_ = tuple(_int32(b, kernel_value(tracer, x, "shape")) for x in shape_)
    strides_ = tuple(BP.scalar(b, kernel_value(tracer, x, "strides"), True, "strides")
                     for x in strides_)
    desc = _checked(tracer, base, shape_, strides_, block,
                    constant(padding_option, "padding_option"))
    return replace(desc, args=argument_parts(tracer.kernel, desc))


def argument_parts(kernel, desc: TensorDescriptor) -> tuple | None:
    """The descriptor's base, shape and strides as kernel parameter names and ints, where
    each is an argument as it was passed (or widened) or a constant, and the base is
    specialized 16-byte aligned (the copy engine's need).  None otherwise (a base computed
    in the kernel, say).  Strides but the last must be multiples of 16 bytes, as Triton
    requires of any descriptor: the launch of a kernel that copies it checks them."""
    params = {p.value.id: p for p in kernel.params if p.value is not None}

    def param(v: Any):
        if isinstance(v, Value) and v.owner is not None and v.owner.kind == "cast" and \
                v.dtype.is_int() and not v.owner.attrs.get("bitcast"):
            src = v.owner.operands[0]  # an integer argument widened: the same number
            if src.dtype.is_int() and src.dtype.bits <= v.dtype.bits:
                v = src
        return params.get(v.id) if isinstance(v, Value) else None

    base = param(desc.base)
    if base is None or not base.divisible_by_16:
        return None
    parts: list = [base.name]
    for x in desc.shape + desc.strides:
        if isinstance(x, Const):
            parts.append(x.value)
        elif (p := param(x)) is not None:
            parts.append(p.name)
        else:
            return None
    return tuple(parts)


def from_arguments(tracer, parts: list, spec, stride_params: list) -> TensorDescriptor:
    """The descriptor a kernel receives as an argument (a host-side TensorDescriptor),
    from the values it is passed as: base pointer, shape (i32), strides (i64, the last
    compiled in as 1).  Its strides but the last are multiples of 16 bytes (the launch
    checks it, as Triton does): said to the alignment analysis, so that rows vectorize."""
    ndim = spec.ndim
    base, shape, strides = parts[0], tuple(parts[1:1 + ndim]), tuple(parts[1 + ndim:])
    size = max(base.dtype.element_ty.bits // 8, 1)
    for p in stride_params[:ndim - 1]:
        p.divisor = max(16 // size, 1)
    return _checked(tracer, base, shape, strides, spec.block_shape, spec.padding, spec.param)


def _checked(tracer, base: Value, shape: tuple, strides: tuple, block: tuple,
             padding: Any, host: str | None = None) -> TensorDescriptor:
    """Triton's checks that need the element type, and the descriptor."""
    b = tracer.b
    elem = base.dtype.element_ty
    size = max(elem.bits // 8, 1)
    if block[-1] * size < 16:
        raise ValueError("Descriptor block shape must have at least 16 bytes in the last "
                         f"dimension, but got {block[-1]} * {size} = {block[-1] * size} bytes")
    if padding not in ("zero", "nan"):
        raise ValueError(f"padding option {padding!r} is not supported (\"zero\" or \"nan\")")
    if padding == "nan" and not elem.is_floating():
        raise ValueError("Padding option `nan` is not supported for integer blocks")
    if elem == D.int1:  # bool tensors are read as int8 bytes, as through block pointers
        base = S.cast(b, base, D.pointer_type(D.int8))
    return TensorDescriptor(base, shape, strides, block, padding,
                            BP.block_tile(b, block, strides), host)


def _int32(b, x: Any) -> Value | Const:
    if isinstance(x, Const):
        if isinstance(x.value, bool) or not isinstance(x.value, int) or \
                not -2 ** 31 <= x.value < 2 ** 31:
            raise ValueError(f"tensor descriptor shapes are 32-bit integers, got {x.value!r}")
        return x
    if x.type.is_block or not x.dtype.is_int():
        raise TypeError(f"shape must be integer scalars, got {x.type}")
    return S.cast(b, x, D.int32)


def _offsets(tracer, desc: TensorDescriptor, offsets: Any) -> tuple:
    got = tuple(BP.scalar(tracer.b, kernel_value(tracer, x, "offsets"), False, "offsets")
                for x in BP.items(offsets, "offsets"))
    if len(got) != len(desc.block_shape):
        raise ValueError(f"expected {len(desc.block_shape)} offsets, but got {len(got)}")
    return tuple(S.to_value(tracer.b, S.cast(tracer.b, o, D.int32)) if isinstance(o, Const)
                 else o for o in got)


def _all_dims(desc: TensorDescriptor) -> Const:
    return Const(tuple(range(len(desc.block_shape))))


def _value(tracer, desc: TensorDescriptor, value: Any) -> Value:
    b = tracer.b
    v = kernel_value(tracer, value, "value")
    v = S.constant(b, v.value, desc.dtype) if isinstance(v, Const) else v
    if tuple(v.type.shape) != desc.block_shape:
        raise ValueError(f"the value's shape {list(v.type.shape)} does not match the "
                         f"descriptor's block shape {list(desc.block_shape)}")
    return S.to_value(b, S.cast(b, v, desc.dtype))  # as Triton: cast to the element type


def call(tracer, desc: TensorDescriptor, name: str, args: list, kwargs: dict) -> Any:
    """`desc.<name>(...)`; TypeError / ValueError as Triton raises them."""
    if name in ("gather", "scatter"):
        return _rows(tracer, desc, name, args, kwargs)
    if name == "load":
        bound = bind(lambda offsets: None, args, kwargs, "desc.load()")
        offsets = _offsets(tracer, desc, bound.arguments["offsets"])
        corner: list = []
        bp = desc.at(tracer.b, offsets)
        x = BP.load(tracer, bp, Const(None), Const(None), _all_dims(desc), Const(desc.padding),
                    corner)
        if desc.host is not None or desc.args is not None:  # a tensor map can copy it
            x.owner.attrs["descriptor"] = DescriptorRead(  # (passes.pipeline decides)
                desc.host or desc.args[0], tuple(corner), desc.args,
                bounds=tuple(map(BP.bound, bp.shape)))
        return x
    if name not in METHODS:
        raise AttributeError(f"a tensor descriptor has no method `{name}` (it has "
                             f"{', '.join(METHODS)})")
    bound = bind(lambda offsets, value: None, args, kwargs, f"desc.{name}()")
    offsets = _offsets(tracer, desc, bound.arguments["offsets"])
    v = _value(tracer, desc, bound.arguments["value"])
    bp = desc.at(tracer.b, offsets)
    if name == "store":
        corner: list = []
        op = BP.store(tracer, bp, v, Const(None), _all_dims(desc), corner)
        if desc.host is not None or desc.args is not None:  # (passes.settle decides)
            op.attrs["descriptor"] = DescriptorRead(desc.host or desc.args[0], tuple(corner),
                                                    desc.args,
                                                    bounds=tuple(map(BP.bound, bp.shape)))
        return Const(None)
    allowed = _ATOMIC_TYPES["add" if name == "atomic_add" else
                            "min_max" if name in ("atomic_min", "atomic_max") else "bits"]
    if desc.dtype.short not in allowed:
        raise TypeError(f"desc.{name} does not support {desc.dtype!r} (supported: "
                        f"{', '.join(allowed)})")
    ptrs, mask = BP.pointers_and_mask(tracer.b, bp, list(range(len(desc.block_shape))))
    atomic_rmw(tracer, name, ptrs, v, mask if mask is not None else Const(None),
               Const("relaxed"), Const("gpu"))
    return Const(None)


def _rows(tracer, desc: TensorDescriptor, name: str, args: list, kwargs: dict) -> Any:
    """desc.gather(x_offsets, y_offset): the rows x_offsets[i] of a 2-D descriptor, each
    from column y_offset on for block_shape[1] columns ([len(x_offsets), block_shape[1]]);
    desc.scatter(value, x_offsets, y_offset) writes them.  Every element is bounds-checked
    as a descriptor's are: outside the tensor a gather reads the padding, a scatter
    writes nothing.  Triton's checks: a 2-D descriptor with 1-row blocks, a 1-D block of
    at least 8 row offsets, at least 8 columns of 32-bit elements (16 of 16-bit...)."""
    b = tracer.b
    if name == "gather":
        bound = bind(lambda x_offsets, y_offset: None, args, kwargs, "desc.gather()")
    else:
        bound = bind(lambda value, x_offsets, y_offset: None, args, kwargs, "desc.scatter()")
    if len(desc.block_shape) != 2:
        raise ValueError(f"descriptor must be 2D, but got {list(desc.block_shape)}")
    if desc.block_shape[0] != 1:
        raise ValueError(f"descriptor block must have 1 row, but got {list(desc.block_shape)}")
    rows = kernel_value(tracer, bound.arguments["x_offsets"], "x_offsets")
    if isinstance(rows, Const) or len(rows.type.shape) != 1 or not rows.dtype.is_int():
        raise ValueError("x offsets must be a 1-D block of integers")
    if rows.type.shape[0] < 8:
        raise ValueError(f"descriptor {name} must have at least 8 rows, but got "
                         f"{list(rows.type.shape)}")
    cols = desc.block_shape[1]
    min_cols = 32 // desc.dtype.bits * 8
    if cols < min_cols:
        raise ValueError(f"descriptor {name} of {desc.dtype!r} must have at least {min_cols} "
                         f"columns, but got {cols}")
    y = BP.scalar(b, kernel_value(tracer, bound.arguments["y_offset"], "y_offset"), False,
                  "y_offset")
    shape = (rows.type.shape[0], cols)
    r = expand_dims(b, S.cast(b, rows, D.int64), 1)  # [R, 1]
    c = S.binary(b, "add", expand_dims(b, b.emit("arange", [], Type(D.int32, (cols,)),
                                                 start=0, end=cols), 0),
                 S.cast(b, y, D.int64))  # [1, C], int64
    ptrs = S.binary(b, "add", S.binary(b, "add", desc.base,
                                       S.binary(b, "mul", r, desc.strides[0])), c)
    inside = S.binary(b, "and", S.binary(b, "and", S.compare(b, "ge", r, Const(0)),
                                         S.compare(b, "lt", r, S.cast(b, desc.shape[0],
                                                                      D.int64))),
                      S.binary(b, "and", S.compare(b, "ge", c, Const(0)),
                               S.compare(b, "lt", c, S.cast(b, desc.shape[1], D.int64))))
    ptrs, inside = S.splat(b, ptrs, shape), S.splat(b, inside, shape)
    if name == "gather":
        fill = S.constant(b, float("nan") if desc.padding == "nan" else 0, desc.dtype)
        return b.emit("load", [ptrs, inside, S.splat(b, fill, shape)],
                      ptrs.type.with_dtype(desc.dtype))
    v = kernel_value(tracer, bound.arguments["value"], "value")
    v = S.constant(b, v.value, desc.dtype) if isinstance(v, Const) else v
    if tuple(v.type.shape) != shape:
        raise ValueError(f"the value's shape {list(v.type.shape)} does not match the "
                         f"scattered block {list(shape)}")
    b.emit("store", [ptrs, S.to_value(b, S.cast(b, v, desc.dtype)), inside], None)
    return Const(None)


# Triton's element types for descriptor reductions (semantic.descriptor_atomic_*)
_ATOMIC_TYPES = {"add": ("u32", "i32", "u64", "fp32", "fp16", "bf16"),
                 "min_max": ("u32", "i32", "u64", "i64", "fp16", "bf16"),
                 "bits": ("u32", "i32", "u64", "i64")}


@handles("load_tensor_descriptor")
def _load_fn(tracer, name, desc, offsets):
    d = _descriptor(desc, name)
    return call(tracer, d, "load", [offsets], {})


@handles("store_tensor_descriptor")
def _store_fn(tracer, name, desc, offsets, value):
    d = _descriptor(desc, name)
    return call(tracer, d, "store", [offsets, value], {})


def _descriptor(x: Any, name: str) -> TensorDescriptor:
    d = unwrap(x)
    if not isinstance(d, TensorDescriptor):
        raise TypeError(f"tl.{name} takes a tensor descriptor (from tl.make_tensor_descriptor)")
    return d
