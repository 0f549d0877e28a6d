"""The `tl` functions kernels call: signatures and documentation only.

These stubs are the one declaration of each builtin.  The frontend binds a call's
arguments against the stub's signature (so argument errors read like Python's own) and
dispatches to the implementation registered under the stub's canonical name in
`tilecc.transpiler.builtins`.  Called from ordinary Python, a stub raises.
"""

from __future__ import annotations

import enum
import functools
import operator
from typing import Any, Callable

from tilecc.language.dtypes import (  # noqa: F401  (Triton's `core` holds them too)
    bfloat16, block_type, dtype, float8e4b8, float8e4b15, float8e4nv, float8e5, float8e5b16,
    float16, float32, float64, get_int_dtype, int1, int8, int16, int32, int64, pi32_t,
    pointer_type, uint8, uint16, uint32, uint64)


class OutsideKernelError(RuntimeError):
    """A `tl` function was called from ordinary Python rather than inside a kernel."""


def builtin(fn: Callable, vendor: str | None = None) -> Callable:
    """Mark `fn` as the declaration of a kernel builtin named `tl.<fn name>`, or, with a
    `vendor` ("cuda", "hip"), `tl.extra.<vendor>.<fn name>` (registered as
    "<vendor>.<fn name>")."""
    name = f"{vendor}.{fn.__name__}" if vendor else fn.__name__
    spelt = f"tl.extra.{name}" if vendor else f"tl.{name}"

    @functools.wraps(fn)
    def outside_kernel(*args: Any, **kwargs: Any):
        raise OutsideKernelError(
            f"{spelt}() can only be called inside a @tilecc.jit kernel "
            "(or a @tilecc.jit helper it calls); to run a kernel on the CPU use "
            "kernel.interpret[grid](...) or TILECC_INTERPRET=1")

    outside_kernel.__tilecc_builtin__ = name
    return outside_kernel


class KernelFunction:
    """A Python function written in the kernel language, which kernels call (or pass as a
    `combine_fn`) and the frontend traces: `fn` is that function.  The one mark the
    frontend recognises: `@tilecc.jit`'s `JITFunction` is one, and so are the standard
    library's combine functions (`tilecc.language.standard`), which the language marks
    itself with `@kernel_function` since it imports nothing of the runtime."""

    def __init__(self, fn: Callable):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any):
        raise OutsideKernelError(f"{self.fn.__name__} is written in the kernel language: "
                                 "call it from a @tilecc.jit kernel")


def kernel_function(fn: Callable) -> KernelFunction:
    """Mark `fn` as a function in the kernel language (what `@tilecc.jit` does for a
    helper, without the runtime's launch and compile methods)."""
    return KernelFunction(fn)


class constexpr_type:
    """The type of a constexpr (`BLOCK.type`): one per value, equal when the values are
    (as Triton's `triton.language.core.constexpr_type`)."""

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"constexpr_type[{self.value}]"


class constexpr:
    """Annotation for compile-time parameters (`BLOCK: tl.constexpr`), or a wrapper
    that marks a global as a compile-time constant (`BLOCK = tl.constexpr(128)`)."""

    def __init__(self, value: Any):
        self.value = value.value if isinstance(value, constexpr) else value

    @property
    def type(self) -> constexpr_type:
        return constexpr_type(self.value)

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    # As Triton's constexpr: operators on the value give constexprs (so globals such as
    # `BLOCK = tl.constexpr(64)` combine outside kernels too), it hashes with its value.
    def __hash__(self) -> int:
        return hash((self.value, type(self.value)))

    def __bool__(self) -> bool:
        return bool(self.value)

    def __index__(self) -> int:
        return self.value.__index__()

    def __neg__(self):
        return constexpr(-self.value)

    def __pos__(self):
        return constexpr(+self.value)

    def __invert__(self):
        return constexpr(~self.value)

    @property
    def type(self) -> "constexpr_type":
        return constexpr_type(self.value)

    def logical_and(self, other):
        return constexpr(self.value and _unwrap(other))

    def logical_or(self, other):
        return constexpr(self.value or _unwrap(other))


def _unwrap(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


class constexpr_type:
    """The type of a constexpr value (`tl.constexpr(4).type`): the value is the type."""

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other) -> bool:
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self) -> int:
        return hash(("constexpr_type", self.value))

    def __repr__(self) -> str:
        return f"constexpr_type[{self.value!r}]"


class const:
    """Annotation for a parameter the kernel only reads (`x_ptr: tl.const`); tilecc
    needs no such promise."""


