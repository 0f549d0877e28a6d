"""Every function of Triton 3.6's language — `tl`, `tl.math`, `tl.random`, `tl.extra.cuda`,
`tl.extra.hip` — exists in tilecc's with the same parameters (names, kinds, defaults), and
its constants with the same values: tests/data/triton36_language.json, written from an
installed Triton by scripts/triton_signatures.py (libdevice: tests/test_libdevice.py)."""

from __future__ import annotations

import enum
import importlib
import inspect
import json
from pathlib import Path

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.language.core import KernelFunction, constexpr

TRITON = json.loads((Path(__file__).parent / "data" / "triton36_language.json").read_text())


def _tilecc(name: str):
    module_name, _, attr = name.rpartition(".")
    module = importlib.import_module("tilecc.language" + (f".{module_name}" if module_name
                                                          else ""))
    return getattr(module, attr)


def _default(value):
    """A default as the JSON table writes Triton's (constexprs by value, dtypes by name)."""
    value = value.value if isinstance(value, constexpr) else value
    if isinstance(value, tl.dtype):
        return {"dtype": value.name}
    if isinstance(value, enum.Enum):
        return {"enum": value.name}
    return list(value) if isinstance(value, tuple) else value


def _parameters(obj) -> list:
    fn = obj.fn if isinstance(obj, KernelFunction) else obj
    return [[p.name, p.kind.name, "required" if p.default is p.empty else "default",
             None if p.default is p.empty else _default(p.default)]
            for p in inspect.signature(fn).parameters.values()]


def test_the_table_is_triton_3_6_s() -> None:
    assert TRITON["triton"] == "3.6.0" and len(TRITON["functions"]) > 130


@pytest.mark.parametrize("name", sorted(TRITON["functions"]))
def test_function_takes_triton_s_parameters(name: str) -> None:
    assert _parameters(_tilecc(name)) == TRITON["functions"][name]


@pytest.mark.parametrize("name", sorted(TRITON["constants"]))
def test_constant_has_triton_s_value(name: str) -> None:
    value = _tilecc(name)
    assert (value.value if isinstance(value, constexpr) else value) == TRITON["constants"][name]


@tilecc.jit
def arithmetic_kernel(x_ptr, y_ptr, out_ptr, flags_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    inside = offs < n
    x = tl.load(x_ptr + offs, mask=inside, other=-1)
    y = tl.load(tl.add(y_ptr, offs), mask=inside, other=0)  # pointer + offsets, as `+`
    total = tl.add(x, y, sanitize_overflow=False)
    tl.store(out_ptr + offs, tl.mul(tl.sub(total, 1), 3), mask=inside)
    tl.device_assert(x >= 0, "x is negative", mask=inside)  # the padding -1 is not checked
    tl.store(flags_ptr, tl.TRITON_MAX_TENSOR_NUMEL == 1 << 20)


def test_add_sub_mul_and_a_masked_device_assert() -> None:
    x = np.arange(5, dtype=np.int32)
    y = np.full(5, 7, np.int32)
    out, flags = np.zeros(5, np.int32), np.zeros(1, np.int32)
    arithmetic_kernel.interpret[(1,)](x, y, out, flags, 5, BLOCK=8)
    np.testing.assert_array_equal(out, (x + y - 1) * 3)
    assert flags[0] == 1
    x[2] = -4  # inside the mask: the assertion fails
    with pytest.raises(tilecc.InterpreterError, match="x is negative"):
        arithmetic_kernel.interpret[(1,)](x, y, out, flags, 5, BLOCK=8)


@tilecc.jit
def torch_spellings_kernel(x_ptr, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if CASE == "tl.squeeze":
        y = tl.squeeze(x[None, :], 0)
    elif CASE == ".unsqueeze()":
        y = x.unsqueeze(0)
    tl.store(x_ptr + tl.arange(0, 16), y)


@pytest.mark.parametrize("case, advice", [("tl.squeeze", "tl.reshape(x, (N,))"),
                                          (".unsqueeze()", "tl.expand_dims(x, axis)")])
def test_names_triton_lacks_say_what_triton_writes(case, advice) -> None:
    with pytest.raises(tilecc.CompilationError) as e:
        torch_spellings_kernel.source(f"*fp32:16,{case!r}")
    assert f"`{case}` is not in Triton 3.6's language" in str(e.value)
    assert advice in str(e.value) and e.value.python_error == "AttributeError"
