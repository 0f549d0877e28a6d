"""tilecc.testing: strategies, tolerances, comparisons, `Launch.check`, the pytest plugin —
and that it catches deliberately wrong kernels and shrinks them to small counterexamples."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tomllib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import tilecc
import tilecc.language as tl
import tilecc.testing as tt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BF16 = np.dtype(ml_dtypes.bfloat16)
FAST = settings(max_examples=25, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
# Finding and shrinking bugs: deterministic, the one bug reported as it was raised, and no
# "explain" phase (it re-runs the shrunk example many times to annotate the report).
HUNT = settings(max_examples=200, deadline=None, database=None, derandomize=True,
                report_multiple_bugs=False, suppress_health_check=list(HealthCheck),
                phases=[Phase.explicit, Phase.generate, Phase.shrink])


def draws(strategy, n: int = 200) -> list:
    """n examples of a strategy (generation only, no test)."""
    seen = []

    @settings(max_examples=n, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(x):
        seen.append(x)

    collect()
    return seen


# --- kernels --------------------------------------------------------------------------------------

@tilecc.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, BUG: tl.constexpr = ""):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if BUG == "load_mask":
        mask = offs <= n  # reads one element past the end
    else:
        mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    if BUG == "store_mask":
        tl.store(out_ptr + offs, x + y, mask=offs < n - 1)  # drops the last element
    elif BUG == "no_store_mask":
        tl.store(out_ptr + offs, x + y)  # writes past the end of the last block
    else:
        tl.store(out_ptr + offs, x + y, mask=mask)


def add_launch(bug: str = "", block: int = 64) -> tt.Launch:
    return tt.Launch(
        add_kernel,
        args=lambda x, y: dict(x_ptr=x, y_ptr=y, out_ptr=tt.out_like(x), n=x.size,
                               BLOCK=block, BUG=bug),
        grid=lambda meta: (tilecc.cdiv(meta["n"], meta["BLOCK"]),),
        reference=lambda x, y: x + y)


ADD = add_launch()
N = st.shared(tt.sizes(64), key="n")
N16 = st.shared(tt.sizes(16), key="n16")  # bug hunts: fewer elements to shrink away
DT = st.shared(st.one_of(tt.float_dtypes(), tt.integer_dtypes()), key="dt")


@tilecc.jit
def col_logsumexp_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_row, stride_col,
                         BLOCK: tl.constexpr, RESCALE: tl.constexpr = True):
    # log(sum(exp(x[:, c]))) per column c, online over the rows: a running maximum m and
    # a running sum s of exp(x - m), rescaled whenever m grows
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    col_ptrs = x_ptr + cols * stride_col
    m = tl.load(col_ptrs, mask=mask, other=0.0)
    s = m * 0.0 + 1.0
    for r in range(1, n_rows):
        x = tl.load(col_ptrs + r * stride_row, mask=mask, other=0.0)
        m_new = tl.maximum(m, x)
        if RESCALE:
            s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        else:
            s = s + tl.exp(x - m_new)  # forgot to rescale the running sum
        m = m_new
    tl.store(out_ptr + cols, m + tl.log(s), mask=mask)


def _logsumexp(x):
    x = x.astype(np.float64)
    m = x.max(axis=0)
    return m + np.log(np.exp(x - m).sum(axis=0))


def lse_launch(rescale: bool = True) -> tt.Launch:
    return tt.Launch(
        col_logsumexp_kernel,
        args=lambda x: dict(x_ptr=x, out_ptr=tt.out(x.shape[1], x.dtype), n_rows=x.shape[0],
                            n_cols=x.shape[1], stride_row=tt.element_strides(x)[0],
                            stride_col=tt.element_strides(x)[1], BLOCK=8, RESCALE=rescale),
        grid=lambda meta: (tilecc.cdiv(meta["n_cols"], meta["BLOCK"]),),
        reference=_logsumexp,
        tolerance=lambda x: tt.tolerance(x.dtype, "reduction", k=x.shape[0]))


LSE_INPUT = tt.arrays(np.float32, tt.shapes((4, 8)), min_value=-20, max_value=20,
                      layout="any")


# --- strategies -------------------------------------------------------------------------------

def _is_prime(n: int) -> bool:
    return n > 1 and all(n % p for p in range(2, int(n ** 0.5) + 1))


def test_sizes_cover_the_sizes_where_tiling_bugs_live() -> None:
    got = draws(tt.sizes(64), 300)
    assert all(1 <= n <= 4 * 64 + 1 for n in got)
    kinds = {"tiny" if n <= 4 else "multiple" if n % 64 == 0 else
             "one less" if n % 64 == 63 else "one more" if n % 64 == 1 else
             "prime" if _is_prime(n) else "other" for n in got}
    assert {"tiny", "multiple", "one less", "one more", "prime", "other"} <= kinds


def test_sizes_bounds_several_blocks_and_shapes() -> None:
    got = draws(tt.sizes((16, 128), min_size=0, max_size=300), 200)
    assert min(got) == 0 and max(got) <= 300
    assert any(n % 128 in (0, 1, 127) and n > 64 for n in got)
    shapes = draws(tt.shapes((4, 32)), 100)
    assert all(len(s) == 2 and 1 <= s[0] <= 17 and 1 <= s[1] <= 129 for s in shapes)
    with pytest.raises(ValueError):
        tt.sizes(0)


def test_dtype_strategies() -> None:
    floats = set(draws(tt.float_dtypes(), 60))
    assert floats == {np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)}
    assert draws(tt.float_dtypes(), 1)[0] == np.float32  # shrinks to float32
    ints = set(draws(tt.integer_dtypes(unsigned=False), 60))
    assert ints == {np.dtype(f"int{b}") for b in (8, 16, 32, 64)}
    every = set(draws(tt.kernel_dtypes(), 200))
    assert np.dtype(bool) in every and np.dtype(np.uint64) in every and BF16 in every
    f8 = set(draws(tt.float8_dtypes(), 60))
    assert {d.name for d in f8} == {"float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                    "float8_e5m2fnuz"}
    assert draws(tt.float8_dtypes("fp8e4nv"), 1)[0] == np.dtype(ml_dtypes.float8_e4m3fn)
    with pytest.raises(ValueError, match="fp8e4b15"):
        tt.float8_dtypes("fp8e4b15")


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32,
                                   ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2])
def test_values_nan_inf_subnormals_and_range(dtype) -> None:
    dt = np.dtype(dtype)
    fi = ml_dtypes.finfo(dt)
    tiny = float(fi.smallest_normal)

    def cat(arrays):
        return np.concatenate([a.astype(np.float64).ravel() for a in arrays])

    plain = cat(draws(tt.arrays(dt, 8), 60))
    assert np.isfinite(plain).all()
    assert ((plain != 0) & (np.abs(plain) < tiny)).any(), "no subnormals drawn"
    specials = cat(draws(tt.arrays(dt, 8, nan=True, inf=True), 60))
    assert np.isnan(specials).any()
    assert np.isinf(specials).any() == (dt.name != "float8_e4m3fn")  # e4m3fn has no inf
    normal = cat(draws(tt.arrays(dt, 8, subnormal=False), 40))
    assert not ((normal != 0) & (np.abs(normal) < tiny)).any()
    ranged = cat(draws(tt.arrays(dt, 8, min_value=-2, max_value=3), 40))
    assert ranged.min() >= -2 and ranged.max() <= 3
    assert all(a.dtype == dt for a in draws(tt.arrays(dt, 3), 5))


def test_integer_and_bool_values() -> None:
    xs = draws(tt.arrays(np.int8, 16), 100)
    both = np.concatenate(xs)
    assert both.min() == -128 and both.max() == 127
    assert all(a.min() >= 0 for a in draws(tt.arrays(np.int16, 4, min_value=0), 50))
    assert {bool(v) for a in draws(tt.arrays(bool, 4), 30) for v in a} == {False, True}


def test_layouts_offset_and_strided_views() -> None:
    for a in draws(tt.arrays(np.float32, tt.sizes(16), layout="offset"), 30):
        assert a.flags.c_contiguous and a.ctypes.data % 16 != 0
    for a in draws(tt.arrays(np.float32, tt.sizes(16), layout="strided"), 30):
        assert not a.flags.c_contiguous or a.size == 1
        if a.size > 1:  # the gaps hold NaN: a kernel ignoring the stride shows it
            assert tt.element_strides(a)[0] > 1
            memory = np.lib.stride_tricks.as_strided(a, (2,), (a.itemsize,), writeable=False)
            assert np.isnan(memory[1])
    two_d = draws(tt.arrays(np.int32, (3, 4), layout="strided"), 40)
    assert any(a.strides[0] < a.strides[1] for a in two_d), "no transposed layout drawn"
    assert all(a.shape == (3, 4) for a in two_d)
    kinds = {("contiguous" if a.flags.c_contiguous and a.ctypes.data % 16 == 0 else
              "offset" if a.flags.c_contiguous else "strided")
             for a in draws(tt.arrays(np.float32, 8, layout="any"), 60)}
    assert kinds == {"contiguous", "offset", "strided"}


# --- tolerances and comparisons ---------------------------------------------------------------

def test_elementwise_tolerances_are_torch_defaults() -> None:
    # torch.testing.assert_close's defaults (torch/testing/_comparison.py)
    assert tt.tolerance(np.float16) == tt.Tolerance(1e-3, 1e-5)
    assert tt.tolerance(BF16) == tt.Tolerance(1.6e-2, 1e-5)
    assert tt.tolerance(np.float32) == tt.Tolerance(1.3e-6, 1e-5)
    assert tt.tolerance(np.float64) == tt.Tolerance(1e-7, 1e-7)
    assert tt.tolerance(np.int8) == tt.EXACT == tt.tolerance(bool, "reduction", k=100)
    try:
        import torch
        from torch.testing._comparison import _DTYPE_PRECISIONS  # noqa: PLC2701
    except Exception:
        return
    for name in ("float16", "bfloat16", "float32", "float64"):
        assert _DTYPE_PRECISIONS[getattr(torch, name)] == tt.ELEMENTWISE[name]


def test_reduction_and_dot_tolerances_scale_with_sqrt_k() -> None:
    base = tt.tolerance(np.float32)
    red = tt.tolerance(np.float32, "reduction", k=256)
    assert red.rtol == pytest.approx(16 * base.rtol) and red.atol == pytest.approx(16 * base.atol)
    assert tt.tolerance(np.float16, "dot", k=64).rtol == pytest.approx(8e-3)
    assert tt.tolerance(np.float32, "dot", k=4, tf32=True).rtol == pytest.approx(2e-3)
    with pytest.raises(ValueError):
        tt.tolerance(np.float32, "scan")


def test_compare_reports_the_worst_element() -> None:
    exp = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = exp.copy()
    got[0, 1] += 1e-3
    got[2, 3] += 0.5
    c = tt.compare(got, exp)
    assert not c.ok and c.bad == 2 and c.index == (2, 3)
    assert c.actual == pytest.approx(11.5) and c.expected == 11.0
    assert c.first_bad == ((0, 1), (2, 3))
    with pytest.raises(tt.Mismatch, match=r"worst at index \(2, 3\): got 11.5, expected 11.0"):
        tt.assert_close(got, exp, what="out")


def test_compare_nan_inf_rounding_and_integers() -> None:
    a = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    assert tt.compare(a, a.astype(np.float64)).ok  # NaN == NaN, inf == inf
    c = tt.compare(np.array([1.0, np.nan], np.float32), np.array([1.0, 2.0]))
    assert c.bad == 1 and c.index == (1,)
    assert not tt.compare(np.array([np.inf]), np.array([-np.inf])).ok
    # the reference is rounded to the output dtype: float64 overflow is fp16 inf
    assert tt.compare(np.array([np.inf], np.float16), np.array([1e6])).ok
    assert tt.compare(np.array([-56], np.int8), np.array([200])).ok  # wraps, as kernels do
    c = tt.compare(np.array([1, 5, 2], np.int32), np.array([1, 2, 3]))
    assert c.bad == 2 and c.index == (1,)
    assert "shape (3,) but the reference returned shape (2,)" in tt.compare(
        np.zeros(3), np.zeros(2)).describe()
    assert tt.compare(np.full(3, 2.0), 2.0).ok  # a 0-d reference broadcasts


# --- Launch.check ---------------------------------------------------------------------------

@FAST
@given(x=tt.arrays(DT, N, layout="offset"), y=tt.arrays(DT, N))
def test_check_passes_a_correct_kernel(x, y) -> None:
    results = ADD.check(x=x, y=y)
    assert "interpreter" in results
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(results["interpreter"]["out_ptr"], x + y)


def test_run_returns_the_outputs() -> None:
    x = np.arange(70, dtype=np.int16)
    assert (ADD.run(x=x, y=x)["out_ptr"] == 2 * x).all()


@FAST
@given(x=LSE_INPUT)
def test_check_strided_inputs_and_a_reduction_tolerance(x) -> None:
    lse_launch().check(x=x)


@tilecc.jit
def sum_diff_kernel(x_ptr, y_ptr, s_ptr, d_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(s_ptr + offs, x + y, mask=mask)
    tl.store(d_ptr + offs, x - y, mask=mask)


def test_several_outputs_as_tuple_or_dict() -> None:
    launch = tt.Launch(sum_diff_kernel,
                       args=lambda x, y: [x, y, tt.out_like(x), tt.out(x.size, x.dtype),
                                          x.size, 32],
                       grid=lambda meta: (tilecc.cdiv(meta["n"], meta["BLOCK"]),),
                       reference=lambda x, y: (x + y, x - y))
    x, y = np.arange(40.0), np.ones(40)
    launch.check(x=x, y=y)
    launch.replace(reference=lambda x, y: {"d_ptr": x - y, "s_ptr": x + y}).check(x=x, y=y)
    with pytest.raises(tt.Mismatch, match="output `d_ptr`"):
        launch.replace(reference=lambda x, y: (x + y, y - x)).check(x=x, y=y)
    with pytest.raises(TypeError, match="must return 2 values"):
        launch.replace(reference=lambda x, y: x + y).check(x=x, y=y)


@tilecc.jit
def axpy_kernel(x_ptr, y_ptr, a, n, stride_y, BLOCK: tl.constexpr, WRONG: tl.constexpr = 0):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y_ptrs = y_ptr + offs * stride_y
    y = tl.load(y_ptrs, mask=mask)
    if WRONG == 1:
        tl.store(y_ptr + offs, a * x + y, mask=mask)  # ignores the stride of y
    elif WRONG == 2:
        tl.store(x_ptr + offs, x * 0.0, mask=mask)  # scribbles on an input
        tl.store(y_ptrs, a * x + y, mask=mask)
    else:
        tl.store(y_ptrs, a * x + y, mask=mask)


def axpy_launch(wrong: int = 0) -> tt.Launch:
    return tt.Launch(
        axpy_kernel,
        args=lambda x, y, a: dict(x_ptr=x, y_ptr=tt.inout(y), a=a, n=x.size,
                                  stride_y=tt.element_strides(y)[0], BLOCK=16, WRONG=wrong),
        grid=lambda meta: (tilecc.cdiv(meta["n"], meta["BLOCK"]),),
        reference=lambda x, y, a: np.float32(a) * x + y)


def test_inout_with_a_strided_output() -> None:
    x = np.arange(1, 21, dtype=np.float32)
    y = np.ones(60, np.float32)[::3]
    axpy_launch().check(x=x, y=y, a=2.0)
    assert (y == 1).all()  # the caller's arrays are never written


def test_writes_outside_an_output_and_into_an_input_are_caught() -> None:
    x = np.arange(1, 21, dtype=np.float32)
    y = np.ones(60, np.float32)[::3]
    with pytest.raises(tt.Mismatch, match=r"wrote to `y_ptr` outside its elements at element "
                                          r"offsets \[1, 2, 4"):
        axpy_launch(wrong=1).check(x=x, y=y, a=2.0)
    with pytest.raises(tt.Mismatch, match=r"wrote to `x_ptr` \(an input\)"):
        axpy_launch(wrong=2).check(x=x, y=y, a=2.0)


def test_declaration_errors_are_clear() -> None:
    no_out = tt.Launch(add_kernel, args=lambda x: dict(x_ptr=x, y_ptr=x, out_ptr=x, n=x.size,
                                                        BLOCK=64), grid=(1,),
                       reference=lambda x: x)
    with pytest.raises(TypeError, match="marks no output"):
        no_out.check(x=np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="has no reference"):
        ADD.replace(reference=None).check(x=np.zeros(4), y=np.zeros(4))


def test_backends(monkeypatch) -> None:
    monkeypatch.setenv("TILECC_TEST_BACKENDS", "interpreter")
    assert tt.default_backends() == ("interpreter",)
    monkeypatch.delenv("TILECC_TEST_BACKENDS")
    assert tt.default_backends() == (("interpreter", "gpu") if tt.gpu_available()
                                     else ("interpreter",))
    if not tt.gpu_available():
        with pytest.raises(pytest.skip.Exception, match="no CUDA GPU"):
            ADD.replace(backends=("gpu",)).check(x=np.zeros(4), y=np.zeros(4))
    with pytest.raises(ValueError, match="unknown backend"):
        ADD.replace(backends=("tpu",)).check(x=np.zeros(4), y=np.zeros(4))


# --- wrong kernels are caught and shrunk --------------------------------------------------------

def _hunt(launch: tt.Launch, **strategies) -> BaseException:
    """Run a property test of `launch` that must fail; the exception of the shrunk example."""
    @HUNT
    @given(**strategies)
    def prop(**inputs):
        launch.check(**inputs)

    with pytest.raises(Exception) as excinfo:
        prop()
    return excinfo.value


def test_off_by_one_store_mask_is_caught_and_shrunk() -> None:
    err = _hunt(add_launch("store_mask", block=16), x=tt.arrays(DT, N16), y=tt.arrays(DT, N16))
    assert isinstance(err, tt.Mismatch), err
    x = err.inputs["x"]
    assert x.shape == (1,), f"shrunk to {x.shape}"  # the smallest array shows it
    assert err.comparison.index == (0,) and err.output == "out_ptr"
    msg = str(err)
    assert "worst at index (0,)" in msg and "inputs:\n  x = " in msg and "n=1" in msg


def test_off_by_one_load_mask_is_caught_and_shrunk() -> None:
    err = _hunt(add_launch("load_mask", block=16), x=tt.arrays(DT, N16), y=tt.arrays(DT, N16))
    assert isinstance(err, tilecc.InterpreterError), err
    assert "out-of-bounds load" in str(err)
    notes = "\n".join(getattr(err, "__notes__", []))
    assert "while running add_kernel on interpreter" in notes
    assert "x = " in notes and "[1]" in notes  # the shrunk input: one element


def test_missing_rescale_is_caught_and_shrunk() -> None:
    lse_launch().check(x=np.array([[0.0], [5.0]], np.float32))  # the right kernel passes
    err = _hunt(lse_launch(rescale=False), x=LSE_INPUT)
    assert isinstance(err, tt.Mismatch), err
    x = err.inputs["x"]
    # two rows (the running maximum must grow once), one column
    assert x.shape == (2, 1), f"shrunk to shape {x.shape}"
    assert x[1, 0] > x[0, 0]


# --- pytest plugin --------------------------------------------------------------------------

PROBE = '''
import os
import pytest
from hypothesis import settings

@pytest.mark.gpu
def test_needs_gpu():
    pass

def test_cache_dir(tilecc_cache_dir):
    assert os.environ["TILECC_CACHE_DIR"] == str(tilecc_cache_dir)
    assert tilecc_cache_dir.is_dir() and not any(tilecc_cache_dir.iterdir())

def test_profile_loaded():
    assert settings().max_examples == 50 and settings().derandomize
    assert settings().database is None and settings().deadline is None
'''


def _pytest(args: list[str], cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tilecc.testing.pytest_plugin",
                           "-p", "no:cacheprovider", "--strict-markers", "-q", "-rs", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_plugin_in_a_fresh_pytest(tmp_path) -> None:
    """The gpu marker (registered: --strict-markers) skips cleanly without a GPU; the
    cache-dir fixture; the tilecc-ci profile; --require-gpu."""
    (tmp_path / "test_probe.py").write_text(PROBE)
    r = _pytest(["--hypothesis-profile=tilecc-ci", "test_probe.py"], tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    if tt.gpu_available():
        assert "3 passed" in out, out
    else:
        assert "2 passed, 1 skipped" in out and "no CUDA GPU on this machine" in out, out


NO_HYPOTHESIS_PROBE = '''
import pytest
import numpy as np
import tilecc.testing as tt

def test_comparisons_work(tilecc_cache_dir):
    tt.assert_close(np.ones(3, np.float32), np.ones(3, np.float32))

def test_strategies_say_what_to_install():
    with pytest.raises(ImportError) as e:
        tt.sizes(64)
    assert str(e.value).endswith("pip install 'hypothesis>=6.90' 'pytest>=7' (in a checkout "
                                 "of tilecc: pip install '.[testing]')")

@pytest.mark.gpu
def test_on_gpu():
    pass
'''


def test_plugin_without_hypothesis(tmp_path) -> None:
    """Where Hypothesis is not installed, the plugin (loaded as its entry point would be)
    breaks nothing: the run passes, the gpu marker skips; only the strategies need it."""
    stub = tmp_path / "stub" / "hypothesis"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("raise ImportError('No module named hypothesis', "
                                      "name='hypothesis')\n")
    (tmp_path / "test_probe.py").write_text(NO_HYPOTHESIS_PROBE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path / "stub"), ROOT]
        + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # Hypothesis's own plugin is not there either
    env.pop("PYTEST_ADDOPTS", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "tilecc.testing.pytest_plugin",
                        "-p", "no:cacheprovider", "--strict-markers", "-q", "-rs",
                        "test_probe.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    expect = "3 passed" if tt.gpu_available() else "2 passed, 1 skipped"
    assert expect in out, out


def test_tilecc_profile_has_no_deadline() -> None:
    from tilecc.testing.profiles import PROFILES, register_profiles

    assert register_profiles()
    for name in PROFILES:
        profile = settings.get_profile(name)
        assert profile.deadline is None and HealthCheck.too_slow in profile.suppress_health_check


def test_examples_load_the_tilecc_profile() -> None:
    with open(os.path.join(ROOT, "examples", "testing", "conftest.py")) as f:
        assert 'settings.load_profile("tilecc")' in f.read()


def test_require_gpu_makes_a_missing_gpu_an_error(monkeypatch) -> None:
    from tilecc.testing import pytest_plugin

    class Config:
        def getoption(self, name):
            return name == "--require-gpu"

    class Item:
        def get_closest_marker(self, name):
            return pytest.mark.gpu if name == "gpu" else None

    monkeypatch.setattr(pytest_plugin, "_gpu", lambda: False)
    with pytest.raises(pytest.UsageError, match="--require-gpu: 1 tests are marked gpu"):
        pytest_plugin.pytest_collection_modifyitems(Config(), [Item()])


def _example_tests():
    import importlib.util

    sys.path.insert(0, os.path.join(ROOT, "examples"))
    folder = os.path.join(ROOT, "examples", "testing")
    for name in sorted(os.listdir(folder)):
        if name.startswith("test_") and name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(f"tilecc_examples_{name[:-3]}",
                                                          os.path.join(folder, name))
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            for attr, fn in sorted(vars(module).items()):
                if attr.startswith("test_") and callable(fn):
                    yield pytest.param(fn, id=f"{name[:-3]}::{attr}",
                                       marks=list(getattr(fn, "pytestmark", [])))


@pytest.mark.parametrize("example_test", list(_example_tests()))
def test_examples_testing(example_test) -> None:
    """examples/testing, with few examples: the worked examples keep working."""
    settings(max_examples=10, deadline=None, database=None, derandomize=True,
             phases=[Phase.explicit, Phase.generate, Phase.shrink])(example_test)()


def test_plugin_entry_point_is_declared() -> None:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    eps = project["entry-points"]["pytest11"]
    # named as its module, so conftest's pytest_plugins and `-p` never load it twice
    assert eps == {"tilecc.testing.pytest_plugin": "tilecc.testing.pytest_plugin"}


def test_cache_dir_fixture(tilecc_cache_dir) -> None:
    assert os.environ["TILECC_CACHE_DIR"] == str(tilecc_cache_dir)


# --- on the GPU -----------------------------------------------------------------------------

GPU = dict(backends=("gpu",), frameworks=("cupy", "torch"))


@pytest.mark.gpu
@FAST
@given(x=tt.arrays(DT, N, layout="offset"), y=tt.arrays(DT, N))
def test_gpu_add_with_cupy_and_torch(x, y) -> None:
    results = ADD.replace(**GPU).check(x=x, y=y)
    assert set(results) <= {"gpu:cupy", "gpu:torch"} and results


@pytest.mark.gpu
@FAST
@given(x=tt.arrays(tt.float_dtypes(), N, layout="offset"), y=st.data())
def test_gpu_bfloat16_goes_through_torch(x, y) -> None:
    pytest.importorskip("torch")
    y = y.draw(tt.arrays(x.dtype, x.size))
    results = ADD.replace(backends=("gpu",)).check(x=x, y=y)
    assert list(results) == (["gpu:torch"] if x.dtype == BF16 else ["gpu:cupy"])


@pytest.mark.gpu
@FAST
@given(x=LSE_INPUT)
def test_gpu_strided_reduction(x) -> None:
    lse_launch().replace(**GPU).check(x=x)


@pytest.mark.gpu
def test_gpu_wrong_kernels_are_caught_and_shrunk() -> None:
    err = _hunt(add_launch("store_mask", block=16).replace(backends=("gpu",)),
                x=tt.arrays(DT, N16), y=tt.arrays(DT, N16))
    assert isinstance(err, tt.Mismatch) and err.inputs["x"].shape == (1,), err
    err = _hunt(lse_launch(rescale=False).replace(backends=("gpu",)), x=LSE_INPUT)
    assert isinstance(err, tt.Mismatch) and err.inputs["x"].shape == (2, 1), err


@pytest.mark.gpu
def test_gpu_writes_past_the_end_hit_the_guard() -> None:
    # BLOCK 16 of float32 is 64 bytes: the stray writes stay inside the 64-byte guard
    launch = add_launch("no_store_mask", block=16).replace(backends=("gpu",))
    x = np.arange(13, dtype=np.float32)
    with pytest.raises(tt.Mismatch, match=r"wrote to `out_ptr` outside its elements at "
                                          r"element offsets \[13, 14, 15\]"):
        launch.check(x=x, y=x)


# --- tilecc.testing.batch: many kernels per compiler run -------------------------------------

def _fake_compiler(monkeypatch, fails) -> list[int]:
    """batch.compile_batch replaced by a compiler that fails where `fails(texts)`; the
    sizes of the runs it was asked for."""
    from tilecc.testing import batch

    runs: list[int] = []

    def compile_batch(texts, target, arch, options=()):
        runs.append(len(texts))
        if fails(texts):
            raise RuntimeError(f"rejected: {[t for t in texts if 'bad' in t]}")
    monkeypatch.setattr(batch, "compile_batch", compile_batch)
    return runs


def test_batch_failures_halves_a_failing_batch_down_to_its_culprits(monkeypatch) -> None:
    from tilecc.testing import batch

    runs = _fake_compiler(monkeypatch, lambda texts: any("bad" in t for t in texts))
    texts = {i: ("bad" if i in (5, 41) else "fine") + f" kernel {i}" for i in range(64)}
    failed = batch.failures(texts, "hip", "gfx90a")
    assert sorted(failed) == [5, 41]
    assert "bad kernel 41" in str(failed[41])
    # a run per halving on the way to each culprit, not one per source
    assert len(runs) <= 2 * 2 * 6 + 1 < len(texts), runs
    runs.clear()
    assert batch.failures({i: f"fine {i}" for i in range(8)}, "hip", "gfx90a") == {}
    assert runs == [8]


def test_batch_failures_names_no_culprit_for_a_clash_of_two_sources(monkeypatch) -> None:
    """Sources that fail only together (a name both define): none fails alone, none is
    named."""
    from tilecc.testing import batch

    _fake_compiler(monkeypatch, lambda texts: {"a", "b"} <= set(texts))
    assert batch.failures({0: "a", 1: "x", 2: "b", 3: "y"}, "cuda", "sm_90") == {}