class ConstexprFunction:
    """A Python function that kernels call at compile time on constexpr arguments, its
    result a constexpr (`@triton.constexpr_function`); called from Python, it is the
    function."""

    def __init__(self, fn: Callable):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, obj, objclass=None):
        return self if obj is None else BoundConstexprFunction(obj, self)

    def __call__(self, *args: Any, **kwargs: Any):
        return self.fn(*map(_unwrap, args), **{k: _unwrap(v) for k, v in kwargs.items()})


class BoundConstexprFunction:
    """A constexpr function that is a method, bound to its object."""

    def __init__(self, instance: Any, fn: ConstexprFunction):
        self.__self__, self.__func__ = instance, fn

    def __call__(self, *args: Any, **kwargs: Any):
        return self.__func__(self.__self__, *args, **kwargs)


def constexpr_function(fn: Callable) -> ConstexprFunction:
    """Make `fn` callable from kernels at compile time (on constexpr arguments)."""
    return ConstexprFunction(fn)


def must_use_result(x, s=True):
    """Triton's mark for builtins whose result must be used: returns `x` (a function)
    or a decorator; tilecc does not warn."""
    return (lambda fn: fn) if isinstance(x, str) else x


def is_builtin(fn) -> bool:
    """Whether `fn` is one of the language's builtins (a `tl` function)."""
    return getattr(fn, "__tilecc_builtin__", None) is not None


def _constexpr_operator(name: str, reflected: bool = False) -> Callable:
    op = getattr(operator, name + "_" if name in ("and", "or") else name)

    def method(self, other):
        a, b = self.value, _unwrap(other)
        return constexpr(op(b, a) if reflected else op(a, b))
    method.__name__ = f"__{'r' if reflected else ''}{name}__"
    return method


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift",
            "and", "or", "xor"):
    setattr(constexpr, f"__{_op}__", _constexpr_operator(_op))
    setattr(constexpr, f"__r{_op}__", _constexpr_operator(_op, reflected=True))
for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(constexpr, f"__{_op}__", _constexpr_operator(_op))

CONSTEXPR_0 = constexpr(0)
TRITON_MAX_TENSOR_NUMEL = 1048576  # Triton's largest block (elements), as its constant


# --- program geometry -------------------------------------------------------------------

@builtin
def program_id(axis):
    """Index of this program along grid `axis` (0, 1 or 2), as int32."""


@builtin
def num_programs(axis):
    """Number of programs along grid `axis` (0, 1 or 2), as int32."""


@builtin
def arange(start, end):
    """The block [start, start+1, ..., end-1]; both constexpr, end - start a power of 2."""


# --- memory -----------------------------------------------------------------------------

@builtin
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="",
         cache_modifier="", eviction_policy="", volatile=False):
    """Load from a pointer or block of pointers; masked-off lanes take `other`
    (left undefined when `other` is None).  Through a block pointer: no mask or other,
    but `boundary_check` (the dims to check) and `padding_option` ("zero", "nan")."""


@builtin
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="",
          eviction_policy=""):
    """Store `value` (cast to the pointee type) where `mask` is true; through a block
    pointer, inside the dims `boundary_check` names."""


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
    """Run assembly (PTX on CUDA, GCN on HIP) on each group of `pack` elements of `args`
    (broadcast together); `constraints` in LLVM's syntax, outputs first; `dtype` one dtype
    or a tuple of them (one output each)."""


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    """A block pointer: the `block_shape` block at `offsets` of the tensor at `base` with
    `shape` and `strides`; `order` lists the dims from fastest to slowest varying."""


@builtin
def advance(base, offsets):
    """Block pointer `base` moved by `offsets` (one per dim)."""


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    """A tensor descriptor: the tensor at `base` with `shape` (int32) and `strides` (int64,
    the last 1), read and written in blocks of `block_shape` with `desc.load(offsets)` /
    `desc.store(offsets, value)`; outside the tensor, loads give the padding ("zero" or
    "nan") and stores are dropped."""


@builtin
def load_tensor_descriptor(desc, offsets):
    """`desc.load(offsets)`."""


@builtin
def store_tensor_descriptor(desc, offsets, value):
    """`desc.store(offsets, value)`."""


# --- element-wise -----------------------------------------------------------------------

@builtin
def add(x, y, sanitize_overflow=True):
    """x + y (`sanitize_overflow`: Triton's overflow checks in debug mode; tilecc's
    integer arithmetic wraps, as in release builds)."""


