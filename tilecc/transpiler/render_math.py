"""The C++ call of a libdevice function (`extern` op): the CUDA math API or HIP function
its `libdevice_table` row names for the operands' dtypes, or a CompilationError at the
user's line where the row refuses the target."""

from __future__ import annotations

from tilecc.errors import CompilationError
from tilecc.language.extra.libdevice_table import TABLE
from tilecc.transpiler.ir import Op
from tilecc.transpiler.target import CompileTarget, c_type


def extern_call(op: Op, target: CompileTarget, args: list[str]) -> str:
    fn = TABLE[op.attrs["fn"]]
    sig = fn.signature(tuple(v.dtype.short for v in op.operands))
    name = getattr(sig, target.name)  # the row's column: cuda, hip
    if name is None:
        raise CompilationError(
            f"libdevice.{fn.name} of ({', '.join(sig.args)}) is not available on AMD GPUs "
            f"(target {target.name}): {fn.why_not_hip}", op.loc)
    call = name.format(", ".join(args)) if "{}" in name else f"{name}({', '.join(args)})"
    if sig.c_result:  # the C function returns another type (unsigned, bool): Triton's here
        return f"static_cast<{c_type(op.result.dtype)}>({call})"
    return call
