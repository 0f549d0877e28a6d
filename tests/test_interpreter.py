"""Every kernel of tests/kernels.py on the NumPy interpreter, against its NumPy reference.

Hypothesis draws the problem size (smaller than a block, a multiple of it, or not),
the masked or mask-free specialization where a kernel has one, and the input data; each
(case, dtype) pair is its own test.  Also: bounds checking and device assertions report
the user's line, and TILECC_INTERPRET=1 routes ordinary launches to the interpreter.
"""

from __future__ import annotations

import copy
import io
import inspect
import os
import re
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl
import tilecc.testing as tt

try:
    import kernels as K
except ImportError:  # tests/ imported as a package
    from tests import kernels as K

KERNELS_FILE = os.path.abspath(K.__file__)


def _dtype_id(dt) -> str:
    if isinstance(dt, tuple):
        return "->".join(K.tl_name(d) for d in dt)
    return K.tl_name(dt)


def _params():
    for case in K.CASES:
        for dt in case.dtypes:
            yield pytest.param(case, dt, id=f"{case.name}-{_dtype_id(dt)}")


def _max_examples(case: K.Case) -> int:
    # 5 examples per dtype, fewer where a case has very many dtype combinations (each run
    # draws new ones: database=None; the suite's ten minutes on 2 cores bound the count)
    return 3 if len(case.dtypes) > 20 else 5


def sizes(case: K.Case):
    """tilecc.testing's sizes for the case's block: tiny, whole blocks, one less and one
    more than a multiple, primes, anything up to `max_n`."""
    return tt.sizes(case.block, max_size=case.max_n)


def assert_output(actual: np.ndarray, expected: np.ndarray, tol: tuple[float, float],
                  what: str) -> None:
    """tilecc.testing's comparison (reports the worst element and its index) with the
    case's tolerance for floats, exact for integers and bools."""
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, what
    tt.assert_close(actual, expected, tt.Tolerance(*tol) if K.is_float(actual.dtype)
                    else tt.EXACT, what)


def run_case(case: K.Case, dtype, n: int, seed: int, masked: bool = True) -> None:
    rng = np.random.default_rng(seed)
    args = case.make_args(n, dtype, rng, masked=masked)
    before = copy.deepcopy(args)
    with np.errstate(all="ignore"):  # references overflow where the kernels do
        expected = case.reference(copy.deepcopy(args))
    assert len(expected) == len(case.outputs)
    case.kernel.interpret[case.grid(n)](*args, **K.unfused(dtype))
    for i, (a, b) in enumerate(zip(args, before)):
        if isinstance(a, np.ndarray) and i not in case.outputs:
            np.testing.assert_array_equal(  # (bit for bit: a bf16 NaN is no NaN to NumPy)
                a.view(np.uint8), b.view(np.uint8), err_msg=f"input argument {i} was modified")
    for idx, exp in zip(case.outputs, expected):
        assert_output(args[idx], exp, case.tol(args[idx].dtype),
                      f"{case.name}: output argument {idx} (n={n}, masked={masked})")