@builtin
def sub(x, y, sanitize_overflow=True):
    """x - y (see `add`)."""


@builtin
def mul(x, y, sanitize_overflow=True):
    """x * y (see `add`)."""


@builtin
def item(input):
    """The element of a block of one, as a scalar (`x.item()`)."""


@builtin
def where(condition, x, y):
    """Element-wise `x if condition else y`, broadcasting the three operands."""


class PropagateNan(enum.Enum):
    """How tl.minimum / tl.maximum / tl.clamp treat a NaN operand: NONE yields the other
    operand (IEEE minNum / maxNum), ALL yields NaN."""

    NONE = 0x0000
    ALL = 0xFFFF


@builtin
def minimum(x, y, propagate_nan=PropagateNan.NONE):
    """Element-wise minimum (for floats, a NaN operand yields the other one, unless
    propagate_nan=tl.PropagateNan.ALL)."""


@builtin
def maximum(x, y, propagate_nan=PropagateNan.NONE):
    """Element-wise maximum (for floats, a NaN operand yields the other one, unless
    propagate_nan=tl.PropagateNan.ALL)."""


@builtin
def clamp(x, min, max, propagate_nan=PropagateNan.NONE):
    """`x` clamped to [min, max] (floats only); with propagate_nan=ALL a NaN x stays NaN."""


@builtin
def fdiv(x, y, ieee_rounding=False):
    """Floating-point x / y: fast (fp32: 2 ulp) by default, correctly rounded with
    ieee_rounding=True."""


@builtin
def div_rn(x, y):
    """fp32 x / y, correctly rounded (to nearest even)."""


@builtin
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    """exp(x - max(x)) / sum(exp(x - max(x))) along `dim` (0 when None)."""


@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False):
    """Convert `input` to `dtype` (same as `input.to(dtype)`)."""


@builtin
def fma(x, y, z):
    """Fused multiply-add x * y + z, rounded once."""


@builtin
def cdiv(x, div):
    """Ceiling division (x + div - 1) // div."""


@builtin
def sigmoid(x):
    """1 / (1 + exp(-x))."""


@builtin
def umulhi(x, y):
    """The high N bits of the 2N-bit product of x and y, their bits read as unsigned
    (int32, int64, uint32 or uint64 operands)."""


@builtin
def to_tensor(x):
    """`x` as a kernel value: a Python number becomes a scalar of its literal type."""


def _unary_math(name: str, doc: str) -> Callable:
    def stub(x):
        pass

    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = doc
    return builtin(stub)


abs = _unary_math("abs", "Absolute value.")
exp = _unary_math("exp", "e ** x.")
exp2 = _unary_math("exp2", "2 ** x.")
log = _unary_math("log", "Natural logarithm.")
log2 = _unary_math("log2", "Base-2 logarithm.")
sqrt = _unary_math("sqrt", "Square root (fp32: the hardware's approximation, as Triton's).")
sqrt_rn = _unary_math("sqrt_rn", "Square root, correctly rounded.")
rsqrt = _unary_math("rsqrt", "1 / sqrt(x).")
sin = _unary_math("sin", "Sine.")
cos = _unary_math("cos", "Cosine.")
floor = _unary_math("floor", "Largest integer not greater than x.")
ceil = _unary_math("ceil", "Smallest integer not less than x.")
erf = _unary_math("erf", "The error function.")

UNARY_MATH = ("abs", "exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos",
              "floor", "ceil", "erf")


# --- compile-time helpers and hints -----------------------------------------------------

class _Builtin:
    """A builtin that Triton defines as a class (loop ranges, a loop condition): the
    frontend reads it by its `__tilecc_builtin__` name; made outside a kernel, it raises."""

    __tilecc_builtin__ = ""

    def __init__(self, *args: Any, **kwargs: Any):
        raise OutsideKernelError(f"tl.{type(self).__name__}() can only be used inside a "
                                 "@tilecc.jit kernel")


class static_range(_Builtin):
    """A range with constexpr bounds that is unrolled at compile time."""

    __tilecc_builtin__ = "static_range"

    def __init__(self, arg1, arg2=None, step=None):
        super().__init__()


class range(_Builtin):
    """A run-time loop range (as Python's `range`).  `num_stages` sets this loop's pipeline
    depth over the launch's, as in Triton (0 or 1: not pipelined); Triton's other hints for
    its compiler (`loop_unroll_factor`, `disallow_acc_multi_buffer`, `flatten`,
    `warp_specialize`, `disable_licm`) are accepted; tilecc plans its loops itself."""

    __tilecc_builtin__ = "range"

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
                 disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False,
                 disable_licm=False):
        super().__init__()


