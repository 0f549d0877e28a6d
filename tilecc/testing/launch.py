"""`Launch`: how a kernel is launched from a test's inputs, declared once; `Launch.check`
runs it on the interpreter and on the GPU and compares with a NumPy reference.

    add = tt.Launch(
        add_kernel,
        args=lambda x, y: dict(x_ptr=x, y_ptr=y, out_ptr=tt.out_like(x), n_elements=x.size,
                               BLOCK_SIZE=64),
        grid=lambda meta: (tilecc.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),),
        reference=lambda x, y: x + y,
    )
    add.check(x=x, y=y)          # inside a Hypothesis test

`args` maps the test's inputs to the kernel's arguments by parameter name (constexprs
included); outputs are marked there with `out(...)` / `out_like(...)` (fresh arrays filled
with junk, so an element the kernel forgets to write shows) or `inout(x)` (an input the
kernel updates in place).  `grid` is what you would pass to `kernel[grid]`: a tuple, or a
function of the launch's meta-parameters (every argument by name, and `num_warps`) — which
here also hold the test's inputs by name, for grids that depend on an input's shape
(kernel arguments win on a clash).  `args` may also set `num_warps` for the launch.
`reference` receives the same inputs (copies) and returns the expected outputs: one array,
a tuple in the order the outputs appear in `args`, or a dict by parameter name.  Both
`args` and `reference` receive only the inputs they name (unless they take **kwargs).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from tilecc.runtime.options import DEFAULT_NUM_WARPS
from tilecc.testing import devices as DV
from tilecc.testing.compare import Mismatch, compare, format_array, is_floating
from tilecc.testing.tolerances import Tolerance, tolerance

__all__ = ["Launch", "out", "out_like", "inout", "Out", "InOut", "default_backends"]


@dataclass(frozen=True)
class Out:
    """An output argument: a fresh C-contiguous array, filled with junk before the launch."""

    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass(frozen=True)
class InOut:
    """An input array the kernel also writes (its final contents are an output)."""

    array: np.ndarray


def out(shape, dtype) -> Out:
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    return Out(shape, np.dtype(dtype))


def out_like(x, dtype=None) -> Out:
    x = np.asarray(x)
    return Out(x.shape, np.dtype(dtype) if dtype is not None else x.dtype)


def inout(x: np.ndarray) -> InOut:
    return InOut(x)


def _junk(shape, dtype: np.dtype) -> np.ndarray:
    """Deterministic junk: values a correct kernel overwrites and a reference never expects."""
    rng = np.random.default_rng(0x711ECC)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return (rng.uniform(-100.0, 100.0, shape) + 0.375).astype(dtype)


def _accepts(fn: Callable, inputs: dict) -> dict:
    """The inputs that `fn` names (all of them if it takes **kwargs)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return inputs
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return inputs
    names = {p.name for p in params}
    return {k: v for k, v in inputs.items() if k in names}


def default_backends() -> tuple[str, ...]:
    """("interpreter", "gpu") where tilecc can launch on a GPU, else ("interpreter",);
    TILECC_TEST_BACKENDS (comma-separated) overrides it, e.g. "interpreter" or "gpu"."""
    env = os.environ.get("TILECC_TEST_BACKENDS", "").strip()
    if env:
        return tuple(b.strip() for b in env.split(",") if b.strip())
    return ("interpreter", "gpu") if DV.gpu_available() else ("interpreter",)


def _skip(reason: str):
    try:
        import pytest
    except ImportError:  # pragma: no cover
        raise RuntimeError(reason) from None
    pytest.skip(reason)


