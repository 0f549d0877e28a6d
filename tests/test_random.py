"""Triton's random numbers (`tl.rand`, `tl.randn`, `tl.randint`, `tl.randint4x`,
`tl.philox` and the rest of `tl.random`): bit for bit Triton's, on the interpreter.

The reference bits were made by Triton itself (scripts/triton_random_reference.py, from
the kernels and cases of tests/triton_random_kernels.py); the GPU's agreement with the
interpreter is tests/kernels.py's random cases, run by tests/test_gpu_cases.py.
"""

import json
import os

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.cli_input import load_file, load_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS_FILE = os.path.join(HERE, "triton_random_kernels.py")
REFERENCE = os.path.join(HERE, "data", "triton_random_reference.json")

K = load_file(KERNELS_FILE)  # its `import triton` served by tilecc where Triton is absent


def _reference() -> dict:
    with open(REFERENCE) as f:
        return json.load(f)["cases"]


def run_case(case) -> np.ndarray:
    """A case's output on the interpreter."""
    name, kernel, scalars, arrays, constexprs, outputs, out_dtype = case
    out = np.zeros(K.output_size(case), dtype=out_dtype)
    values = {**scalars, **K.case_arrays(case)}
    fn = load_kernel(f"{KERNELS_FILE}:{kernel}")
    fn.interpret[(1,)](out, *[values[a] for a in K.argument_order(case)], **constexprs)
    return out


@pytest.mark.parametrize("case", K.CASES, ids=[c[0] for c in K.CASES])
def test_bits_equal_tritons(case):
    out = run_case(case)
    expected = np.array(_reference()[case[0]], dtype=f"u{out.itemsize}")
    got = out.view(f"u{out.itemsize}")
    wrong = np.flatnonzero(got != expected)
    assert wrong.size == 0, (f"{wrong.size} of {got.size} differ from Triton's, first at "
                             f"{wrong[0]}: {got[wrong[0]]:#x} != {expected[wrong[0]]:#x}")


# outputs (rows) drawn through Box-Muller: the GPU's log is approximate (see kernels.py's
# random_randn), so these agree to a tolerance there; every other row bit for bit
NORMAL_ROWS = {"floats_kernel": (1, 6, 7, 8, 9), "uniform_of_philox_kernel": (2, 3)}


@pytest.mark.gpu
@pytest.mark.parametrize("case", K.CASES, ids=[c[0] for c in K.CASES])
def test_gpu_bits_equal_tritons(case):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    name, kernel, scalars, arrays, constexprs, outputs, out_dtype = case
    out = torch.zeros(K.output_size(case), dtype=getattr(torch, out_dtype), device="cuda")
    values = {**scalars, **{k: torch.from_numpy(v).cuda() for k, v in K.case_arrays(case).items()}}
    fn = load_kernel(f"{KERNELS_FILE}:{kernel}")
    fn[(1,)](out, *[values[a] for a in K.argument_order(case)], **constexprs)
    got = out.cpu().numpy()
    interpreted = run_case(case)
    expected = np.array(_reference()[name], dtype=f"u{got.itemsize}").view(got.dtype)
    np.testing.assert_array_equal(interpreted, expected)  # the interpreter is Triton's
    rows_got, rows_expected = got.reshape(outputs, -1), expected.reshape(outputs, -1)
    for row, (g, e) in enumerate(zip(rows_got, rows_expected)):
        if row in NORMAL_ROWS.get(kernel, ()):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-3, err_msg=f"{name} row {row}")
        else:
            np.testing.assert_array_equal(g.view(f"u{g.itemsize}"), e.view(f"u{e.itemsize}"),
                                          err_msg=f"{name} row {row}: not Triton's bits")


def test_reference_covers_every_case():
    # a case added without regenerating the reference would be skipped silently otherwise
    assert sorted(_reference()) == sorted(c[0] for c in K.CASES)


# --- properties ------------------------------------------------------------------------------

