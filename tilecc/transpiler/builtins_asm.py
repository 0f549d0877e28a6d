"""`tl.inline_asm_elementwise`: the user's assembly applied element by element.

The call is one IR op, `inline_asm(*args){asm, constraints, pure, pack, operands}` with one
result per output dtype; the renderer (`render_asm.py`) writes it as GCC-style inline
assembly (`asm [volatile](... : outputs : inputs)`), which NVRTC takes with PTX and hiprtc
with AMD GCN assembly.  As in Triton, `pack` elements go to one instance of the assembly,
and elements narrower than 32 bits are packed into 32-bit registers: each input and output
takes pack // per operands, `per` = min(32 // bits, pack) elements for narrow types, else 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.language import dtypes as D
from tilecc.transpiler import semantic as S
from tilecc.transpiler.builtin_registry import constant, handles, kernel_value
from tilecc.transpiler.ir import Op, Type, Value
from tilecc.transpiler.semantic import Const

# constraint letters and the C type of their operand ('r' etc.: by width, see `c_type`)
FLOAT_LETTERS = {"f": 32, "d": 64}
INT_LETTERS = {"h": 16, "r": 32, "l": 64, "v": 64, "s": 64, "a": 64}


@dataclass(frozen=True)
class AsmOperand:
    """One operand of the assembly: which tensor it packs, its elements per register
    (`per`), the first element of the pack it holds, its constraint and width in bits."""

    tensor: int  # index into the outputs, then the inputs (outputs first)
    per: int
    first: int
    constraint: str
    bits: int


def elements_per_register(d: D.dtype, pack: int) -> int:
    return min(32 // d.bits, pack) if d.bits < 32 else 1


def _constraints(text: str) -> tuple[list[str], list[str], list[str]]:
    """(outputs, inputs, clobbers) of an LLVM constraint string."""
    outs, ins, clobbers = [], [], []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise ValueError(f"empty entry in the constraints {text!r}")
        if part.startswith("~"):
            clobbers.append(part[1:].strip("{}"))
        elif part.startswith("="):
            outs.append(part.lstrip("=&"))
        else:
            ins.append(part)
    return outs, ins, clobbers


@handles("inline_asm_elementwise")
def _inline_asm(tracer, name, asm, constraints, args, dtype, is_pure, pack):
    b = tracer.b
    asm, text = constant(asm, "asm"), constant(constraints, "constraints")
    pack, pure = constant(pack, "pack"), bool(constant(is_pure, "is_pure"))
    if not isinstance(asm, str) or not isinstance(text, str):
        raise TypeError("tl.inline_asm_elementwise: asm and constraints must be strings")
    if not isinstance(pack, int) or pack < 1 or pack & (pack - 1):
        raise ValueError(f"tl.inline_asm_elementwise: pack must be a power of 2, got {pack!r}")
    dtypes = constant(dtype, "dtype")
    multiple = isinstance(dtypes, tuple)
    dtypes = dtypes if multiple else (dtypes,)
    if not dtypes or not all(isinstance(d, D.dtype) for d in dtypes):
        raise TypeError("tl.inline_asm_elementwise: dtype must be a dtype or a tuple of dtypes "
                        "(at least one output)")
    items = args.value if isinstance(args, Const) and isinstance(args.value, (tuple, list)) \
        else None
    if items is None:
        raise TypeError("tl.inline_asm_elementwise: args must be a list of kernel values")
    values = [S.to_value(b, kernel_value(tracer, x if isinstance(x, (Value, Const)) else Const(x),
                                         "args")) for x in items]
    shape: tuple[int, ...] = ()
    for v in values:
        shape = S.broadcast_shapes(shape, v.type.shape)
    values = [S.splat(b, v, shape) for v in values]
    for d in (*dtypes, *(v.dtype for v in values)):
        if d.is_ptr() or d.is_bool():
            raise TypeError(f"tl.inline_asm_elementwise: {d!r} values are not supported "
                            "(numbers of 8 to 64 bits)")
    outs, ins, clobbers = _constraints(text)
    tensors = [*dtypes, *(v.dtype for v in values)]
    letters = iter([*outs, *ins])
    operands, expected = [], 0
    for t, d in enumerate(tensors):
        per = elements_per_register(d, pack)
        expected += pack // per
        for first in range(0, pack, per):
            letter = next(letters, None)
            if letter is not None:
                operands.append(AsmOperand(t, per, first, letter, per * d.bits))
    if len(outs) + len(ins) != expected or len(outs) != sum(
            pack // elements_per_register(d, pack) for d in dtypes):
        raise ValueError(
            f"tl.inline_asm_elementwise: the constraints {text!r} give {len(outs)} outputs "
            f"and {len(ins)} inputs, but {len(dtypes)} output and {len(values)} input "
            f"tensors with pack={pack} take "
            f"{sum(pack // elements_per_register(d, pack) for d in dtypes)} and "
            f"{sum(pack // elements_per_register(v.dtype, pack) for v in values)} (elements "
            "narrower than 32 bits are packed into 32-bit registers)")
    for o in operands:
        width = FLOAT_LETTERS.get(o.constraint) or INT_LETTERS.get(o.constraint)
        if width is None:
            raise ValueError(f"tl.inline_asm_elementwise: constraint {o.constraint!r} is not "
                             f"supported (use one of {', '.join([*INT_LETTERS, *FLOAT_LETTERS])})")
        if o.bits > width or (o.constraint in FLOAT_LETTERS and o.bits != width):
            raise ValueError(f"tl.inline_asm_elementwise: a {o.bits}-bit operand does not fit "
                             f"the constraint {o.constraint!r}")
    results = [Value(Type(d, shape)) for d in dtypes]
    b.emit_op(Op("inline_asm", values, results, tracer.b.loc, {
        "asm": asm, "pure": pure, "pack": pack, "operands": tuple(operands),
        "clobbers": tuple(clobbers)}))
    return Const(tuple(results)) if multiple else results[0]