class condition(_Builtin):
    """A `while` loop's condition, with a hint for the compiler (`disable_licm`, which
    tilecc's generated code has no use for): `while tl.condition(i < n):`."""

    __tilecc_builtin__ = "condition"

    def __init__(self, arg1, disable_licm=False):
        super().__init__()


@builtin
def static_assert(cond, msg=""):
    """Fail compilation when the constexpr `cond` is false."""


@builtin
def device_assert(cond, msg="", mask=None):
    """Check `cond` at run time in debug mode (and always in the interpreter); with `mask`,
    only where the mask is true."""


class tensor:
    """The type of kernel values (blocks and scalars): for `isinstance(x, tl.tensor)` and
    annotations in kernels; tilecc has no tensor objects outside them.  Its methods
    (`x.sum()`, `x.to(...)`...) are the `tl` functions' (`tilecc.language.members`)."""

    def __init__(self, handle, type):
        raise OutsideKernelError("tl.tensor values exist only inside a @tilecc.jit kernel")


class tensor_descriptor:
    """The type of a tensor descriptor in a kernel (`tl.make_tensor_descriptor`'s result,
    or a host-side TensorDescriptor argument): for annotations and `isinstance`; its
    methods (`desc.load`, `.store`, atomics, `.gather`, `.scatter`) are read in kernels."""

    def __init__(self, handle, shape, strides, block_type):
        raise OutsideKernelError("tensor descriptors exist only inside a @tilecc.jit kernel")


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False):
    """Print while the kernel compiles (constexprs by value), as Python's print."""


@builtin
def device_print(prefix, *args, hex=False):
    """Print `prefix` and each argument's elements at run time, one line per element,
    headed by the program id and the element's index (Triton's format)."""


@builtin
def assume(cond):
    """Promise the compiler that `cond` holds."""


@builtin
def multiple_of(input, values):
    """Promise that `input` (each run start, for a block) is a multiple of `values`."""


@builtin
def max_contiguous(input, values):
    """Promise that `input` holds runs of `values` consecutive integers."""


@builtin
def max_constancy(input, values):
    """Promise that `input` holds runs of `values` equal elements."""


def is_dtype(value: Any) -> bool:
    return isinstance(value, dtype)


# --- blocks: creation and shape ------------------------------------------------------------

@builtin
def zeros(shape, dtype):
    """A block of `shape` filled with zeros of `dtype`."""


@builtin
def zeros_like(input):
    """A block of zeros with the shape and dtype of `input`."""


@builtin
def full(shape, value, dtype):
    """A block of `shape` filled with `value` (converted to `dtype`)."""


@builtin
def expand_dims(input, axis):
    """Insert a size-1 axis at `axis` (an int or a tuple of ints)."""


@builtin
def broadcast_to(input, *shape):
    """Repeat `input`'s size-1 axes to `shape`."""


@builtin
def broadcast(input, other):
    """Broadcast two blocks to their common shape; returns both."""


@builtin
def reshape(input, *shape, can_reorder=False):
    """The same elements, in row-major order, with a new shape."""


@builtin
def view(input, *shape):
    """Alias of reshape (elements may be reordered in Triton; tilecc keeps row-major order)."""


@builtin
def ravel(x, can_reorder=False):
    """Flatten to one dimension, row-major."""


@builtin
def trans(input, *dims):
    """Permute axes (reverses a 2-D block's axes when no `dims` are given)."""


@builtin
def permute(input, *dims):
    """Permute axes to the order `dims`."""


@builtin
def join(a, b):
    """Stack two blocks of equal shape along a new last axis of size 2."""


@builtin
def split(a):
    """Split a block whose last axis has size 2 into two blocks."""


# --- reductions and scans --------------------------------------------------------------------

@builtin
def sum(input, axis=None, keep_dims=False, dtype=None):
    """Sum along `axis` (all axes when None); integers narrower than 32 bits sum in 32."""


@builtin
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True,
        keep_dims=False):
    """Maximum along `axis`; with `return_indices`, also where it is."""


@builtin
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True,
        keep_dims=False):
    """Minimum along `axis`; with `return_indices`, also where it is."""


@builtin
def argmax(input, axis, tie_break_left=True, keep_dims=False):
    """Index of the maximum along `axis` (the first one on ties by default)."""


