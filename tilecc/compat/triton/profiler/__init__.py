"""`triton.profiler` (proton) under the compatibility mode: tilecc's own profiler, with
Triton's calls.

    import triton.profiler as proton
    proton.start("matmul", hook="triton")     # a session; hook: record kernel launches
    with proton.scope("cublas", {"flops16": 2. * M * N * K, "bytes": ...}):
        ...
    proton.deactivate(0); proton.activate(0)
    proton.finalize()                         # writes matmul.hatchet

    import triton.profiler.viewer as proton_viewer
    tree, metrics = proton_viewer.parse(["tflop16/s", "time/ms"], "matmul.hatchet")
    proton_viewer.print_tree(tree, metrics)

Each launch of a tilecc kernel while a session with `hook="triton"` is active is a frame
named by its `launch_metadata` "name" (`@triton.jit(launch_metadata=fn)`, fn(grid, kernel,
args) -> {"name": ..., "flops16": ..., "bytes": ...}), timed by GPU events on its stream
(the wall clock on the interpreter).  `recorder.py` says what a frame holds and what the
file is; `viewer.py` reads it without Triton's hatchet and pandas.
"""

from tilecc.compat.triton.profiler import context, flags, specs  # noqa: F401
from tilecc.compat.triton.profiler.profile import (DEFAULT_PROFILE_NAME, activate,  # noqa: F401
                                                   deactivate, finalize, profile, start)
from tilecc.compat.triton.profiler.scope import (cpu_timed_scope, enter_scope,  # noqa: F401
                                                 exit_scope, scope)
from tilecc.compat.triton.profiler.state import enter_state, exit_state, state  # noqa: F401