@pytest.mark.parametrize("case,dtype", list(_params()))
def test_case_matches_numpy(case: K.Case, dtype) -> None:
    masks = st.booleans() if case.unmasked else st.just(True)

    @settings(max_examples=_max_examples(case), deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(n=sizes(case), masked=masks, seed=st.integers(0, 2**32 - 1))
    def check(n: int, masked: bool, seed: int) -> None:
        if not masked:  # the mask-free specialization needs whole blocks
            n = max(case.block, K.cdiv(n, case.block) * case.block)
        note(f"n={n} masked={masked} seed={seed}")
        run_case(case, dtype, n, seed, masked)

    check()


def test_every_size_class_is_drawn_for_masked_cases() -> None:
    """The size strategy covers n < block, n % block == 0 and a partial last block."""
    seen = set()

    @settings(max_examples=60, deadline=None, database=None)
    @given(n=sizes(K.ADD))
    def collect(n):
        seen.add("small" if n < 64 else ("whole" if n % 64 == 0 else "partial"))

    collect()
    assert seen == {"small", "whole", "partial"}


# --- bounds checks and assertions -----------------------------------------------------------

def _line_of(fn, text: str) -> int:
    """The line number, in its file, of the line of `fn`'s source containing `text`."""
    lines, first = inspect.getsourcelines(fn)
    hits = [first + i for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def test_out_of_bounds_load_names_the_line() -> None:
    n = 100  # not a multiple of 64, but the mask-free specialization is forced
    x, y, out = (np.ones(n, np.float32) for _ in range(3))
    with pytest.raises(tilecc.InterpreterError) as excinfo:
        K.add_kernel.interpret[(2,)](x, y, out, n, 64, True)
    msg = str(excinfo.value)
    line = _line_of(K.add_kernel.fn, "x = tl.load(x_ptr + offsets)")
    assert f"{KERNELS_FILE}:{line}:" in msg
    assert "x = tl.load(x_ptr + offsets)" in msg
    assert "out-of-bounds load" in msg and "`x_ptr`" in msg and "100 elements" in msg
    assert "program (1, 0, 0)" in msg
    np.testing.assert_array_equal(out[:64], 2)  # program 0 ran to completion
    np.testing.assert_array_equal(out[64:], 1)  # program 1 stopped at its first load


@tilecc.jit
def unmasked_store_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x + 1.0)  # forgot the mask


def test_out_of_bounds_store_names_the_line() -> None:
    x = np.arange(40, dtype=np.float32)
    out = np.zeros(40, np.float32)
    with pytest.raises(tilecc.InterpreterError) as excinfo:
        unmasked_store_kernel.interpret[(1,)](x, out, 40, 64)
    msg = str(excinfo.value)
    line = _line_of(unmasked_store_kernel.fn, "tl.store(out_ptr + offs, x + 1.0)")
    assert f"{os.path.abspath(__file__)}:{line}:" in msg
    assert "out-of-bounds store" in msg and "`out_ptr`" in msg
    assert re.search(r"element 40\b", msg), msg


def test_failing_device_assert_raises() -> None:
    x = np.array([4.0, -1.0, 9.0], np.float32)
    out = np.zeros(3, np.float32)
    with pytest.raises(tilecc.InterpreterError) as excinfo:
        K.checked_sqrt_kernel.interpret[(1,)](x, out, 3, 64)
    msg = str(excinfo.value)
    line = _line_of(K.checked_sqrt_kernel.fn, "tl.device_assert(")
    assert f"{KERNELS_FILE}:{line}:" in msg
    assert "sqrt of a negative number" in msg


def test_failing_assert_statement_raises() -> None:
    x = np.zeros(1, np.float32)
    out = np.zeros(1, np.float32)
    with pytest.raises(tilecc.InterpreterError) as excinfo:
        K.checked_sqrt_kernel.interpret[(1,)](x, out, 0, 64)
    line = _line_of(K.checked_sqrt_kernel.fn, "assert n > 0")
    assert f"{KERNELS_FILE}:{line}:" in str(excinfo.value)
    assert "empty input" in str(excinfo.value)


def test_passing_device_assert_is_silent() -> None:
    run_case(K.ASSERTS, np.dtype(np.float32), 70, seed=1)


# --- TILECC_INTERPRET=1 ---------------------------------------------------------------------

def test_tilecc_interpret_env_routes_launches_to_the_interpreter(monkeypatch) -> None:
    monkeypatch.setenv("TILECC_INTERPRET", "1")
    rng = np.random.default_rng(0)
    x, y = rng.random(200).astype(np.float32), rng.random(200).astype(np.float32)
    out = np.zeros(200, np.float32)
    K.add_kernel[(K.cdiv(200, 64),)](x, y, out, 200, BLOCK_SIZE=64, EVEN=False)
    np.testing.assert_array_equal(out, x + y)


def test_tilecc_interpret_env_with_a_grid_function(monkeypatch) -> None:
    monkeypatch.setenv("TILECC_INTERPRET", "1")
    x = np.arange(130, dtype=np.int16)
    out = np.zeros_like(x)
    K.add_kernel[lambda meta: (tilecc.cdiv(130, meta["BLOCK_SIZE"]),)](
        x, x, out, 130, BLOCK_SIZE=32, EVEN=False)
    np.testing.assert_array_equal(out, 2 * x)


# --- device arrays: copied to the host with the memory they span ----------------------------

@tilecc.jit
def bump_two_views(a_ptr, b_ptr, rows, cols, stride_r, stride_c, BR: tl.constexpr,
                   BC: tl.constexpr):
    r = tl.arange(0, BR)[:, None]
    c = tl.arange(0, BC)[None, :]
    m = (r < rows) & (c < cols)
    offs = r * stride_r + c * stride_c
    tl.store(a_ptr + offs, tl.load(a_ptr + offs, mask=m) + 1.0, mask=m)
    tl.store(b_ptr + offs, tl.load(b_ptr + offs, mask=m) + 10.0, mask=m)


def _fake_cupy(monkeypatch):
    """A stand-in for CuPy whose "device" memory is host memory at the same addresses: the
    interpreter's device path (copy what the arrays span to the host and back) runs on a
    machine without a GPU."""
    import ctypes
    import sys
    import types

    def at(ptr, size):
        return np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(ptr))

    class Memory:
        def __init__(self, ptr, size, owner, device_id=-1):
            self.ptr, self.size, self.owner = ptr, size, owner

    class Pointer:
        def __init__(self, mem, offset):
            self.ptr, self.mem = mem.ptr + offset, mem

    class ndarray:  # noqa: N801  (CuPy's name)
        def __init__(self, shape, dtype, memptr):
            self.size, self.memptr = shape[0], memptr

        def get(self):
            return at(self.memptr.ptr, self.size).copy()

        def set(self, host):
            at(self.memptr.ptr, self.size)[...] = host

    class Device:
        def __init__(self, device_id):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    runtime = types.SimpleNamespace(deviceSynchronize=lambda: None)
    cuda = types.SimpleNamespace(Device=Device, UnownedMemory=Memory, MemoryPointer=Pointer,
                                 runtime=runtime)
    fake = types.SimpleNamespace(cuda=cuda, ndarray=ndarray, uint8=np.uint8)
    monkeypatch.setitem(sys.modules, "cupy", fake)

    class DeviceArray:
        """A "CuPy array": a view of the fake device memory, as CuPy describes one."""

        def __init__(self, view: np.ndarray):
            self.view, self.shape, self.strides = view, view.shape, view.strides
            self.dtype, self.itemsize = view.dtype, view.itemsize
            self.device = types.SimpleNamespace(id=0)
            self.data = types.SimpleNamespace(ptr=view.ctypes.data)

        def get(self):  # CuPy's copies, compacted
            return np.ascontiguousarray(self.view)

        def set(self, host):
            self.view[...] = host

    DeviceArray.__module__ = "cupy._core.core"
    return DeviceArray


