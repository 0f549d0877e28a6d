"""`tl.dot`: the matrix product of two 2-D blocks (or batches of them: 3-D and more), with
Triton's typing rules.

The op is `dot(a, b, acc)` on 2-D blocks: the accumulator is always an operand (zeros when
the kernel gave none), so the interpreter and both code generators see one form.
Attributes: `precision` ("tf32" or "ieee", for fp32 inputs) and `acc_dtype`, the type the
products are summed in (fp32 for 16-bit floats, int32 for int8); a result type narrower
than that (`out_dtype=tl.float16`) is the fp32 sum rounded once at the end.

fp8 inputs: two e4m3 (`float8e4nv`) or two e5m2 (`float8e5`) blocks stay fp8 in the op,
for the targets whose tensor cores multiply them (Hopper's wgmma), and so do two blocks
of a format another matrix unit of the target multiplies (AMD CDNA3's e4m3fnuz / e5m2fnuz);
`passes.dot` converts them to fp16 where the plan has no such instruction.  Every other
pair of fp8 formats is
converted to fp16 here (exactly: every fp8 value is an fp16 value), as Triton's compiler
does for the formats a GPU cannot multiply.  Attribute `imprecise_acc`: fp8's
`max_num_imprecise_acc` (None: the tensor cores' own accumulation, Triton's default on
sm_90).

What Triton's compiler rewrites into 2-D products, the frontend rewrites here, into the
same ops (`transpiler/dot_forms.py`): 3-D blocks are one product per batch (4-D and more:
the leading axes folded into one batch first, as Triton's `tl.dot` does);
`input_precision` "tf32x3", "bf16x3" and "bf16x6" are Triton's split-precision sums of
tf32 / bf16 products.
"""

from __future__ import annotations

import math

from tilecc.language import dtypes as D
from tilecc.transpiler import dot_forms
from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import constant, handles, kernel_value
from tilecc.transpiler.builtins_blocks import reshape
from tilecc.transpiler.ir import Value
from tilecc.transpiler.semantic import Const

# input element type → the type products are summed in
INPUTS = {"fp16": D.float32, "bf16": D.float32, "fp32": D.float32, "fp64": D.float64,
          "i8": D.int32, "fp8e4nv": D.float32, "fp8e5": D.float32}
# fp8 formats a tensor core may multiply as they are (both inputs of one format)
NATIVE_FP8 = ("fp8e4nv", "fp8e5")
PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")  # Triton's NVIDIA list


def _native_fp8(target) -> tuple[str, ...]:
    """The fp8 formats kept as they are for the passes: those a matrix unit of the target
    multiplies (AMD CDNA3's FNUZ formats) besides the OCP pair; `passes.dot` converts them
    where the architecture's units do not (`convert_unplanned_fp8`)."""
    units = target.matrix_units if target is not None else ()
    return NATIVE_FP8 + tuple(sorted({dt for u in units for dt, _ in u.instructions
                                      if dt.startswith("fp8") and dt not in NATIVE_FP8}))


