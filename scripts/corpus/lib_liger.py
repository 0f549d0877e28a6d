"""Liger-Kernel (github.com/linkedin/Liger-Kernel): norms, activations, rotary embeddings,
losses, fused MoE; one kernel per op, mostly row-wise with `tl.program_id` and masks.
The cases and references are liger_cases*.py's."""

from __future__ import annotations

import os
import sys
import types

from liger_cases import OPS  # noqa: F401 - the ops, their cases and references

RELEASE = "liger-kernel==0.8.5"
ARCHIVE = "liger_kernel-0.8.5-py3-none-any.whl"
ROOT = ""  # the package lies at the top of the wheel
DEPS: list[str] = []
MARKERS = ("liger_kernel/",)


def load(src: str, device: str) -> None:
    """`liger_kernel.ops.<op>` importable one by one: the package's __init__ imports every
    op, so one that failed to import would take all the others with it."""
    sys.path.insert(0, src)
    import liger_kernel  # noqa: F401 - an empty package
    import liger_kernel.utils as lu

    ops = types.ModuleType("liger_kernel.ops")
    ops.__path__ = [os.path.join(src, "liger_kernel", "ops")]
    ops.__file__ = os.path.join(ops.__path__[0], "__init__.py")
    sys.modules["liger_kernel.ops"] = ops
    liger_kernel.ops = ops
    lu.infer_device = lambda: device  # Liger picks per-device constants from this
    import torch.distributed.tensor  # noqa: F401 - Liger tests isinstance(x, DTensor)
    if device == "cpu":  # one config per fused-MoE kernel: the interpreter would run them all
        os.environ.setdefault("LIGER_FUSED_MOE_AUTOTUNE", "0")
