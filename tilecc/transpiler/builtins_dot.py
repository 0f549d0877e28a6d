"""`tl.dot`: the matrix product of two 2-D blocks, with Triton's typing rules.

The op is `dot(a, b, acc)`: the accumulator is always an operand (zeros when the kernel
gave none), so the interpreter and both code generators see one form.  Attributes:
`precision` ("tf32" or "ieee", for fp32 inputs) and `acc_dtype`, the type the products are
summed in (fp32 for 16-bit floats, int32 for int8); a result type narrower than that
(`out_dtype=tl.float16`) is the fp32 sum rounded once at the end.
"""

from __future__ import annotations

from tilecc.language import dtypes as D
from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import constant, handles, kernel_value
from tilecc.transpiler.ir import Type, Value
from tilecc.transpiler.semantic import Const

# input element type → (the type products are summed in, the smallest K)
INPUTS = {"fp16": (D.float32, 16), "bf16": (D.float32, 16), "fp32": (D.float32, 16),
          "fp64": (D.float64, 16), "i8": (D.int32, 32)}
PRECISIONS = ("tf32", "ieee")


@handles("dot")
def _dot(tracer, name, input, other, acc, input_precision, allow_tf32, max_num_imprecise_acc,
         out_dtype):
    b = tracer.b
    a, w = kernel_value(tracer, input, "input"), kernel_value(tracer, other, "other")
    if not (isinstance(a, Value) and isinstance(w, Value) and a.type.is_block and
            w.type.is_block and len(a.type.shape) == 2 and len(w.type.shape) == 2):
        raise TypeError("tl.dot needs two 2-D blocks")
    (m, k), (k2, n) = a.type.shape, w.type.shape
    if k != k2:
        raise ValueError(f"tl.dot: inner dimensions differ ({list(a.type.shape)} @ "
                         f"{list(w.type.shape)})")
    if a.dtype != w.dtype:
        raise TypeError(f"tl.dot needs inputs of one element type, got {a.dtype.name} and "
                        f"{w.dtype.name}; cast one with .to()")
    ty = a.dtype.name
    if ty not in INPUTS:
        raise TypeError(f"tl.dot supports {', '.join(sorted(INPUTS))} inputs, got {ty}")
    acc_dtype, min_k = INPUTS[ty]
    if m < 16 or n < 16 or k < min_k:
        raise ValueError(f"tl.dot needs M, N >= 16 and K >= {min_k} for {ty} inputs, got "
                         f"M={m}, N={n}, K={k}")
    precision = _precision(input_precision, allow_tf32, ty)
    out = constant(out_dtype, "out_dtype")
    if not isinstance(out, D.dtype):
        raise TypeError(f"out_dtype must be a dtype, got {out!r}")
    if ty == "i8":
        out = D.int32 if out == D.float32 else out  # Triton's default for integer inputs
        if out != D.int32:
            raise TypeError("int8 tl.dot accumulates in int32; out_dtype must be tl.int32")
    elif ty == "fp64":
        out = D.float64
    elif out.name not in ("fp32", "fp16", "bf16") or (out.name != "fp32" and out.name != ty):
        raise TypeError(f"out_dtype of a {ty} tl.dot is tl.float32 or the input type, got "
                        f"{out.name}")
    if isinstance(acc, Const) and acc.value is None:
        c = S.splat(b, S.constant(b, 0, out), (m, n))
    else:
        c = kernel_value(tracer, acc, "acc")
        if isinstance(c, Const) or c.type.shape != (m, n):
            raise ValueError(f"tl.dot: acc must be a block of shape {[m, n]}")
        if c.dtype != out:
            raise TypeError(f"tl.dot: acc is {c.dtype.name} but the product is {out.name}; "
                            f"pass out_dtype=tl.{_tl_name(c.dtype)} or cast acc")
    return b.emit("dot", [a, w, c], Type(out, (m, n)), precision=precision,
                  acc_dtype=acc_dtype)


def _precision(input_precision, allow_tf32, ty: str) -> str:
    p = constant(input_precision, "input_precision")
    legacy = constant(allow_tf32, "allow_tf32")
    if p is not None and legacy is not None:
        raise ValueError("pass input_precision or allow_tf32, not both")
    if p is None:
        p = "tf32" if legacy is None or legacy else "ieee"
    if p not in PRECISIONS:
        raise ValueError(f"input_precision must be one of {', '.join(PRECISIONS)}, got {p!r}")
    return p if ty == "fp32" else "ieee"


def _tl_name(d: D.dtype) -> str:
    return {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
            "i32": "int32"}.get(d.name, d.name)
