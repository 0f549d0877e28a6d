"""What a specialization is made of: declared parameters and their `ArgSpec`s.

Kept apart from the frontend (and its libcst parser) so that the launch path and the disk
cache can specialize and compute keys without importing the transpiler.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from tilecc.language import dtypes as D


@dataclass(frozen=True)
class ParamDecl:
    name: str
    is_constexpr: bool
    default: Any = inspect.Parameter.empty


@dataclass(frozen=True)
class DescriptorSpec:
    """A host-side tensor descriptor argument, as the kernel is specialized on it: the
    parameter it is passed as, its block shape and padding (its base pointer, shape and
    strides are run-time values, the ArgSpecs that follow the one carrying this)."""

    param: str
    block_shape: tuple[int, ...]
    padding: str  # "zero" or "nan"

    @property
    def ndim(self) -> int:
        return len(self.block_shape)


def rows_slab(rows_split: tuple[tuple[int, ...], ...] | None) -> int:
    """The rows one step of a split map's outermost row dim spans — the largest of its
    row strides (TensorMap.rows_split); 1 for a map that does not split its rows."""
    return max(d[1] for d in rows_split) if rows_split else 1


def row_copies(dim: tuple[int, ...]) -> int:
    """How many boxes along a dim of a split map's rows one block takes: 1, or the third
    entry of a dim whose boxes are copies of their own (`(extent, stride, copies)`: the
    block's rows need one dim more than the copy engine has, so that dim is stepped by
    the copies, `extent` apart)."""
    return dim[2] if len(dim) > 2 else 1


@dataclass(frozen=True)
class TensorMap:
    """A tensor map a kernel takes after its parameters, for the copy engine (TMA, sm_90)
    to move blocks of a tensor descriptor: the box one copy moves (the descriptor's dims,
    outermost first) and the swizzle it writes shared memory with.  The launch encodes it
    (cuTensorMapEncodeTiled) from the descriptor's base, shape and strides: those of the
    host-side descriptor `param`, or, for one made in the kernel from arguments alone
    (`args`: base, shape and strides, each a parameter name or an int), those arguments
    (`param` names its base pointer).  Outside the tensor a copy reads zeros, or NaN for
    `padding` "nan"; `store`: the copies write the tensor (passes.settle.TmaStore).
    `rows_split`: the map views the rows as several dims, (extent, row stride) each in the
    order a box fills shared memory (passes.pipeline.a_rows_split); the one of the largest
    stride spans the tensor's whole slabs of rows (the rest: the descriptor's 8-row map); a
    dim may take several boxes of a block, each a copy of its own (`row_copies`)."""

    param: str
    dtype: str  # the element type's name (D.dtype.short)
    box: tuple[int, ...]
    swizzle: int  # bytes: 64 or 128
    padding: str  # "zero" or "nan"
    args: tuple | None = None
    store: bool = False
    rows_split: tuple[tuple[int, ...], ...] | None = None
    # a map of the blocks of loads of pointers (passes.pointer_tiles): `args` its base,
    # dims and strides; `requires` (name, least value) of the int arguments its copies'
    # coordinates divide by or add
    requires: tuple = ()
    pointers: bool = False

    @property
    def slab(self) -> int:
        """The rows one step of a split map's outermost row dim spans (1: not split)."""
        return rows_slab(self.rows_split)

    def encoded_dims(self, shape, strides) -> tuple[list[int], list[int], list[int]]:
        """The map's dims, strides (in elements) and box, innermost first, for a tensor of
        this shape and these strides (outermost first, as the descriptor holds them)."""
        if not self.rows_split:
            return list(reversed(shape)), list(reversed(strides[:-1])), list(reversed(self.box))
        slab = self.slab  # (the rows past the last whole slab are not in this map)
        outer = len(self.box) - 2  # (dims past the block's: box 1, after the rows' dims)
        dims = [shape[-1]] + [shape[-2] // slab if d[1] == slab else d[0] * row_copies(d)
                              for d in self.rows_split] + list(reversed(shape[:-2]))
        return (dims, [d[1] * strides[-2] for d in self.rows_split] +
                list(reversed(strides[:-2])),
                [self.box[-1]] + [d[0] for d in self.rows_split] + [1] * outer)

    @property
    def key(self) -> tuple:
        """The descriptor and whether the map splits its rows, as a kernel's tensor maps
        are told apart (TmaCopy.key): a descriptor copied as A's rows in one box has two."""
        return self.param, self.args, self.rows_split is not None

    @property
    def what(self) -> str:
        """The descriptor, as messages name it."""
        return (f"argument `{self.param}` (a TensorDescriptor)" if self.args is None else
                f"the blocks loaded from `{self.param}`" if self.pointers else
                f"the tensor descriptor over `{self.param}`")


@dataclass(frozen=True)
class ArgSpec:
    """How one parameter is specialized: a constexpr value, or a run-time type.

    A tensor descriptor parameter is passed as 1 + 2 * ndim run-time values: its base
    pointer (the ArgSpec with `descriptor` set), then its shape (i32) and its strides
    (i64, the last one specialized to 1), each an ArgSpec of its own."""

    name: str
    constexpr: Any = None
    is_constexpr: bool = False
    type: D.dtype | D.pointer_type | None = None
    divisible_by_16: bool = False
    equals_one: bool = False
    # ints not a multiple of 16: 8 where the value is a multiple of 8 (`i32:8`), else 1.
    # Triton keys 16 only; 8 is what 16-byte vectors of 16-bit elements need of a row
    # stride or a length (1000, 4104 ...), which would otherwise load 2 bytes at a time
    divisor: int = 1
    descriptor: DescriptorSpec | None = None
