"""Grid dependency control (programmatic dependent launch, sm_90+): `gdc_wait()` and
`gdc_launch_dependents()`.  tilecc launches no kernel as a dependent launch (Triton's
`launch_pdl` option is not supported), so there is never a prior grid to wait for nor a
dependent one to release: both are no-ops, on every target, as the instructions are on
a launch without the feature."""

from __future__ import annotations

import functools

from tilecc.language.core import builtin

cuda_builtin = functools.partial(builtin, vendor="cuda")


@cuda_builtin
def gdc_wait():
    """Wait for the grid this one depends on (a no-op: tilecc makes no dependent launches)."""


@cuda_builtin
def gdc_launch_dependents():
    """Let the dependent grid start (a no-op: tilecc makes no dependent launches)."""