@dataclass(frozen=True)
class Launch:
    """A kernel, and how each launch of it derives from a test's inputs (module docstring).

    tolerance: None (per output dtype, `tt.tolerance`), a `Tolerance` or (rtol, atol) for
        every output, a dict by output name, or a function of the inputs returning any of those
        (for reductions whose length is an input's size).
    backends: None (`default_backends()`), or a tuple of "interpreter" and "gpu".
    frameworks: for the GPU: None (CuPy, or torch where CuPy cannot hold a dtype), or a tuple
        of "cupy" and "torch" to run with each.
    """

    kernel: Any
    args: Callable[..., dict | list | tuple]
    grid: Any
    reference: Callable[..., Any] | None = None
    tolerance: Any = None
    num_warps: int = DEFAULT_NUM_WARPS
    backends: tuple[str, ...] | None = None
    frameworks: tuple[str, ...] | None = None

    def replace(self, **changes) -> "Launch":
        return dataclasses.replace(self, **changes)

    @property
    def name(self) -> str:
        return getattr(getattr(self.kernel, "fn", None), "__name__", repr(self.kernel))

    # --- one launch --------------------------------------------------------------------------
    def arguments(self, inputs: dict) -> dict[str, Any]:
        """The kernel's arguments by parameter name (outputs still as Out / InOut)."""
        got = self.args(**_accepts(self.args, inputs))
        names = [p.name for p in self.kernel.params]
        if isinstance(got, dict):
            return dict(got)
        if isinstance(got, (list, tuple)):
            if len(got) > len(names):
                raise TypeError(f"args returned {len(got)} values; {self.name} takes "
                                f"{len(names)}: {', '.join(names)}")
            return dict(zip(names, got))
        raise TypeError("args must return a dict of kernel arguments by parameter name, "
                        f"or a list in parameter order; got {type(got).__name__}")

    def _meta(self, values: dict, inputs: dict | None = None) -> dict:
        meta = dict(inputs or {})
        for p in self.kernel.params:
            if p.name in values:
                meta[p.name] = values[p.name]
            elif p.default is not inspect.Parameter.empty:
                meta[p.name] = p.default
        return {**meta, "num_warps": values.get("num_warps", self.num_warps)}

    def _grid(self, host_values: dict, inputs: dict | None = None) -> tuple:
        g = self.grid(self._meta(host_values, inputs)) if callable(self.grid) else self.grid
        g = (g,) if isinstance(g, int) else tuple(int(x) for x in g)
        return g

    def run(self, backend: str = "interpreter", framework: str | None = None, /,
            **inputs) -> dict[str, np.ndarray]:
        """Run once and return the outputs by parameter name (NumPy arrays)."""
        return self._run(self.arguments(inputs), backend, framework, inputs)[0]

    def _run(self, values: dict, backend: str, framework: str | None, inputs: dict):
        buffers: dict[str, DV.Buffer] = {}
        outputs: list[str] = []
        host: dict[str, Any] = {}
        values = dict(values)
        num_warps = values.pop("num_warps", self.num_warps)
        grid = self._grid({k: (v.array if isinstance(v, InOut) else v)
                           for k, v in values.items() if not isinstance(v, Out)}, inputs)
        for name, v in values.items():
            if isinstance(v, Out):
                buffers[name] = DV.Buffer(_junk(v.shape, v.dtype))
                outputs.append(name)
            elif isinstance(v, InOut):
                buffers[name] = DV.Buffer(np.asarray(v.array))
                outputs.append(name)
            elif isinstance(v, np.ndarray):
                buffers[name] = DV.Buffer(v)
            else:
                host[name] = v
        launch_values = dict(host)
        if backend == "interpreter":
            for name, b in buffers.items():
                launch_values[name] = b.view()
            self._launch(self.kernel.interpret[grid], launch_values, num_warps, backend,
                         inputs, values)
            flats = {name: b.flat for name, b in buffers.items()}
        else:
            device = {name: DV.to_device(b, framework) for name, b in buffers.items()}
            for name, (_, view) in device.items():
                launch_values[name] = view
            self._launch(self.kernel[grid], launch_values, num_warps, backend, inputs, values)
            DV.synchronize(framework)
            flats = {name: DV.from_device(flat, buffers[name].dtype, framework)
                     for name, (flat, _) in device.items()}
        results = {name: buffers[name].view(flats[name]).copy() for name in outputs}
        for name, b in buffers.items():
            stray = b.changed_outside(flats[name], elements_may_change=name in outputs)
            if stray:
                where = ("outside its elements" if name in outputs else "(an input)")
                raise Mismatch(
                    f"{self.name} on {backend}: wrote to `{name}` {where} at element offsets "
                    f"{stray} (relative to its first element)\n" + self._context(values, inputs),
                    None, name, backend, inputs)
        return results, outputs

    def _launch(self, launcher, values: dict, num_warps: int, backend: str, inputs: dict,
                declared: dict):
        try:
            launcher(**values, num_warps=num_warps)
        except Exception as e:
            if hasattr(e, "add_note"):
                e.add_note(f"while running {self.name} on {backend}\n"
                           + self._context(declared, inputs))
            raise

    # --- checking ----------------------------------------------------------------------------
    def check(self, /, **inputs) -> dict[str, dict[str, np.ndarray]]:
        """Run on every backend and compare each output with the reference; raise `Mismatch`
        (an AssertionError) naming the worst element and the inputs.  Returns the outputs by
        backend ("interpreter", "gpu:cupy", "gpu:torch") for further assertions."""
        if self.reference is None:
            raise TypeError(f"Launch({self.name}) has no reference: pass reference=... "
                            "(or use .replace(reference=...))")
        values = self.arguments(inputs)
        out_names = [n for n, v in values.items() if isinstance(v, (Out, InOut))]
        if not out_names:
            raise TypeError(f"args for {self.name} marks no output: wrap output arrays in "
                            "tt.out(...), tt.out_like(...) or tt.inout(...)")
        expected = self._expected(inputs, out_names)
        tols = self._tolerances(inputs, values, out_names)
        results = {}
        for backend, framework in self._plan(values):
            label = backend if framework is None else f"gpu:{framework}"
            got, _ = self._run(values, backend, framework, inputs)
            for name in out_names:
                c = compare(got[name], expected[name], tols[name])
                if not c.ok:
                    a = got[name]
                    raise Mismatch(
                        f"{self.name} on {label}: output `{name}` ({a.dtype.name}{list(a.shape)}) "
                        f"does not match the reference\n  " + c.describe().replace("\n", "\n  ")
                        + "\n" + self._context(values, inputs), c, name, label, inputs)
            results[label] = got
        return results

    def _expected(self, inputs: dict, out_names: list[str]) -> dict[str, Any]:
        with np.errstate(all="ignore"):
            exp = self.reference(**_accepts(self.reference, copy.deepcopy(inputs)))
        if isinstance(exp, dict):
            missing = set(out_names) - set(exp)
            if missing:
                raise TypeError(f"reference returned no value for output(s) "
                                f"{', '.join(sorted(missing))}")
            return exp
        if len(out_names) == 1 and not isinstance(exp, (tuple, list)):
            return {out_names[0]: exp}
        if not isinstance(exp, (tuple, list)) or len(exp) != len(out_names):
            raise TypeError(f"reference must return {len(out_names)} values (for "
                            f"{', '.join(out_names)}), a tuple or a dict by name")
        return dict(zip(out_names, exp))

    def _tolerances(self, inputs: dict, values: dict, out_names: list[str]) -> dict:
        spec = self.tolerance
        if callable(spec) and not isinstance(spec, Tolerance):
            spec = spec(**_accepts(spec, inputs))
        out = {}
        for name in out_names:
            v = values[name]
            dt = v.dtype if isinstance(v, Out) else np.asarray(v.array).dtype
            t = spec.get(name) if isinstance(spec, dict) else spec
            if t is None:
                t = tolerance(dt) if (is_floating(dt) or dt.kind in "biu") else Tolerance(0, 0)
            elif isinstance(t, tuple):
                t = Tolerance(*t)
            out[name] = t
        return out

    def _plan(self, values: dict) -> list[tuple[str, str | None]]:
        plan = []
        for backend in self.backends or default_backends():
            if backend == "interpreter":
                plan.append(("interpreter", None))
                continue
            if backend != "gpu":
                raise ValueError(f"unknown backend {backend!r} (use 'interpreter' or 'gpu')")
            if not DV.gpu_available():
                if self.backends:  # asked for explicitly
                    _skip("no CUDA GPU (CuPy sees none)")
                continue
            dtypes = [np.asarray(v.array).dtype if isinstance(v, InOut) else v.dtype
                      for v in values.values()
                      if isinstance(v, (Out, InOut, np.ndarray))]
            usable = [f for f in (self.frameworks or DV.gpu_frameworks())
                      if f in DV.gpu_frameworks() and all(DV.supports(f, d) for d in dtypes)]
            if self.frameworks is None:
                usable = usable[:1]
            elif not usable and self.backends:
                _skip(f"none of {self.frameworks} can run {self.name} with these dtypes here")
            plan.extend(("gpu", f) for f in usable)
        return plan

    def _context(self, values: dict, inputs: dict) -> str:
        host = {k: (v.array if isinstance(v, InOut) else v) for k, v in values.items()}
        num_warps = host.pop("num_warps", self.num_warps)
        try:
            grid = self._grid({k: v for k, v in host.items() if not isinstance(v, Out)}, inputs)
        except Exception as e:  # the report must not fail on a grid it cannot evaluate
            grid = f"<grid raised {type(e).__name__}: {e}>"
        scalars = ", ".join(f"{k}={v!r}" for k, v in host.items()
                            if not isinstance(v, (np.ndarray, Out)))
        lines = [f"launch: grid {grid}, num_warps={num_warps}" +
                 (f", {scalars}" if scalars else "")]
        lines.append("inputs:")
        for k, v in inputs.items():
            lines.append(f"  {k} = " + format_array(v).replace("\n", "\n      "))
        return "\n".join(lines)
