"""A generated program (tilecc.testing.random_kernels): its source, parameters, inputs and
expected outputs, and how a launch's outputs are compared with them — within the
program's tolerance, where its values are defined and well-conditioned."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from tilecc.testing.random_exprs import DT, Undefined

__all__ = ["Output", "Program", "compare_output", "close", "random_array"]


def _by_value(kind: str, value) -> str:
    """A scalar parameter's signature entry as a launch with `value` specializes it."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)) or \
            not kind.startswith(("i", "u")) or kind == "i1":
        return kind
    v = int(value)
    return f"{kind}:1" if v == 1 else f"{kind}:16" if v % 16 == 0 else \
        f"{kind}:8" if v % 8 == 0 else kind


@dataclass
class Output:
    param: str
    dt: DT
    size: int
    exact: bool
    init: str = "junk"  # or "zeros": the atomics' target starts known


@dataclass
class Program:
    seed: int
    feature: str
    source: str
    name: str
    params: list[tuple[str, Any]]          # (name, "array"/int) in order
    arrays: dict[str, tuple[DT, int]]       # input arrays: dtype, size
    outputs: list[Output]
    constexprs: dict[str, int]
    grid: tuple[int, ...]
    num_warps: int
    rtol: float
    reference: Callable[[dict], dict] = field(repr=False)
    scalars: dict[str, int] = field(default_factory=dict)
    # shared-memory stages of its pipelined tl.dot loops (Triton's default elsewhere)
    num_stages: int = 3

    # --- running it ---
    def load(self, directory: str):
        """Write the source to `directory/<name>.py`, import it, return the @jit kernel."""
        path = os.path.join(directory, f"{self.name}.py")
        with open(path, "w") as f:
            f.write(self.source)
        spec = importlib.util.spec_from_file_location(self.name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, self.name)

    def signature(self) -> str:
        """The specialization a GPU launch of the program picks: arrays 16-byte aligned
        (as device allocations are), integer scalars by their value (`:1`, `:16`, `:8`),
        so that compiling it checks the code the launches run."""
        parts = []
        for name, kind in self.params:
            if kind == "array":
                dt = self.arrays[name][0] if name in self.arrays else \
                    next(o.dt for o in self.outputs if o.param == name)
                parts.append(f"*{dt.sig}:16")
            elif kind == "constexpr":
                parts.append(str(self.constexprs[name]))
            elif kind == "none":
                parts.append("None")
            else:
                parts.append(_by_value(kind, self.scalars.get(name)))
        return ",".join(parts)

    def inputs(self) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(self.seed)
        out = {}
        for name, (dt, size) in self.arrays.items():
            out[name] = random_array(rng, dt, size)
        for o in self.outputs:
            if o.init == "zeros":
                out[o.param] = random_array(rng, o.dt, o.size)
        return out

    def make_args(self, inputs: dict[str, np.ndarray] | None = None) -> list:
        """The launch's positional arguments (NumPy arrays, fresh copies; outputs filled
        with junk), constexprs included."""
        inputs = self.inputs() if inputs is None else inputs
        args = []
        for name, kind in self.params:
            if kind == "array":
                if name in inputs:
                    args.append(inputs[name].copy())
                else:
                    o = next(o for o in self.outputs if o.param == name)
                    args.append(np.full(o.size, 77, dtype=o.dt.np))
            elif kind == "constexpr":
                args.append(self.constexprs[name])
            else:
                args.append(self.scalars[name])
        return args

    def expected(self) -> dict[str, np.ndarray] | None:
        """The outputs by parameter name, or None where the program's values are undefined."""
        try:
            with np.errstate(all="ignore"):
                return self.reference(self.inputs())
        except Undefined:
            return None

    def compare(self, args: list, expected: dict[str, np.ndarray], what: str) -> str | None:
        """None if `args` (after a launch) hold the expected outputs, else a description."""
        by_name = {name: a for (name, _), a in zip(self.params, args)}
        for o in self.outputs:
            problem = compare_output(np.asarray(by_name[o.param]), expected[o.param], o,
                                     self.rtol)
            if problem:
                return f"{what}: output {o.param} ({o.dt.name}): {problem}"
        return None

    def ill_conditioned(self) -> dict[str, np.ndarray]:
        """Per output, the elements that hang on the last bits of a rounded intermediate
        value: evaluated again with every rounded float moved a few ulps up, then down
        (random_exprs.nudgeable), they move: by more than a quarter of the tolerance for floats
        (sin of 1e16 after an fma), at all for integers and exact values (floor of 2.9999999,
        an approximate rsqrt times 4 converted to int32).  Two correct implementations, each
        within a few ulps at every step, may give such an element differently."""
        inputs = self.inputs()
        with np.errstate(all="ignore"):
            base = self.reference(inputs)
        ill = {o.param: np.zeros(o.size, bool) for o in self.outputs}
        for nudge in (1, -1):
            try:
                with np.errstate(all="ignore"):
                    moved = self.reference(inputs, nudge)
            except Undefined:  # moved into undefined values: every element hangs on it
                return {o.param: np.ones(o.size, bool) for o in self.outputs}
            for o in self.outputs:
                values, written = base[o.param]
                if o.dt.is_float and not o.exact:
                    ill[o.param] |= written & ~close(moved[o.param][0], values, self.rtol / 4)
                else:  # integers (a float converted near a whole number) and exact values
                    ill[o.param] |= written & ~_same(moved[o.param][0], values)
        return ill

    def explained_by_conditioning(self, args: list, expected: dict) -> bool:
        """Whether every element of `args`' outputs that differs from `expected` is an
        ill-conditioned one (`ill_conditioned`): not a mismatch, a value no
        implementation can promise."""
        ill = self.ill_conditioned()
        if not any(m.any() for m in ill.values()):
            return False
        kept = {p: (v, w & ~ill[p]) for p, (v, w) in expected.items()}
        return self.compare(args, kept, "") is None


