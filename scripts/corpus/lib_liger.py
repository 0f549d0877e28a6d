"""Liger-Kernel (github.com/linkedin/Liger-Kernel): norms, activations, rotary embeddings,
losses, fused MoE; one kernel per op, mostly row-wise with `tl.program_id` and masks.
The cases are scripts/liger_cases*.py's (those of scripts/run_liger.py)."""

from __future__ import annotations

import os
import sys
import types

from common import Case, Ops

RELEASE = "liger-kernel==0.8.5"
ARCHIVE = "liger_kernel-0.8.5-py3-none-any.whl"
ROOT = ""  # the package lies at the top of the wheel
DEPS: list[str] = []

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import liger_cases  # noqa: E402 - the ops and their references
import liger_cases_losses  # noqa: E402,F401 - registers the losses and larger ops

OPS = Ops()


def _wrap(cases):
    def each(dev):
        for c in cases(dev):
            fields = dict(vars(c))
            fields["fn"] = fields.pop("liger")
            yield Case(**fields)
    return each


for _name, (_module, _cases) in liger_cases.OPS.items():
    OPS.table[_name] = (f"liger_kernel.ops.{_module}", _wrap(_cases))


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
