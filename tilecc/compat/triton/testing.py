"""`triton.testing` under the compatibility mode: timing (`do_bench`), comparison
(`assert_close`) and the benchmark tables of Triton's tutorials (`Benchmark`,
`perf_report`)."""

from __future__ import annotations

import statistics
import sys
from typing import Any, Callable

_MODES = ("min", "max", "mean", "median", "all")


def do_bench(fn: Callable, warmup: int = 25, rep: int = 100, grad_to_none=None,
             quantiles=None, return_mode: str = "mean"):
    """Milliseconds per call of `fn`, timed with device events (L2 flushed before each
    run), as Triton's: the mean by default, `return_mode` "min"/"max"/"median"/"all", or
    the given `quantiles` (a list, or one value for one quantile)."""
    import numpy as np

    from tilecc.runtime.autotune_bench import device_times, framework

    if return_mode not in _MODES:
        raise ValueError(f"return_mode must be one of {', '.join(_MODES)}, not {return_mode!r}")

    def call():
        for x in grad_to_none or ():
            x.grad = None
        fn()

    times = device_times(call, framework("torch" in sys.modules), warmup, rep)
    if quantiles is not None:
        out = [float(q) for q in np.quantile(np.array(times), quantiles)]
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.mean,
            "median": statistics.median}[return_mode](times)


def do_bench_cudagraph(fn: Callable, rep: int = 20, grad_to_none=None, quantiles=None,
                       return_mode: str = "mean"):
    """Triton times a CUDA graph of `fn` here; tilecc times the calls themselves
    (`do_bench`), which includes each launch's host cost."""
    return do_bench(fn, rep=rep, grad_to_none=grad_to_none, quantiles=quantiles,
                    return_mode=return_mode)


def _numpy(x):
    import numpy as np

    if type(x).__module__.startswith("torch"):
        x = x.detach().cpu()
        if str(x.dtype) == "torch.bfloat16":
            x = x.float()
        return x.numpy()
    if hasattr(x, "get") and type(x).__module__.startswith("cupy"):
        return x.get()
    return np.asarray(x)


def assert_close(x, y, atol=None, rtol=None, err_msg: str = "") -> None:
    """`x` and `y` (torch, CuPy or NumPy arrays, or scalars) equal within atol + rtol·|y|
    elementwise, NaNs in the same places; Triton's defaults atol=1e-2, rtol=0."""
    import numpy as np

    np.testing.assert_allclose(_numpy(x), _numpy(y), atol=1e-2 if atol is None else atol,
                               rtol=0 if rtol is None else rtol, equal_nan=True,
                               err_msg=err_msg)


class Benchmark:
    """One table (or plot) of `perf_report`: `x_names` take each of `x_vals`, the
    `line_arg` each of `line_vals` (named `line_names`), with fixed `args`."""

    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names, plot_name,
                 args, xlabel="", ylabel="", x_log=False, y_log=False, styles=None):
        self.x_names, self.x_vals = list(x_names), list(x_vals)
        self.line_arg, self.line_vals, self.line_names = line_arg, line_vals, line_names
        self.plot_name, self.args = plot_name, dict(args)
        self.xlabel, self.ylabel, self.x_log, self.y_log = xlabel, ylabel, x_log, y_log
        self.styles = styles


class Mark:
    """A function under `@perf_report`: `.run(print_data=True)` fills and prints its
    tables; `save_path` writes each as CSV (and a PNG when matplotlib is installed)."""

    def __init__(self, fn: Callable, benchmarks):
        self.fn, self.benchmarks = fn, benchmarks

    def run(self, show_plots: bool = False, print_data: bool = False, save_path: str = "",
            return_df: bool = False, **kwargs):
        marks = self.benchmarks if isinstance(self.benchmarks, list) else [self.benchmarks]
        tables = [self._table(bench, print_data, save_path, **kwargs) for bench in marks]
        if return_df:
            return tables[0] if len(tables) == 1 else tables
        return None

    def _table(self, bench: Benchmark, print_data: bool, save_path: str, **kwargs):
        columns = list(bench.x_names[:1]) + list(bench.line_names)
        rows: list[list[Any]] = []
        for x in bench.x_vals:
            xs = x if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            point = dict(zip(bench.x_names, xs))
            row = [xs[0]]
            for line in bench.line_vals:
                value = self.fn(**point, **{bench.line_arg: line}, **bench.args, **kwargs)
                row.append(value[0] if isinstance(value, (list, tuple)) else value)
            rows.append(row)
        text = _format(columns, rows)
        if print_data:
            print(f"{bench.plot_name}:\n{text}")
        if save_path:
            import csv
            import os

            os.makedirs(save_path, exist_ok=True)
            with open(os.path.join(save_path, f"{bench.plot_name}.csv"), "w", newline="") as f:
                csv.writer(f).writerows([columns] + rows)
            _plot(bench, columns, rows, save_path)
        try:
            import pandas

            return pandas.DataFrame(rows, columns=columns)
        except ImportError:
            return [dict(zip(columns, row)) for row in rows]


def _format(columns: list, rows: list) -> str:
    cells = [[str(c) for c in columns]] + [[f"{v:.6g}" if isinstance(v, float) else str(v)
                                            for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells)


def _plot(bench: Benchmark, columns: list, rows: list, save_path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"{bench.plot_name}: matplotlib is not installed, wrote the CSV only")
        return
    import os

    fig, ax = plt.subplots()
    for i, name in enumerate(columns[1:], start=1):
        ax.plot([r[0] for r in rows], [r[i] for r in rows], label=name)
    ax.set_xlabel(bench.xlabel or columns[0])
    ax.set_ylabel(bench.ylabel)
    ax.set_xscale("log" if bench.x_log else "linear")
    ax.set_yscale("log" if bench.y_log else "linear")
    ax.legend()
    fig.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
    plt.close(fig)


def perf_report(benchmarks):
    """Decorate a benchmark function: `fn.run(print_data=True)` prints its tables."""
    return lambda fn: Mark(fn, benchmarks)
