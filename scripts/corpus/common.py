"""What the corpus's library modules share: one call of an op (`Case`), the registry of a
library's ops, small input helpers.

A library module (`lib_<name>.py` beside this file) names its PyPI release and says how to
import it from its unpacked source; its ops are registered with `Ops.op` as generators of
`Case`s.  It imports torch at most at module level: `triton` is imported only once the
worker has chosen what `triton` is (tilecc's compatibility mode, or Triton itself).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable, Iterator

import torch


@dataclass
class Case:
    """One call: `inputs` (tensors, or anything passed as is) go to the library's op (`fn`)
    and, upcast to float32, to the plain-PyTorch reference (`ref`); `grad` lists the inputs
    whose gradients are compared (backward runs through `bwd_outputs`, default all)."""

    label: str
    inputs: list
    fn: Callable
    ref: Callable
    atol: float
    rtol: float
    grad: list = field(default_factory=list)
    backward: bool = True
    bwd_atol: float | None = None
    bwd_rtol: float | None = None
    bwd_outputs: list | None = None


class NotApplicable(Exception):
    """The op has no Triton path to run here (it needs CUDA, or it has no kernel)."""


class Ops:
    """A library's ops: name -> (the module to import first, the generator of its cases)."""

    def __init__(self):
        self.table: dict[str, tuple[str | None, Callable[[str], Iterator[Case]]]] = {}

    def op(self, name: str, module: str | None = None):
        def register(fn):
            self.table[name] = (module, fn)
            return fn
        return register

    def __iter__(self):
        return iter(self.table)

    def __getitem__(self, name):
        return self.table[name]


def module(name: str):
    return importlib.import_module(name)


F32 = (torch.float32, 1e-5, 1e-5)
BF16 = (torch.bfloat16, 1e-1, 2e-2)
F16 = (torch.float16, 2e-2, 1e-2)


def rnd(*shape, dtype=torch.float32, device="cpu", scale=1.0):
    """Standard normal values drawn on the CPU (the same in every process for one seed)."""
    return (torch.randn(shape, dtype=torch.float32) * scale).to(dtype).to(device)


def label(shape, dtype) -> str:
    return f"{'x'.join(map(str, shape))} {str(dtype).replace('torch.', '')}"


def without_torch_compile() -> None:
    """`torch.compile` as the identity: a stand-in where a library compiles host-side
    helpers at import (torch's inductor imports parts of Triton beyond the language)."""
    def identity(fn=None, **kwargs):
        return fn if fn is not None else (lambda f: f)

    torch.compile = identity