def test_strided_device_views_keep_their_strides_and_share_their_memory(monkeypatch):
    """Two interleaved views of one device buffer (its even and odd columns), each updated
    through its strides: the interpreter copies the memory they span once, with their
    strides, so neither reads the other's elements nor writes back stale ones."""
    device_array = _fake_cupy(monkeypatch)
    memory = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    want = memory.copy()
    bump_two_views.interpret[(1,)](want[1:5, 0::2], want[1:5, 1::2], 4, 4, 8, 2, BR=4, BC=4)
    assert not np.array_equal(want, memory)  # NumPy views: the reference
    bump_two_views.interpret[(1,)](device_array(memory[1:5, 0::2]),
                                   device_array(memory[1:5, 1::2]), 4, 4, 8, 2, BR=4, BC=4)
    np.testing.assert_array_equal(memory, want)


# --- CPU torch tensors: viewed, bfloat16 included ----------------------------------------------


@pytest.mark.parametrize("dtype_name", ["float32", "float16", "bfloat16"])
def test_cpu_torch_tensors_are_read_and_written_in_place(dtype_name):
    """CPU torch tensors are the kernel's memory (the result lands in the caller's tensor);
    bfloat16, which `Tensor.numpy()` refuses, goes through its bit pattern."""
    torch = pytest.importorskip("torch")
    dtype = getattr(torch, dtype_name)
    x = torch.linspace(-3, 3, 130).to(dtype)
    y = torch.arange(130, dtype=torch.float32).to(dtype)
    out = torch.zeros(130, dtype=dtype)
    K.add_kernel.interpret[(K.cdiv(130, 64),)](x, y, out, 130, BLOCK_SIZE=64, EVEN=False)
    assert torch.equal(out, x + y)


