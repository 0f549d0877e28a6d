"""What a specialization is made of: declared parameters and their `ArgSpec`s.

Kept apart from the frontend (and its libcst parser) so that the launch path and the disk
cache can specialize and compute keys without importing the transpiler.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from tilecc.language import dtypes as D


@dataclass(frozen=True)
class ParamDecl:
    name: str
    is_constexpr: bool
    default: Any = inspect.Parameter.empty


@dataclass(frozen=True)
class ArgSpec:
    """How one parameter is specialized: a constexpr value, or a run-time type."""

    name: str
    constexpr: Any = None
    is_constexpr: bool = False
    type: D.dtype | D.pointer_type | None = None
    divisible_by_16: bool = False
    equals_one: bool = False