@tilecc.jit
def draw_kernel(ints_ptr, uniform_ptr, normal_ptr, four_ptr, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(ints_ptr + offsets, tl.randint(seed, offsets))
    tl.store(uniform_ptr + offsets, tl.rand(seed, offsets))
    tl.store(normal_ptr + offsets, tl.randn(seed, offsets))
    r0, r1, r2, r3 = tl.randint4x(seed, offsets)
    n = tl.num_programs(0) * BLOCK
    tl.store(four_ptr + offsets, r0)
    tl.store(four_ptr + n + offsets, r1)
    tl.store(four_ptr + 2 * n + offsets, r2)
    tl.store(four_ptr + 3 * n + offsets, r3)


def _draw(seed: int, programs: int = 16, block: int = 1024):
    n = programs * block
    ints, four = np.zeros(n, np.uint32), np.zeros(4 * n, np.uint32)
    uniform, normal = np.zeros(n, np.float32), np.zeros(n, np.float32)
    draw_kernel.interpret[(programs,)](ints, uniform, normal, four, seed, BLOCK=block)
    return ints, uniform, normal, four.reshape(4, n)


def test_distributions():
    ints, uniform, normal, four = _draw(seed=5)
    n = uniform.size
    assert ints.dtype == np.uint32
    assert uniform.min() >= 0.0 and uniform.max() < 1.0
    # 16384 draws: the mean of U(0, 1) within 5 standard errors, and its variance 1/12
    assert abs(uniform.mean() - 0.5) < 5 * np.sqrt(1 / 12 / n)
    assert abs(uniform.var() - 1 / 12) < 0.005
    assert abs(normal.mean()) < 5 / np.sqrt(n)
    assert abs(normal.var() - 1) < 0.05
    assert np.isfinite(normal).all()
    # randint is randint4x's first stream; the four streams differ from one another
    np.testing.assert_array_equal(four[0], ints)
    assert len({tuple(row[:64]) for row in four}) == 4
    # every bit of the integers is used about half the time
    ones = np.unpackbits(four.view(np.uint8)).mean()
    assert abs(ones - 0.5) < 0.01


def test_seed_and_offset_select_the_stream():
    a = _draw(seed=5, programs=1, block=256)
    b = _draw(seed=6, programs=1, block=256)
    again = _draw(seed=5, programs=1, block=256)
    for x, y in zip(a, again):
        np.testing.assert_array_equal(x, y)
    assert (a[0] != b[0]).mean() > 0.99


def test_rand_is_the_scaled_integer():
    ints, uniform, _, _ = _draw(seed=1234, programs=1, block=1024)
    signed = ints.view(np.int32)
    folded = np.where(signed < 0, -(signed.astype(np.int64)) - 1, signed)
    np.testing.assert_array_equal(uniform, folded.astype(np.float32) * np.float32(4.6566127342e-10))


# --- tl.umulhi ---------------------------------------------------------------------------

@tilecc.jit
def umulhi_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.umulhi(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@pytest.mark.parametrize("dtype", ["uint32", "int32", "uint64", "int64"])
def test_umulhi_is_the_high_half_of_the_unsigned_product(dtype):
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=256, dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, size=256, dtype=dtype, endpoint=True)
    x[:4] = [info.max, info.min, 0, -1 if info.min else 1]
    y[:4] = [info.max, info.max, info.max, info.max]
    out = np.zeros_like(x)
    umulhi_kernel.interpret[(1,)](x, y, out, BLOCK=256)
    bits = info.bits
    unsigned = f"u{info.bits // 8}"
    expected = [(int(a) * int(b)) >> bits for a, b in zip(x.view(unsigned), y.view(unsigned))]
    np.testing.assert_array_equal(out.view(unsigned), np.array(expected, dtype=unsigned))


def test_umulhi_refuses_other_types():
    @tilecc.jit
    def bad(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, tl.umulhi(x, x))

    with pytest.raises(tilecc.CompilationError, match="int32, int64, uint32 or uint64"):
        bad.interpret[(1,)](np.zeros(16, np.int16), BLOCK=16)


def test_philox_refuses_a_float_seed():
    @tilecc.jit
    def bad(out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.rand(1.5, offs))

    with pytest.raises(tilecc.CompilationError, match="seed of Philox must be an integer") as e:
        bad.interpret[(1,)](np.zeros(16, np.float32), BLOCK=16)
    # at the user's call, not inside tilecc's library
    assert e.value.loc.file == __file__ and "tl.rand(1.5, offs)" in str(e.value)
    assert str(e.value).endswith("tl.rand(): static assertion failed: the seed of Philox must "
                                 "be an integer")


# --- generated code ------------------------------------------------------------------------

@tilecc.jit
def normal_kernel(out_ptr, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.randn(seed, offs), mask=offs < n)


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_philox_rounds_are_written_once_each(target):
    # Philox's words are built from offsets alone, like index arithmetic; recomputed at each
    # use, every round would write the one before twice (2**10 copies in one expression)
    source = normal_kernel.source("*fp32:16,i32,i32,1024", target=target)
    assert source.count("tc::umulhi(") <= 2 * 10  # two per round, or fewer (dead ones)
    assert max(len(line) for line in source.splitlines()) < 400


def test_dropout_example_runs_and_checks_itself(capsys):
    # examples/dropout.py (Triton's low-memory dropout tutorial) on the interpreter: its own
    # checks against a NumPy Philox, the same mask from the same seed, another from another
    import importlib.util

    path = os.path.join(HERE, os.pardir, "examples", "dropout.py")
    spec = importlib.util.spec_from_file_location("example_dropout", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main()
    assert "the mask matches NumPy's Philox" in capsys.readouterr().out


@tilecc.jit
def integer_hash_kernel(out_ptr, BLOCK: tl.constexpr):
    h = tl.arange(0, BLOCK).to(tl.uint32)
    for _ in tl.static_range(12):  # each step reads h twice
        h = (h * 2654435761) ^ (h >> 15)
    tl.store(out_ptr + tl.arange(0, BLOCK), h)


def test_index_arithmetic_that_reads_a_value_twice_per_step_is_kept_in_variables():
    # built from tl.arange alone, h is "index arithmetic", recomputed at each use; written
    # out whole, step 12 would hold 2**12 copies of step 0
    source = integer_hash_kernel.source("*u32:16, 256")
    assert max(len(line) for line in source.splitlines()) < 400
    out = np.zeros(256, np.uint32)
    integer_hash_kernel.interpret[(1,)](out, BLOCK=256)
    h = np.arange(256, dtype=np.uint32)
    for _ in range(12):
        h = (h * np.uint32(2654435761)) ^ (h >> np.uint32(15))
    np.testing.assert_array_equal(out, h)