@handles("dot")
def _dot(tracer, name, input, other, acc, input_precision, allow_tf32, max_num_imprecise_acc,
         out_dtype):
    b = tracer.b
    a, w = kernel_value(tracer, input, "input"), kernel_value(tracer, other, "other")
    if not (isinstance(a, Value) and isinstance(w, Value) and a.type.is_block and
            w.type.is_block and len(a.type.shape) == len(w.type.shape) >= 2):
        raise TypeError("tl.dot needs two 2-D blocks (or two blocks of one rank above 2: "
                        "batches of products over the leading axes)")
    batch = a.type.shape[:-2]
    if batch != w.type.shape[:-2]:
        raise ValueError(f"tl.dot: the batch dimensions differ ({list(a.type.shape)} @ "
                         f"{list(w.type.shape)})")
    (m, k), (k2, n) = a.type.shape[-2:], w.type.shape[-2:]
    if k != k2:
        raise ValueError(f"tl.dot: inner dimensions differ ({list(a.type.shape)} @ "
                         f"{list(w.type.shape)})")
    fp8 = a.dtype.is_fp8() and w.dtype.is_fp8()
    # Triton's smallest K is by the inputs' width as written: 32 for two 8-bit blocks
    # (int8, fp8; fp8e4b15 excepted, which Hopper converts to fp16 first), else 16
    min_k = 32 if a.dtype.primitive_bitwidth == w.dtype.primitive_bitwidth == 8 and \
        "fp8e4b15" not in (a.dtype.short, w.dtype.short) else 16
    a_name = a.dtype.short if a.dtype == w.dtype else f"{a.dtype.short} x {w.dtype.short}"
    if fp8 and not (a.dtype == w.dtype and a.dtype.short in _native_fp8(b.target)):
        # any two fp8 formats multiply (Triton); as fp16, which holds every fp8 value
        a, w = S.cast(b, a, D.float16), S.cast(b, w, D.float16)
    if a.dtype != w.dtype:
        raise TypeError(f"tl.dot needs inputs of one element type, got {a.dtype.short} and "
                        f"{w.dtype.short}; cast one with .to()")
    ty = a.dtype.short
    if ty not in INPUTS and not a.dtype.is_fp8():
        raise TypeError(f"tl.dot supports {', '.join(sorted(INPUTS))} and fp8 inputs, got {ty}")
    acc_dtype = INPUTS.get(ty, D.float32)
    if k < min_k:  # M and N may be anything (Triton pads them to tensor-core tiles)
        raise ValueError(f"tl.dot needs K >= {min_k} for {a_name} inputs, got "
                         f"M={m}, N={n}, K={k}")
    precision = _precision(input_precision, allow_tf32, ty)
    imprecise = _check_imprecise_acc(max_num_imprecise_acc, fp8, k)
    out = _result_type(constant(out_dtype, "out_dtype"), ty, fp8)
    shape = batch + (m, n)
    if isinstance(acc, Const) and acc.value is None:
        c = S.splat(b, S.constant(b, 0, out), shape)
    else:
        c = kernel_value(tracer, acc, "acc")
        if isinstance(c, Const) or c.type.shape != shape:
            raise ValueError(f"tl.dot: acc must be a block of shape {list(shape)}")
        if c.dtype != out:
            raise TypeError(f"tl.dot: acc is {c.dtype.short} but the product is {out.short}; "
                            f"pass out_dtype=tl.{_tl_name(c.dtype)} or cast acc")
    if precision in dot_forms.SPLIT:
        def product(x, y, z):
            return dot_forms.split_precision(b, x, y, z, precision, acc_dtype)
    else:
        def product(x, y, z):
            return _product(b, x, y, z, precision, acc_dtype,
                            imprecise if a.dtype.is_fp8() else None)
    if len(batch) > 1:  # as Triton: the leading axes as one batch, unfolded after
        flat = math.prod(batch)
        a, w, c = (reshape(b, x, (flat,) + x.type.shape[-2:]) for x in (a, w, c))
        return reshape(b, dot_forms.batched(b, a, w, c, product), shape)
    if batch:
        return dot_forms.batched(b, a, w, c, product)
    return product(a, w, c)


def _product(b, a: Value, w: Value, c: Value, precision: str, acc_dtype: D.dtype,
             imprecise_acc: int | None = None) -> Value:
    """One 2-D product: the IR's dot op."""
    extra = {} if imprecise_acc is None else {"imprecise_acc": imprecise_acc}
    return b.emit("dot", [a, w, c], c.type, precision=precision, acc_dtype=acc_dtype, **extra)


def _result_type(out, ty: str, fp8: bool) -> D.dtype:
    """The result's element type, by Triton's rules: int32 for int8 and fp32 for fp32 and
    bf16 inputs (whatever out_dtype says), fp64 for fp64; out_dtype (fp32 or fp16) for fp16
    and fp8 inputs; out_dtype=bfloat16 refused."""
    if not isinstance(out, D.dtype):
        raise TypeError(f"out_dtype must be a dtype, got {out!r}")
    if ty == "i8":
        return D.int32  # whatever out_dtype says, as Triton's (int8 products sum in int32)
    if out == D.bfloat16:
        raise ValueError("out_dtype=bfloat16 is unsupported (as in Triton): use "
                         "out_dtype=tl.float32 or tl.float16 and cast with .to(tl.bfloat16)")
    if ty in ("fp32", "bf16"):
        return D.float32
    if ty == "fp64":
        return D.float64
    if out not in (D.float32, D.float16):
        raise TypeError(f"out_dtype of a {'fp8' if fp8 else ty} tl.dot is tl.float32 or "
                        f"tl.float16, got {out.short}")
    return out


def _check_imprecise_acc(max_num_imprecise_acc, fp8: bool, k: int) -> int | None:
    """Checked as Triton does (at most K for fp8 inputs, ignored otherwise); the value, or
    None.  It matters only to fp8 products on tensor cores that accumulate them at reduced
    precision (wgmma): every that many elements of K, the partial sum is added to the fp32
    accumulator (0 and any value up to K: at least once per product)."""
    value = constant(max_num_imprecise_acc, "max_num_imprecise_acc")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError(f"max_num_imprecise_acc must be a non-negative integer, got {value!r}")
    if fp8 and value > k:
        raise ValueError(f"max_num_imprecise_acc ({value}) must be <= K ({k})")
    return value


def _precision(input_precision, allow_tf32, ty: str) -> str:
    p = constant(input_precision, "input_precision")
    legacy = constant(allow_tf32, "allow_tf32")
    if p is not None and legacy is not None:
        raise ValueError("pass input_precision or allow_tf32, not both")
    if p is None:
        p = "tf32" if legacy is None or legacy else "ieee"
    if not isinstance(p, str) or p.lower() not in PRECISIONS:
        raise ValueError(f"input_precision must be one of {', '.join(PRECISIONS)}, got {p!r}")
    return p.lower() if ty == "fp32" else "ieee"


def _tl_name(d: D.dtype) -> str:
    return D.LONG_NAMES.get(d.short, d.short)
