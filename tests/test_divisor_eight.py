"""Ints that are multiples of 8 but not of 16 (1000, 4104): keyed apart at launch and
specialized as `i32:8`, so that rows of 16-bit elements with such a stride, and masks over
such lengths, move in 16-byte vectors (and stream into tl.dot's stages with cp.async).
Triton keys 16 only, and loads them 2 bytes at a time.  (The GPU runs the matmul at
200 x 264 x 72 and 1000³ in test_coalesce.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.runtime.compiler import describe_specs
from tilecc.runtime.launch import args as launch_args
from tilecc.transpiler import specialize as SP

try:
    from test_blocks import load_example
except ImportError:  # tests/ imported as a package
    from tests.test_blocks import load_example

MM = load_example("matmul")


@tilecc.jit
def scale_rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=0.0)
    tl.store(y_ptr + row * stride + offs, x * 2, mask=offs < n_cols)


@pytest.mark.parametrize("value,divisible_by_16,divisor", [
    (1000, False, 8), (1016, False, 8), (1001, False, 1), (1004, False, 1), (1008, True, 1),
    (-8, False, 8), (2**33 + 8, False, 8)])
def test_launch_values_specialize_on_eight(value, divisible_by_16, divisor) -> None:
    x = np.zeros(16, np.float16)
    specs, _ = scale_rows.specs_for({"x_ptr": x, "y_ptr": x, "n_cols": value, "stride": 3,
                                     "BLOCK": 16})
    n = specs[2]
    assert (n.divisible_by_16, n.divisor, n.equals_one) == (divisible_by_16, divisor, False)
    assert specs[3].divisor == 1  # 3


def test_the_warm_key_tells_eight_apart() -> None:
    """The keys of the warm path (the generic one, and the generated one, each its own key
    space) hold what specs_for specializes on: 1000 and 1016 share one, 1001 and 1008
    have others."""
    def key(v, make=lambda v: v):
        binder = launch_args.make_binder((False,), [make(v)])
        return tuple(launch_args.arg_key((False,), [make(v)])[0]), binder([make(v)])[0]
    for make in (int, np.int32):
        assert key(1000, make) == key(1016, make)
        assert len({key(1000, make), key(1001, make), key(1008, make)}) == 3
    assert key(2**40 + 8) == key(2**40 + 24) != key(2**40 + 4)


def test_signatures_take_eight() -> None:
    spec = SP._spec_from_entry("n", "i32:8")
    assert (spec.divisor, spec.divisible_by_16) == (8, False)
    assert describe_specs([spec]) == ["n: i32 (multiple of 8)"]
    with pytest.raises(ValueError, match=":16, :8 or :1"):
        SP._spec_from_entry("n", "i32:4")


def _accesses(signature: str, **kw) -> str:
    src = MM.matmul_kernel.source(signature, **kw)
    return src[src.index("// Memory accesses"):src.index("#include")]


def test_a_stride_of_1000_moves_16_byte_vectors() -> None:
    """The matmul example at 1000³ (fp16): every load and the store are 16-byte vectors,
    and tl.dot's operands stream in with cp.async — not 2-byte loads as without `:8`."""
    sig = "*fp16:16,*fp16:16,*fp16:16,{d},{d},{d},{d},i32:1,{d},i32:1,{d},i32:1,64,128,32,8,''"
    eight = _accesses(sig.format(d="i32:8"), num_warps=4, num_stages=4, arch="sm_90a")
    plain = _accesses(sig.format(d="i32"), num_warps=4, num_stages=4, arch="sm_90a")
    assert eight.count("8 x fp16 (16 B)") == 3 and "aligned to 2 B" not in eight
    assert plain.count("1 x fp16 along") == 3
    src = MM.matmul_kernel.source(sig.format(d="i32:8"), num_warps=4, num_stages=4,
                                  arch="sm_90a")
    assert "tc::cp_async<16>(" in src and "tc::wgmma_m64n128k16_f16_ss" in src


def test_the_interpreter_and_numpy_agree_at_a_stride_of_eight() -> None:
    """Rows of 1000 fp32 through the interpreter, which runs the IR the passes leave."""
    x = np.random.default_rng(0).standard_normal((3, 1000)).astype(np.float32)
    y = np.zeros_like(x)
    scale_rows.interpret[(3,)](x, y, 1000, 1000, BLOCK=1024)
    np.testing.assert_array_equal(y, 2 * x)
