"""The vendor builtins of `tl.extra.cuda` and `tl.extra.hip` (declared in
`tilecc.language.extra.cuda` / `.hip`): the launch's size as constexprs, the hardware's
counters, grid dependency control.

Registered as "cuda.<name>" / "hip.<name>".  Each works on both targets where the other
vendor has the same thing (an SM id, the number of threads); a counter only one vendor has
is an error on the other that names the one to use (`check_counters`, when source is
written for a target: the interpreter reads the host's clock for either).
"""

from __future__ import annotations

from tilecc.errors import CompilationError
from tilecc.language import dtypes as D
from tilecc.transpiler.builtin_registry import handles
from tilecc.transpiler.fp8 import FP8E4B15_REFUSED
from tilecc.transpiler.ir import Kernel, Type
from tilecc.transpiler.semantic import Const

# counter → (its dtype, the target that has it, what to use on the other one)
COUNTERS = {
    "globaltimer": (D.int64, "cuda", "on AMD GPUs use tl.extra.hip.memrealtime() (a 100 MHz "
                                     "real-time counter)"),
    "smid": (D.int32, None, ""),
    "memrealtime": (D.int64, "hip", "on NVIDIA GPUs use tl.extra.cuda.globaltimer() (in "
                                    "nanoseconds)"),
}


@handles("cuda.num_warps")
def _num_warps(tracer, name):
    return Const(tracer.kernel.num_warps)


@handles("cuda.num_threads")
def _num_threads(tracer, name):
    return Const(tracer.kernel.num_warps * tracer.b.target.warp_size)


@handles("cuda.globaltimer", "cuda.smid", "hip.memrealtime")
def _counter(tracer, name):
    counter = name.split(".")[1]
    return tracer.b.emit("counter", [], Type(COUNTERS[counter][0]), counter=counter,
                         spelt=f"tl.extra.{name}()")


def check_counters(kernel: Kernel, target_name: str) -> None:
    """A CompilationError at the first counter `target_name` ("cuda", "hip") has not."""
    for op in kernel.walk():
        if op.kind == "counter":
            _, only_on, instead = COUNTERS[op.attrs["counter"]]
            if only_on not in (None, target_name):
                vendor = "NVIDIA" if only_on == "cuda" else "AMD"
                raise CompilationError(f"{op.attrs['spelt']} reads a counter of {vendor} GPUs, "
                                       f"which {target_name.upper()} code cannot; {instead}",
                                       op.loc)


@handles("cuda.gdc_wait", "cuda.gdc_launch_dependents")
def _grid_dependency(tracer, name):
    return Const(None)  # no dependent launches: nothing to wait for, nothing to release


@handles("cuda.convert_custom_float8_sm80", "cuda.convert_custom_float8_sm70")
def _convert_custom_float8(tracer, name, arg, dst_ty, fp_downcast_rounding):
    raise TypeError(f"tl.extra.{name}() converts to and from tl.float8e4b15: "
                    f"{FP8E4B15_REFUSED}")
