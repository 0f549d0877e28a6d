"""`libdevice`: the math of Triton's `triton.language.extra.libdevice` (NVIDIA's libdevice
and AMD's ocml), one stub per row of `libdevice_table.TABLE`.

`from tilecc.language.extra import libdevice` then `libdevice.tanh(x)` in a kernel; the
same functions answer to `tilecc.language.extra.cuda.libdevice` and `.hip.libdevice`, and
kernels written against `triton.language.extra[.cuda|.hip].libdevice` resolve here.  Each
function takes the dtypes of its row only (fp32 / fp64 for most), as Triton does.
"""

from __future__ import annotations

from typing import Any

from tilecc.language.core import OutsideKernelError
from tilecc.language.extra.libdevice_table import TABLE


def _stub(name: str, arity: int):
    params = ", ".join(f"arg{i}" for i in range(arity))
    namespace: dict[str, Any] = {}
    exec(f"def {name}({params}):\n    pass", namespace)  # Triton's parameter names
    fn = namespace[name]

    def outside_kernel(*args: Any, **kwargs: Any):
        raise OutsideKernelError(f"libdevice.{name}() can only be called inside a "
                                 "@tilecc.jit kernel (or a helper it calls)")

    outside_kernel.__name__ = outside_kernel.__qualname__ = name
    outside_kernel.__module__ = __name__
    outside_kernel.__wrapped__ = fn  # inspect.signature reads the parameters from it
    sigs = "; ".join(f"({', '.join(s.args)}) -> {s.result}" for s in TABLE[name].signatures)
    outside_kernel.__doc__ = f"libdevice `{name}`: {sigs}."
    outside_kernel.__tilecc_builtin__ = f"libdevice.{name}"
    return outside_kernel


for _name, _fn in TABLE.items():
    globals()[_name] = _stub(_name, _fn.arity)

__all__ = sorted(TABLE)