@builtin
def argmin(input, axis, tie_break_left=True, keep_dims=False):
    """Index of the minimum along `axis` (the first one on ties by default)."""


@builtin
def reduce(input, axis, combine_fn, keep_dims=False):
    """Reduce along `axis` with a @jit `combine_fn(a, b)` (or a tuple of blocks with
    `combine_fn(a0, a1, ..., b0, b1, ...)` returning a tuple)."""


@builtin
def cumsum(input, axis=0, reverse=False, dtype=None):
    """Inclusive prefix sum along `axis`."""


@builtin
def cumprod(input, axis=0, reverse=False):
    """Inclusive prefix product along `axis`."""


@builtin
def associative_scan(input, axis, combine_fn, reverse=False):
    """Inclusive scan along `axis` with an associative @jit `combine_fn`."""


# --- reordering: sort, flip, gather, histogram, cat ------------------------------------------

@builtin
def sort(x, dim=None, descending=CONSTEXPR_0):
    """Sort along the last axis (`dim` None or the last), ascending unless `descending`;
    any power-of-two length.  Triton's bitonic network: a NaN may take its partner's place."""


@builtin
def topk(x, k, dim=None):
    """The `k` largest elements along the last axis, in descending order (k a power of 2)."""


@builtin
def bitonic_merge(x, dim=None, descending=CONSTEXPR_0):
    """Merge the two sorted halves of a bitonic sequence along the last axis."""


@builtin
def flip(x, dim=None):
    """Reverse the elements along `dim` (the last axis when None)."""


@builtin
def interleave(a, b):
    """Interleave two blocks along their last axis: `join(a, b)` reshaped."""


@builtin
def cat(input, other, can_reorder=False):
    """Concatenate two 1-D blocks; as in Triton, only with `can_reorder=True`."""


@builtin
def gather(src, index, axis):
    """`src` indexed along `axis` by `index` (same rank; other axes of equal size)."""


@builtin
def histogram(input, num_bins, mask=None):
    """Counts (int32) of the values 0 .. num_bins-1 in a 1-D integer block, where `mask`;
    other values are not counted."""


@builtin
def xor_sum(input, axis=None, keep_dims=False):
    """Bitwise xor of the elements along `axis` (integers)."""


@builtin
def reduce_or(input, axis, keep_dims=False):
    """Bitwise or of the elements along `axis` (integers)."""


@builtin
def swizzle2d(i, j, size_i, size_j, size_g):
    """Row-major indices (i, j) of a size_i × size_j grid → column-major ones within
    groups of `size_g` rows; returns (new_i, new_j)."""


@builtin
def map_elementwise(scalar_fn, *args, pack=1):
    """Apply the @jit `scalar_fn` to each element of the (broadcast) blocks `args`, `pack`
    elements of each at a time; its `if`s then branch per element.  Returns one block,
    or a tuple when `scalar_fn` returns several values."""


# --- atomics and synchronization ---------------------------------------------------------------

def _atomic(name: str, doc: str) -> Callable:
    def stub(pointer, val, mask=None, sem=None, scope=None):
        pass

    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = doc + " Returns the previous values."
    return builtin(stub)


atomic_add = _atomic("atomic_add", "Atomically add `val` at `pointer` where `mask`.")
atomic_max = _atomic("atomic_max", "Atomically keep the maximum.")
atomic_min = _atomic("atomic_min", "Atomically keep the minimum.")
atomic_and = _atomic("atomic_and", "Atomic bitwise and.")
atomic_or = _atomic("atomic_or", "Atomic bitwise or.")
atomic_xor = _atomic("atomic_xor", "Atomic bitwise xor.")
atomic_xchg = _atomic("atomic_xchg", "Atomically store `val`.")

ATOMICS = ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
           "atomic_xchg")


@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """Atomically store `val` where the current value equals `cmp`; returns the old value."""


# --- matrix multiplication --------------------------------------------------------------

@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None,
        max_num_imprecise_acc=None, out_dtype=float32):
    """The matrix product of two 2-D blocks, plus `acc` when given.

    fp16 / bf16 inputs accumulate in fp32; fp32 inputs multiply as tf32 unless
    `input_precision="ieee"`; int8 inputs accumulate in int32.  Shapes are at least 16 along
    every axis (K at least 32 for int8).  On NVIDIA GPUs it runs on the tensor cores."""


@builtin
def debug_barrier():
    """Synchronize all threads of the program (__syncthreads)."""