# --- the progress line of long runs --------------------------------------------------------

@tilecc.jit
def _fill(out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream", [_Terminal, io.StringIO], ids=["terminal", "log"])
def test_a_long_interpreter_run_says_how_far_it_is(stream, monkeypatch):
    """A clock that advances a second per reading: a terminal gets the line, rewritten in
    place and erased at the end; a log gets one whole line after 10 s."""
    from tilecc.interpreter import progress

    ticks = iter(range(10_000))
    monkeypatch.setattr(progress, "_clock", lambda: float(next(ticks)))
    monkeypatch.delenv("TILECC_PROGRESS", raising=False)
    err = stream()
    monkeypatch.setattr(sys, "stderr", err)
    out = np.zeros(12 * 8, np.int32)
    _fill.interpret[(12,)](out, BLOCK=8)
    assert (out == np.arange(out.size)).all()
    text = err.getvalue()
    if stream is _Terminal:
        shown = [part.rstrip() for part in text.split("\r") if part.strip()]
        assert shown == [f"interpreting _fill: program {i}/12" for i in range(3, 13)]
        assert text.endswith("\r") and text.split("\r")[-2].strip() == ""  # erased
    else:
        assert text == "interpreting _fill: program 10/12 (10 s)\n"


def test_short_runs_and_tilecc_progress_0_show_nothing(monkeypatch):
    from tilecc.interpreter import progress

    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    _fill.interpret[(12,)](np.zeros(96, np.int32), BLOCK=8)  # well under DELAY
    ticks = iter(range(10_000))
    monkeypatch.setattr(progress, "_clock", lambda: float(next(ticks)))
    monkeypatch.setenv("TILECC_PROGRESS", "0")
    _fill.interpret[(12,)](np.zeros(96, np.int32), BLOCK=8)
    assert err.getvalue() == ""


SCALE = tl.constexpr(2)  # read by scaled_kernel; the test below changes it


@tilecc.jit
def scaled_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * SCALE, mask=mask)


def test_the_interpreter_traces_a_specialization_once_and_sees_changed_globals(
        monkeypatch) -> None:
    from tilecc.runtime import compiler

    traced = []
    real = compiler.lower

    def counting(*args, **kwargs):
        traced.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(compiler, "lower", counting)
    x = np.arange(10, dtype=np.float32)
    for n in (10, 7, 3):  # one specialization (n is not a multiple of 8 or 16, nor 1)
        out = np.zeros_like(x)
        scaled_kernel.interpret[(1,)](x, out, n, BLOCK=16)
        np.testing.assert_array_equal(out[:n], x[:n] * 2)
    assert len(traced) == 1
    monkeypatch.setattr(sys.modules[__name__], "SCALE", tl.constexpr(3))
    out = np.zeros_like(x)
    scaled_kernel.interpret[(1,)](x, out, 10, BLOCK=16)
    np.testing.assert_array_equal(out, x * 3)
    assert len(traced) == 2
