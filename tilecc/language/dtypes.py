"""Element types of the kernel language, and Triton's rules for combining them.

A `dtype` is a value object shared by the language (`tl.float32`), the tile IR and both
back ends.  The promotion functions here are the single statement of Triton's typing
rules; the frontend calls them and the interpreter trusts their result.
"""

from __future__ import annotations

import enum
import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

# NumPy is imported where a conversion needs it: `import tilecc` does not load it.
if TYPE_CHECKING:
    import numpy as np


# The module a dtype's repr names, so that `eval(repr(tl.int8))` gives the dtype back:
# "tilecc.language", or "triton.language" while `import triton` resolves to tilecc.
REPR_MODULE = ["tilecc.language"]


class _Kind(str):
    """A dtype's `kind`: the string "int", "uint", "float" or "bool", which called (as
    Triton's `dtype.kind()`) gives Triton's `dtype.KIND` member."""

    def __call__(self) -> "dtype.KIND":
        return {"bool": dtype.KIND.BOOLEAN, "float": dtype.KIND.FLOATING}.get(
            str(self), dtype.KIND.INTEGRAL)


@dataclass(frozen=True, init=False)
class dtype:
    """A scalar element type: `kind` is "int", "uint", "float" or "bool".

    `dtype("fp32")`, `dtype("int32")`... by Triton's names; the language's own are made
    with tilecc's short name, kind and bit width."""

    short: str  # tilecc's short name: "fp32", "i32", "u8", "i1", ... (signatures, C tables)
    kind: str
    bits: int

    # Triton's tables of its type names, and its enums of kinds and signedness
    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16",
                "fp32", "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
    OTHER_TYPES = ["void"]

    class SIGNEDNESS(enum.Enum):
        SIGNED = 0
        UNSIGNED = 1

    class KIND(enum.Enum):
        BOOLEAN = 0
        INTEGRAL = 1
        FLOATING = 2

    def __init__(self, name: str, _kind: str | None = None, _bits: int | None = None):
        if _kind is None:  # Triton's spelling: dtype("fp32"), dtype("int32")
            known = BY_TRITON_NAME.get(name)
            if known is None:
                raise ValueError(f"tl.dtype: {name!r} is not a type tilecc has (one of "
                                 f"{', '.join(sorted(BY_TRITON_NAME))})")
            name, _kind, _bits = known.short, known.kind, known.bits
        object.__setattr__(self, "short", name)
        object.__setattr__(self, "kind", _Kind(_kind))
        object.__setattr__(self, "bits", _bits)

    def __repr__(self) -> str:  # an expression that evaluates to the dtype, as Triton's
        return f"{REPR_MODULE[0]}.{LONG_NAMES.get(self.short, self.short)}"

    @property
    def name(self) -> str:
        """Triton's name: "int32", "uint16", "int1", "fp32", "bf16", "fp8e4nv" (what
        Triton's helpers pass to `getattr(numpy, ...)`); `short` is tilecc's spelling."""
        return TRITON_NAMES[self.short]

    def __str__(self) -> str:
        return self.name

    # --- Triton's dtype attributes, for kernels (and helpers) that read them ---------
    @property
    def int_bitwidth(self) -> int:
        if self.kind == "float":
            raise AttributeError(f"{self!r} has no attribute 'int_bitwidth'")
        return self.bits

    @property
    def fp_mantissa_width(self) -> int:
        if self.kind != "float":
            raise AttributeError(f"{self!r} has no attribute 'fp_mantissa_width'")
        return self.mantissa_bits

    @property
    def exponent_bias(self) -> int:
        if self.kind != "float":
            raise AttributeError(f"{self!r} has no attribute 'exponent_bias'")
        return {"fp16": 15, "bf16": 127, "fp32": 127, "fp64": 1023, "fp8e4nv": 7,
                "fp8e4b15": 15, "fp8e4b8": 8, "fp8e5": 15, "fp8e5b16": 16}[self.short]

    @property
    def scalar(self) -> "dtype":
        return self

    def is_standard_floating(self) -> bool:
        return self.kind == "float"

    @staticmethod
    def is_block() -> bool:
        return False

    @staticmethod
    def is_const() -> bool:
        return False

    @staticmethod
    def is_void() -> bool:
        return False

    def codegen_name(self) -> str:
        return LONG_NAMES[self.short]

    def get_int_max_value(self) -> int:
        if self.kind == "float":
            raise TypeError(f"{self!r} is not an integer type")
        return self.max

    def get_int_min_value(self) -> int:
        if self.kind == "float":
            raise TypeError(f"{self!r} is not an integer type")
        return self.min

    def with_element_ty(self, element_ty: "dtype") -> "dtype":
        return element_ty

    @staticmethod
    def is_dtype(type_str: str) -> bool:
        return type_str in BY_TRITON_NAME

    # Predicates named as in Triton, so helper code reads the same.
    def is_floating(self) -> bool:
        return self.kind == "float"

    def is_int(self) -> bool:
        return self.kind in ("int", "uint", "bool")

    def is_int_signed(self) -> bool:
        return self.kind == "int"

    def is_int_unsigned(self) -> bool:
        return self.kind == "uint"

    def is_bool(self) -> bool:
        return self.kind == "bool"

    @staticmethod
    def is_ptr() -> bool:
        return False

    def is_fp16(self) -> bool:
        return self.short == "fp16"

    def is_bf16(self) -> bool:
        return self.short == "bf16"

    def is_fp32(self) -> bool:
        return self.short == "fp32"

    def is_fp64(self) -> bool:
        return self.short == "fp64"

    def is_fp8(self) -> bool:
        return self.short in FLOAT8_FORMATS

    @property
    def int_signedness(self) -> "dtype.SIGNEDNESS":
        if self.kind == "float":
            raise AttributeError(f"{self!r} has no attribute 'int_signedness'")
        return dtype.SIGNEDNESS.SIGNED if self.kind == "int" else dtype.SIGNEDNESS.UNSIGNED

    @property
    def cache_key_part(self) -> str:
        return str(self)

    def mangle(self) -> str:
        """Triton's short spelling in mangled names: i32, u8, u1, fp16, bf16..."""
        if self.kind == "float":
            return str(self)
        return f"{'i' if self.kind == 'int' else 'u'}{self.bits}"

    @property
    def fp8_format(self) -> Float8Format | None:
        """The encoding of an fp8 type (None for every other type)."""
        return FLOAT8_FORMATS.get(self.short)

    @property
    def primitive_bitwidth(self) -> int:
        return self.bits

    @property
    def itemsize(self) -> int:
        return max(1, self.bits // 8)

    @property
    def mantissa_bits(self) -> int:
        if self.is_fp8():
            return FLOAT8_FORMATS[self.short].mantissa
        return {"fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52}.get(self.short, 0)

    @property
    def signed(self) -> bool:
        """Triton counts int1 among the unsigned integers (it compares and divides as such)."""
        return self.kind == "int"

    @property
    def kind_rank(self) -> int:
        """bool < integer < floating: the order Triton uses for literal operands."""
        return {"bool": 0, "int": 1, "uint": 1, "float": 2}[self.kind]

    def to_numpy(self) -> np.dtype:
        import numpy as np

        if self.short == "bf16" or self.is_fp8():
            import ml_dtypes

            if self.short == "fp8e4b15":
                raise TypeError("tl.float8e4b15 has no NumPy (ml_dtypes) counterpart")
            return np.dtype(getattr(ml_dtypes, ML_DTYPES_NAMES[self.short]))
        return np.dtype(NUMPY_NAMES[self.short])

    @property
    def min(self) -> int:
        return 0 if self.kind in ("uint", "bool") else -(1 << (self.bits - 1))

    @property
    def max(self) -> int:
        if self.kind == "bool":
            return 1
        return (1 << self.bits) - 1 if self.kind == "uint" else (1 << (self.bits - 1)) - 1


def _is_named(triton_name: str):
    def predicate(self) -> bool:
        return TRITON_NAMES[self.short] == triton_name
    predicate.__name__ = f"is_{triton_name}"
    return predicate


for _n in ("int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
    setattr(dtype, f"is_{_n}", _is_named(_n))  # is_int8() ... as in Triton


def _is_fp8(short: str):
    def predicate(self) -> bool:
        return self.short == short
    predicate.__name__ = f"is_{short}"
    return predicate


for _n in ("fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16"):
    setattr(dtype, f"is_{_n}", _is_fp8(_n))  # is_fp8e4nv() ...


@dataclass(frozen=True, init=False)
class pointer_type:
    """A pointer to global memory holding elements of `element_ty` (Triton's other
    address spaces do not exist in tilecc).  A `const` pointer (a parameter annotated
    `tl.const`, and the pointers computed from it) points to data the kernel only reads:
    storing through it is a compile error, and it is a type of its own (as in Triton)."""

    element_ty: dtype
    const: bool = False

    short = "ptr"
    kind = "ptr"
    bits = 64

    def __init__(self, element_ty, address_space=1, const=False):
        if address_space != 1:
            raise ValueError(f"tl.pointer_type: address space {address_space} is not "
                             "supported by tilecc (pointers are to global memory: 1)")
        object.__setattr__(self, "element_ty", element_ty)
        object.__setattr__(self, "const", bool(const))

    def __repr__(self) -> str:
        const = ", const=True" if self.const else ""
        return f"{REPR_MODULE[0]}.pointer_type({self.element_ty!r}{const})"

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:  # Triton's: "pointer<fp32>", "const_pointer<fp32>"
        return f"{'const_' if self.const else ''}pointer<{self.element_ty}>"

    @property
    def scalar(self) -> "pointer_type":
        return self

    @property
    def address_space(self) -> int:
        return 1

    def is_block(self) -> bool:
        return False

    def is_const(self) -> bool:
        return self.const

    def is_ptr(self) -> bool:
        return True

    def is_floating(self) -> bool:
        return False

    def is_int(self) -> bool:
        return False

    def is_bool(self) -> bool:
        return False

    @property
    def itemsize(self) -> int:
        return 8


@dataclass(frozen=True)
class Float8Format:
    """How an 8-bit float encodes values: 1 sign bit, `exponent` and `mantissa` bits, the
    exponent `bias`, and its special values — "ieee" (e5m2: infinities and NaNs at the
    largest exponent, as IEEE 754), "fn" (e4m3fn: no infinities, S.1111.111 is NaN) or
    "fnuz" (no infinities, no negative zero: 0x80 is the only NaN)."""

    exponent: int
    mantissa: int
    bias: int
    specials: str

    @property
    def max_code(self) -> int:
        """The bit pattern of the largest finite value."""
        top = (1 << (self.exponent + self.mantissa)) - 1
        return {"ieee": top - (1 << self.mantissa), "fn": top - 1, "fnuz": top}[self.specials]


# Triton's fp8 types (Triton's short names), as their hardware formats encode them.
# fp8e4b15 is Triton's own software format (no NumPy counterpart, deprecated on Hopper).
FLOAT8_FORMATS = {
    "fp8e4nv": Float8Format(4, 3, 7, "fn"), "fp8e5": Float8Format(5, 2, 15, "ieee"),
    "fp8e4b15": Float8Format(4, 3, 15, "fn"), "fp8e4b8": Float8Format(4, 3, 8, "fnuz"),
    "fp8e5b16": Float8Format(5, 2, 16, "fnuz"),
}
ML_DTYPES_NAMES = {"bf16": "bfloat16", "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2",
                   "fp8e4b8": "float8_e4m3fnuz", "fp8e5b16": "float8_e5m2fnuz"}


class block_type:
    """The type of a block (`x.type` in a kernel): its element type and shape.  Element
    predicates (`x.type.is_floating()`) read the element type, as in Triton."""

    element_ty: dtype | pointer_type
    shape: tuple

    def __init__(self, element_ty, shape) -> None:
        object.__setattr__(self, "element_ty", element_ty)
        object.__setattr__(self, "shape", tuple(int(s) for s in shape))

    def __eq__(self, other) -> bool:  # as Triton's: the same element type and shape
        return isinstance(other, block_type) and \
            (self.element_ty, self.shape) == (other.element_ty, other.shape)

    def __hash__(self) -> int:
        return hash((self.element_ty, self.shape))

    def __str__(self) -> str:
        return f"<{list(map(str, self.shape))}, {self.element_ty}>"

    def __repr__(self) -> str:
        return f"{REPR_MODULE[0]}.block_type({self.element_ty!r}, {list(self.shape)})"

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * self.element_ty.bits // 8

    @property
    def scalar(self):
        return self.element_ty

    def is_block(self) -> bool:
        return True

    def get_block_shapes(self) -> tuple:
        return self.shape

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self.element_ty, attr)


int1 = dtype("i1", "bool", 1)
int8 = dtype("i8", "int", 8)
int16 = dtype("i16", "int", 16)
int32 = dtype("i32", "int", 32)
int64 = dtype("i64", "int", 64)
uint8 = dtype("u8", "uint", 8)
uint16 = dtype("u16", "uint", 16)
uint32 = dtype("u32", "uint", 32)
uint64 = dtype("u64", "uint", 64)
float16 = dtype("fp16", "float", 16)
bfloat16 = dtype("bf16", "float", 16)
float32 = dtype("fp32", "float", 32)
float64 = dtype("fp64", "float", 64)
float8e4nv = dtype("fp8e4nv", "float", 8)
float8e5 = dtype("fp8e5", "float", 8)
float8e4b15 = dtype("fp8e4b15", "float", 8)
float8e4b8 = dtype("fp8e4b8", "float", 8)
float8e5b16 = dtype("fp8e5b16", "float", 8)
pi32_t = pointer_type(int32)
FLOAT8_DTYPES = (float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16)

ALL_DTYPES = (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float16, bfloat16, float32, float64) + FLOAT8_DTYPES
BY_NAME = {d.short: d for d in ALL_DTYPES}
LONG_NAMES = {"i1": "int1", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
              "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
              "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
              "fp8e4nv": "float8e4nv", "fp8e5": "float8e5", "fp8e4b15": "float8e4b15",
              "fp8e4b8": "float8e4b8", "fp8e5b16": "float8e5b16"}
BY_LONG_NAME = {long: BY_NAME[short] for short, long in LONG_NAMES.items()}
# Triton's `dtype.name` (and str): "int32", "uint8", "int1", but "fp32", "bf16", "fp8e4nv"
TRITON_NAMES = {**LONG_NAMES, **{f: f for f in ("fp16", "bf16", "fp32", "fp64", *FLOAT8_FORMATS)}}
BY_TRITON_NAME = {triton: BY_NAME[short] for short, triton in TRITON_NAMES.items()}
BY_TRITON_NAME.update({LONG_NAMES[short]: BY_NAME[short] for short in FLOAT8_FORMATS})  # "float8e5"
NUMPY_NAMES = {"i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
               "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
               "fp16": "float16", "fp32": "float32", "fp64": "float64"}


def get_int_dtype(bitwidth: int, signed: bool) -> dtype:
    """The integer type of `bitwidth` bits (1, 8, 16, 32, 64), signed or not."""
    if bitwidth == 1:
        return int1
    found = BY_NAME.get(f"{'i' if signed else 'u'}{bitwidth}")
    if found is None:
        raise ValueError(f"no {'signed' if signed else 'unsigned'} integer of {bitwidth} bits")
    return found


def from_numpy(np_dtype) -> dtype:
    """The tilecc dtype of a NumPy (or ml_dtypes) dtype; KeyError if it has none."""
    import numpy as np

    np_dtype = np.dtype(np_dtype)
    for short, ml_name in ML_DTYPES_NAMES.items():  # ml_dtypes' bfloat16 and float8 types
        if np_dtype.name == ml_name:
            return BY_NAME[short]
    for short, np_name in NUMPY_NAMES.items():
        if np_dtype == np.dtype(np_name):
            return BY_NAME[short]
    raise KeyError(np_dtype)


def literal_dtype(value) -> dtype:
    """How Triton types a Python literal: bool → i1; int → the first of i32, u32, i64, u64
    that holds it; float → fp32, or fp64 where fp32 would overflow or lose it to a
    subnormal (0, inf and NaN stay fp32)."""
    np = sys.modules.get("numpy")  # not imported: `value` is no NumPy scalar
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        return int1
    if isinstance(value, int) or (np is not None and isinstance(value, np.integer)):
        v = int(value)
        for d in (int32, uint32, int64, uint64):
            if d.min <= v <= d.max:
                return d
        raise OverflowError(f"integer literal {v} does not fit in 64 bits")
    if isinstance(value, float) or (np is not None and isinstance(value, np.floating)):
        a = abs(float(value))
        if a == 0.0 or a == float("inf") or a != a or 2.0 ** -126 <= a <= FLOAT32_MAX:
            return float32
        return float64
    raise TypeError(f"{type(value).__name__} is not a number")


FLOAT32_MAX = (2 - 2 ** -23) * 2.0 ** 127


def integer_promote(a: dtype, b: dtype) -> dtype:
    """C's usual arithmetic conversions, as Triton applies them to two integer types
    (int1 counting as an unsigned integer of width 1)."""
    if a.signed == b.signed:
        return a if a.bits > b.bits else b
    unsigned, signed = (b, a) if a.signed else (a, b)
    return unsigned if unsigned.bits >= signed.bits else signed


def computation_type(a: dtype, a_literal: bool, b: dtype, b_literal: bool,
                     div_or_mod: bool = False) -> dtype:
    """The type both operands of an arithmetic operator are converted to (Triton's rules).

    A Python literal (or constexpr) of a lower or equal kind does not take part in the
    promotion: `x_fp16 * 2` stays fp16, `x_i8 + 1` stays i8.
    """
    if a_literal != b_literal:
        lit, other = (a, b) if a_literal else (b, a)
        if lit.kind_rank <= other.kind_rank:
            if div_or_mod and other in (float16, bfloat16):
                return float32
            return other
    if float64 in (a, b):
        return float64
    if float32 in (a, b):
        return float32
    if float16 in (a, b):
        return float32 if div_or_mod else float16
    if bfloat16 in (a, b):
        if div_or_mod or not (a == b == bfloat16):
            return float32
        return bfloat16
    if a.is_fp8() or b.is_fp8():  # two fp8 types: the type itself, or fp16 when they differ
        if not (a.is_fp8() and b.is_fp8()):
            raise TypeError(f"cannot combine {a!r} and {b!r}: convert the fp8 value with "
                            ".to(tl.float32) first")
        return a if a == b else float16
    if div_or_mod and a.signed != b.signed:
        raise TypeError(f"Cannot use /, //, or % with {a!r} and {b!r} because they have "
                        "different signedness; this is unlikely to give a useful answer: cast "
                        "one of them")  # Triton's words
    return integer_promote(a, b)
