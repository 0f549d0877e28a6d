"""`triton.runtime.autotuner` under the compatibility mode."""

from tilecc.runtime.autotune import (Autotuner, Config, Heuristics, autotune,  # noqa: F401
                                     heuristics)
