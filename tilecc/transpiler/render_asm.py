"""Rendering `tl.inline_asm_elementwise` (see `builtins_asm.py`): one GCC-style `asm`
statement per `pack` elements of each thread's registers.

    for (int r = 0; r < 8; r += 4) {
      unsigned asm_out0;
      asm("...PTX with %0, %1..." : "=r"(asm_out0) : "r"(tc::bitcast<unsigned>(
          tc::Vec<signed char, 4>{{x[r], x[r + 1], x[r + 2], x[r + 3]}})));
      const auto y_unpacked0 = tc::bitcast<tc::Vec<signed char, 4>>(asm_out0);
      ...
    }

Triton writes operands `$0`, `$1` (LLVM); C++ inline assembly `%0`, `%1`, and a literal
`%` (PTX's `%tid.x`) as `%%`.
"""

from __future__ import annotations

import re
import textwrap

from tilecc.language import dtypes as D
from tilecc.transpiler.ir import Op
from tilecc.transpiler.render_writer import Writer
from tilecc.transpiler.target import c_type

_OPERAND = re.compile(r"\$(\d+|\$)|%")


def cxx_asm_text(asm: str) -> str:
    """Triton's (LLVM's) operand syntax as C++'s, as a C string literal."""
    text = _OPERAND.sub(lambda m: "%%" if m.group(0) == "%" else
                        ("$" if m.group(1) == "$" else f"%{m.group(1)}"), asm)
    lines = [line.rstrip() for line in textwrap.dedent(text).strip("\n").split("\n")]
    quoted = [line.replace("\\", "\\\\").replace('"', '\\"') for line in lines]
    return "\n    ".join(f'"{q}\\n"' if i < len(quoted) - 1 else f'"{q}"'
                         for i, q in enumerate(quoted))


def _reg_type(constraint: str, bits: int) -> str:
    if constraint == "f":
        return "float"
    if constraint == "d":
        return "double"
    if constraint == "h":
        return "unsigned short"
    return "unsigned long long" if bits > 32 or constraint == "l" else "unsigned int"


def _uint(bits: int) -> str:
    return c_type(D.BY_NAME[f"u{bits}"])


def _asm_input(o, ctype: str, elem_c: str, elem) -> str:
    """An input operand's value: its element(s) (`elem(tensor, k)`), packed into a word of
    the constraint's type where it takes several."""
    if o.per == 1 and ctype == elem_c:
        value = elem(o.tensor, o.first)
    elif o.per == 1:
        value = f"tc::bitcast<{_uint(o.bits)}>({elem(o.tensor, o.first)})"
    else:
        items = ", ".join(elem(o.tensor, o.first + j) for j in range(o.per))
        value = (f"tc::bitcast<{_uint(o.bits)}>(tc::Vec<{elem_c}, {o.per}>"
                 f"{{{{{items}}}}})")
    if ctype in ("float", "double") and ctype != elem_c:
        return f"tc::bitcast<{ctype}>({value})"
    if ctype not in ("float", "double", elem_c, _uint(o.bits)):
        return f"static_cast<{ctype}>({value})"
    return value


class AsmWriter(Writer):
    """tl.inline_asm_elementwise.  It keeps no state of its own."""

    def op_inline_asm(self, op: Op) -> None:
        pack = op.attrs["pack"]
        outs, ins = op.results, op.operands
        tensors = [*outs, *ins]
        block = outs[0].type.is_block
        regs = outs[0].layout.regs if block else 1
        step = min(pack, regs)  # registers held per thread may be fewer than a pack

        def elem(t: int, k: int) -> str:
            v = tensors[t]
            if not block:
                return self.exprs.text(v, "r") if t >= len(outs) else self.names.name(v)
            idx = "r" if k == 0 else (f"r + {k}" if k < step else f"r + {step - 1}")
            return self.exprs.text(v, idx) if t >= len(outs) else f"{self.names.name(v)}[{idx}]"

        for v in outs:
            self.core.declare(v)
        lines, out_args, in_args, unpack = [], [], [], []
        for i, o in enumerate(op.attrs["operands"]):
            t = tensors[o.tensor]
            ctype, elem_c = _reg_type(o.constraint, o.bits), c_type(t.dtype)
            if o.tensor < len(outs):
                var = self.names.fresh("asm_out")
                lines.append(f"{ctype} {var};")
                out_args.append(f'"={o.constraint}"({var})')
                raw = var if ctype in ("float", "double", _uint(o.bits)) else \
                    f"static_cast<{_uint(o.bits)}>({var})"
                if o.per == 1:
                    value = var if ctype == elem_c else f"tc::bitcast<{elem_c}>({raw})"
                    if o.first < step:
                        unpack.append(f"{elem(o.tensor, o.first)} = {value};")
                else:
                    vec = self.names.fresh(f"{self.names.name(t)}_unpacked")
                    unpack.append(f"const auto {vec} = tc::bitcast<tc::Vec<{elem_c}, {o.per}>>"
                                  f"({raw});")
                    for j in range(o.per):
                        if o.first + j < step:
                            unpack.append(f"{elem(o.tensor, o.first + j)} = {vec}[{j}];")
            else:
                in_args.append(f'"{o.constraint}"({_asm_input(o, ctype, elem_c, elem)})')
        clobbers = op.attrs["clobbers"]
        volatile = "" if op.attrs["pure"] else " volatile"
        parts = [", ".join(out_args), ", ".join(in_args)]
        if clobbers:
            parts.append(", ".join(f'"{c}"' for c in clobbers))
        lines.append(f"asm{volatile}({cxx_asm_text(op.attrs['asm'])}\n    : " +
                     "\n    : ".join(parts) + ");")
        lines += unpack
        if not block:
            with self.out.block():
                for line in lines:
                    self.out.line(line)
            return
        self.out.line(self.ctx.macros.register_loop(regs, lines, step=step))