def compare_output(got: np.ndarray, expected: tuple[np.ndarray, np.ndarray], o: Output,
                   rtol: float) -> str | None:
    """`expected` is (values, written): elements no program writes are not compared."""
    exp, valid = expected
    g, e = got[valid], exp[valid]
    if o.dt.is_float and not o.exact:
        ok = close(g, e, rtol)
    elif o.dt.is_float:
        ok = (g.astype(np.float64) == e.astype(np.float64)) | (np.isnan(g.astype(np.float64))
                                                              & np.isnan(e.astype(np.float64)))
    else:
        ok = g == e
    if ok.all():
        return None
    bad = np.flatnonzero(~ok)[:5]
    idx = np.flatnonzero(valid)[bad]
    return (f"{int((~ok).sum())} of {ok.size} elements differ; at {idx.tolist()}: "
            f"got {g[bad].tolist()}, expected {e[bad].tolist()}")


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element by element: equal, or both NaN."""
    if a.dtype.kind in "iub" and b.dtype.kind in "iub":
        return a == b
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return (a64 == b64) | (np.isnan(a64) & np.isnan(b64))


def close(got: np.ndarray, want: np.ndarray, rtol: float) -> np.ndarray:
    """Element by element: within rtol of the value plus the largest finite magnitude (at
    least 1), or the same NaN / infinity; an infinity also where that band reaches past
    the largest finite value of `got`'s type on the same side (a sum rounded step by step
    in fp16 may overflow where the reference, summed in float64, ends just inside)."""
    g64, e64 = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(g64) & np.isnan(e64)
    same_inf = np.isinf(e64) & (g64 == e64)
    finite = np.isfinite(e64)
    scale = max(1.0, float(np.abs(e64[finite]).max())) if finite.any() else 1.0
    band = rtol * (np.abs(e64) + scale)
    overflowed = np.zeros(g64.shape, bool)
    if got.dtype.kind == "f":
        top = float(np.finfo(got.dtype).max)
        with np.errstate(invalid="ignore"):
            overflowed = np.isinf(g64) & finite & (np.sign(g64) == np.sign(e64)) & \
                (np.abs(e64) + band >= top)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: compared above
        return both_nan | same_inf | overflowed | (np.abs(g64 - e64) <= band)


def random_array(rng: np.random.Generator, dt: DT, size: int) -> np.ndarray:
    if dt.is_float:
        return (rng.integers(-16, 17, size) / 4.0).astype(dt.np)
    if dt.kind == "uint":
        return rng.integers(1, 17, size).astype(dt.np)
    if dt.kind == "bool":
        return rng.integers(0, 2, size).astype(bool)
    v = rng.integers(1, 9, size) * rng.choice([-1, 1], size)
    return v.astype(dt.np)
