"""Scans over many placements: 1-D and 2-D blocks of 2 to 1024 elements along the scanned
axis, 1, 4 and 8 warps, each axis, forward and reverse, tl.cumsum and an associative_scan
of two operands with a combine function that does not commute (a linear recurrence).
Compiled by NVRTC (sm_80, sm_90) and hiprtc (gfx90a, 64-lane wavefronts) with no warnings
and no spills, and run on the GPU (`pytest -m gpu`) against NumPy."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                    require_hip_compiler)
    from test_compile_kernels import TARGETS, assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                          require_hip_compiler)
    from tests.test_compile_kernels import TARGETS, assert_clean_compile


@tilecc.jit
def _affine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@tilecc.jit
def scan_rows_1d(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(b, 0))
    tl.store(out_ptr + N + offs, tl.cumsum(b, 0, reverse=True))
    _, h = tl.associative_scan((a, b), 0, _affine)
    tl.store(out_ptr + 2 * N + offs, h)
    _, hr = tl.associative_scan((a, b), 0, _affine, reverse=True)
    tl.store(out_ptr + 3 * N + offs, hr)


@tilecc.jit
def scan_rows_2d(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(b, 0))
    tl.store(out_ptr + M * N + offs, tl.cumsum(b, 1, reverse=True))
    _, h1 = tl.associative_scan((a, b), 1, _affine)
    tl.store(out_ptr + 2 * M * N + offs, h1)
    _, h0r = tl.associative_scan((a, b), 0, _affine, reverse=True)
    tl.store(out_ptr + 3 * M * N + offs, h0r)


@tilecc.jit
def scan_wide_1d(x_ptr, out_ptr, N: tl.constexpr):
    """64-bit values through the shuffles (two 32-bit halves), both directions."""
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(x, 0))
    tl.store(out_ptr + N + offs, tl.cumsum(x, 0, reverse=True))


SHAPES_1D = (2, 16, 128, 1024)
SHAPES_2D = ((2, 8), (16, 16), (64, 16), (8, 128), (32, 32), (256, 16))  # (256, 16): more
# runs x warps x lines than threads (their prefixes are combined in a loop)
WARPS = (1, 4, 8)


def _cases():
    """(kernel, signature, options, shape) for each block and warp count."""
    for n in SHAPES_1D:
        for w in WARPS:
            yield scan_rows_1d, f"*fp32:16,*fp32:16,*fp32:16,{n}", {"num_warps": w}, (n,)
    for m, n in SHAPES_2D:
        for w in WARPS:
            if m * n > 64 * 32 * w:
                continue  # two operands of over 32 values a thread: through shared memory
            yield (scan_rows_2d, f"*fp32:16,*fp32:16,*fp32:16,{m},{n}", {"num_warps": w},
                   (m, n))


CASES = list(_cases())
WIDE = [(scan_wide_1d, f"*i64:16,*i64:16,{n}", {"num_warps": w}, (n,))
        for n, w in ((128, 1), (1024, 4))]


def _id(case) -> str:
    return f"{'x'.join(map(str, case[3]))}-w{case[2]['num_warps']}"


def _affine_scan(a: np.ndarray, b: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    a, b = np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0)
    order = range(a.shape[0] - 1, -1, -1) if reverse else range(a.shape[0])
    h, out = None, np.empty_like(b)
    for i in order:
        h = b[i] if h is None else h * a[i] + b[i]
        out[i] = h
    return np.moveaxis(out, 0, axis)


def _reference(a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    flip = lambda x, ax: np.flip(np.cumsum(np.flip(x, ax), ax), ax)  # noqa: E731
    if a.ndim == 1:
        return [np.cumsum(b), flip(b, 0), _affine_scan(a, b, 0, False),
                _affine_scan(a, b, 0, True)]
    return [np.cumsum(b, 0), flip(b, 1), _affine_scan(a, b, 1, False),
            _affine_scan(a, b, 0, True)]


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_scan_source_stays_in_registers(case) -> None:
    """Every case scans in registers: shuffles between the lanes of a line (up, or down
    for reverse=True), no block-sized copy through shared memory."""
    kernel, signature, options, shape = case
    for target in ("cuda", "hip"):
        src = kernel.source(signature, target=target, **options)
        assert src.count("in registers along axis") == 4, src
        assert "through shared memory: " not in src
        lanes_used = "lane_pos" in src
        assert lanes_used == ("tc::shfl_up" in src) == ("tc::shfl_down" in src)


@pytest.mark.parametrize("target,arch", TARGETS)
def test_scan_layouts_compile_cleanly(target: str, arch: str) -> None:
    """All cases of a target in one compiler run; each alone, to name it, only if that
    fails."""
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    listed = lambda: [(k, s, o) for k, s, o, _ in CASES + WIDE]  # noqa: E731
    if not compile_cleanly_together("scan_layouts", target, arch, listed):
        for kernel, signature, options, _ in CASES + WIDE:
            assert_clean_compile(kernel, signature, target, arch, **options)


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_scan_layouts_on_gpu(case) -> None:
    cupy = pytest.importorskip("cupy")
    kernel, _, options, shape = case
    rng = np.random.default_rng(0)
    a = rng.choice([0.5, 1.0], size=shape).astype(np.float32)
    b = (rng.integers(-8, 8, size=shape) * 0.25).astype(np.float32)
    out = cupy.zeros(4 * a.size, dtype=cupy.float32)
    kernel[(1,)](cupy.asarray(a.ravel()), cupy.asarray(b.ravel()), out, *shape, **options)
    got = cupy.asnumpy(out).reshape((4,) + shape)
    for k, want in enumerate(_reference(a.astype(np.float64), b.astype(np.float64))):
        np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=1e-4, err_msg=f"output {k}")


@pytest.mark.gpu
@pytest.mark.parametrize("case", WIDE, ids=_id)
def test_wide_scans_on_gpu(case) -> None:
    cupy = pytest.importorskip("cupy")
    kernel, _, options, (n,) = case
    x = np.random.default_rng(1).integers(-2**40, 2**40, n, dtype=np.int64)
    out = cupy.zeros(2 * n, dtype=cupy.int64)
    kernel[(1,)](cupy.asarray(x), out, n, **options)
    got = cupy.asnumpy(out)
    np.testing.assert_array_equal(got[:n], np.cumsum(x))
    np.testing.assert_array_equal(got[n:], np.cumsum(x[::-1])[::-1])


@pytest.mark.parametrize("shape", [(16,), (8, 16)], ids=str)
def test_scan_layouts_reference_on_interpreter(shape) -> None:
    """The GPU test's kernels and reference agree on the interpreter."""
    kernel = scan_rows_1d if len(shape) == 1 else scan_rows_2d
    rng = np.random.default_rng(0)
    a = rng.choice([0.5, 1.0], size=shape).astype(np.float32)
    b = (rng.integers(-8, 8, size=shape) * 0.25).astype(np.float32)
    out = np.zeros(4 * a.size, dtype=np.float32)
    kernel.interpret[(1,)](a.ravel(), b.ravel(), out, *shape)
    for k, want in enumerate(_reference(a.astype(np.float64), b.astype(np.float64))):
        np.testing.assert_allclose(out.reshape((4,) + shape)[k], want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("target,arch", [("cuda", "sm_90"), ("hip", "gfx90a")])
def test_shared_memory_scan_still_compiles_cleanly(monkeypatch, target: str, arch: str) -> None:
    """The shared-memory scan (kept for operands in different placements, which the layout
    pass does not make today) still renders and compiles: one thread per line and chunks
    of a line per thread."""
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    from tilecc.runtime.native_compile import compile_for
    from tilecc.transpiler.render import INCLUDE_DIR
    from tilecc.transpiler.render_scan import Scans

    monkeypatch.setattr(Scans, "write", lambda self, op: self.scan_in_shared(op))
    sources = [scan_rows_2d.source("*fp32:16,*fp32:16,*fp32:16,64,16", target=target,
                                   num_warps=1),
               scan_rows_1d.source("*fp32:16,*fp32:16,*fp32:16,1024", target=target,
                                   num_warps=4)]
    assert "one thread scans each of the 64 lines" in sources[0]
    assert "threads scan each of the 1 line of 1024" in sources[1].replace("\n    //   ", " ")
    for src in sources:
        log = compile_for(target, src, arch=arch, options=[f"-I{INCLUDE_DIR}"]).log or ""
        assert "warning" not in log.lower(), log


def test_scan_of_many_values_a_thread_goes_through_shared_memory() -> None:
    """A thread holding more of the operands' values than REGISTER_SCAN_VALUES scans
    through shared memory (in registers the block would crowd out the rest: spills); up to
    that, in registers."""
    from tilecc.transpiler.render_scan import REGISTER_SCAN_VALUES

    def kinds(values_a_thread: int) -> tuple[int, int]:
        src = scan_rows_1d.source(f"*fp32:16,*fp32:16,*fp32:16,{32 * values_a_thread}",
                                  num_warps=1)
        return src.count("in registers along"), src.count("through shared memory: ")

    # tl.cumsum holds one operand, the recurrence two: 4 scans of each kernel
    assert kinds(REGISTER_SCAN_VALUES // 2) == (4, 0)
    assert kinds(REGISTER_SCAN_VALUES) == (2, 2)
    assert kinds(2 * REGISTER_SCAN_VALUES) == (0, 4)


def test_runs_read_the_totals_before_them_unless_that_makes_many_reads(monkeypatch) -> None:
    """Behind one barrier each run reads the warps' totals before it in its line, where that
    makes at most DIRECT_PREFIX_READS reads a thread; past that (or with the bound at 0)
    each entry's prefix is combined once into a second array behind a second barrier.
    Both forms are among CASES, which run on the GPU."""
    from tilecc.transpiler import render_scan

    def form(shape, warps):
        kernel, sig = (scan_rows_2d, "*fp32:16,*fp32:16,*fp32:16,{},{}") if len(shape) == 2 \
            else (scan_rows_1d, "*fp32:16,*fp32:16,*fp32:16,{}")
        src = kernel.source(sig.format(*shape), num_warps=warps)
        direct = re.search(r"before\d* = warp_totals\d*\[line_start \+ earlier\]", src) is None \
            and re.search(r"entry\d* = warp_totals", src) is not None
        return ("runs_before" in src, direct, src.count("__syncthreads()"))

    assert form((64, 16), 4) == (False, True, 2)  # two scans across warps: a barrier each
    assert form((1024,), 8) == (False, True, 4)
    assert form((256, 16), 8)[0]  # (256 x 16 along axis 0: many reads)
    monkeypatch.setattr(render_scan, "DIRECT_PREFIX_READS", 0)
    assert form((64, 16), 4) == (True, False, 4)


@tilecc.jit
def scan_into_generated_names(x_ptr, out_ptr, N: tl.constexpr):
    """The scans' results named as the locals of the warps' exchange (`before`, `entry`,
    `line_start`, `place`, `own_entry`, `runs_before`)."""
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    before = tl.cumsum(x, 0)
    entry = tl.cumsum(x, 0, reverse=True)
    line_start, place, own_entry, runs_before = before + 1, entry + 2, before * 3, entry * 4
    tl.store(out_ptr + offs, before)
    tl.store(out_ptr + N + offs, entry)
    tl.store(out_ptr + 2 * N + offs, line_start + place + own_entry + runs_before)


def _expected_named_scans(x: np.ndarray) -> np.ndarray:
    before, entry = np.cumsum(x), np.cumsum(x[::-1])[::-1]
    return np.concatenate([before, entry, before + 1 + entry + 2 + before * 3 + entry * 4])


@pytest.mark.parametrize("direct", [True, False])
def test_scan_results_named_as_the_exchange_locals_keep_their_own_names(direct,
                                                                        monkeypatch) -> None:
    """The locals the warps' exchange declares (the totals before a run, an entry, a
    line's start) were not reserved: a result named `before` was hidden by the exchange's
    own `before`, whose cross-warp prefix then never reached it.  Both exchange forms."""
    from tilecc.transpiler import render_scan

    if not direct:
        monkeypatch.setattr(render_scan, "DIRECT_PREFIX_READS", 0)
    kernel = tilecc.jit(scan_into_generated_names.fn)  # (caches of its own: one form each)
    src = kernel.source("*fp32:16,*fp32:16,1024", num_warps=8)
    assert ("float* runs_before = " in src) != direct  # (the form asked for)
    for name in ("before", "entry", "line_start", "place", "own_entry", "runs_before"):
        assert re.search(rf"\b{name}_\[", src), name  # the user's, renamed
    # on the interpreter, as the reference the GPU test holds the compiled kernel to
    x = (np.random.default_rng(5).integers(-8, 8, 1024) * 0.25).astype(np.float32)
    out = np.zeros(3 * 1024, np.float32)
    scan_into_generated_names.interpret[(1,)](x, out, 1024, num_warps=8)
    np.testing.assert_allclose(out, _expected_named_scans(x.astype(np.float64)), atol=1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("direct", [True, False])
def test_scan_results_named_as_the_exchange_locals_on_gpu(direct, monkeypatch) -> None:
    cupy = pytest.importorskip("cupy")
    from tilecc.transpiler import render_scan

    if not direct:
        monkeypatch.setattr(render_scan, "DIRECT_PREFIX_READS", 0)
        monkeypatch.setenv("TILECC_CACHE", "0")  # (the disk cache does not know the bound)
    kernel = tilecc.jit(scan_into_generated_names.fn)
    x = (np.random.default_rng(6).integers(-8, 8, 1024) * 0.25).astype(np.float32)
    out = cupy.zeros(3 * 1024, dtype=cupy.float32)
    kernel[(1,)](cupy.asarray(x), out, 1024, num_warps=8)
    np.testing.assert_allclose(cupy.asnumpy(out), _expected_named_scans(x.astype(np.float64)),
                               atol=1e-3)
