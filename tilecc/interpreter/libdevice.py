"""The interpreter's libdevice: an `extern` op evaluated by its table row's NumPy
implementation, in the signature's dtypes, the result converted to the op's dtype."""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpreterError
from tilecc.language.extra.libdevice_table import TABLE
from tilecc.transpiler.ir import Op


def extern(op: Op, args: list):
    fn = TABLE[op.attrs["fn"]]
    if fn.numpy is None:
        raise InterpreterError(f"libdevice.{fn.name} has no interpreter implementation "
                               "(it is an NVIDIA libdevice primitive): run it on the GPU",
                               op.loc)
    arrays = [np.asarray(a, dtype=v.dtype.to_numpy()) for a, v in zip(args, op.operands)]
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(fn.numpy(*arrays))
    except ImportError as e:  # SciPy, for the special functions
        raise InterpreterError(f"libdevice.{fn.name} needs {e.name or 'SciPy'} in the "
                               "interpreter: pip install scipy", op.loc) from None
    t = op.result.dtype.to_numpy()
    out = out.astype(t) if out.dtype != t else out
    return out if out.ndim else out[()]
