"""`triton.testing` under the compatibility mode: timing (`do_bench`), comparison
(`assert_close`), the benchmark tables of Triton's tutorials (`Benchmark`, `perf_report`)
and the device's peak numbers for roofline plots (`get_dram_gbps`,
`get_max_tensorcore_tflops`, ...)."""

from __future__ import annotations

from typing import Any, Callable

from tilecc.runtime.autotune_bench import do_bench


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

    def _table(self, bench: Benchmark, print_data: bool, save_path: str, diff_col=False,
               save_precision=6, **kwargs):
        # Triton's columns: every x name, then "<line name> (<ylabel>)" per line
        columns = list(bench.x_names) + [f"{name} ({bench.ylabel})" for name in bench.line_names]
        rows: list[list[Any]] = []
        for x in bench.x_vals:
            xs = list(x) if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            if len(xs) != len(bench.x_names):
                raise ValueError(f"Expected {len(bench.x_names)} values, got {x}")
            point = dict(zip(bench.x_names, xs))
            row = list(xs)
            for line in bench.line_vals:
                value = self.fn(**point, **{bench.line_arg: line}, **bench.args, **kwargs)
                row.append(value[0] if isinstance(value, (list, tuple)) else value)
            rows.append(row)
        if diff_col and len(columns) == 2:
            columns.append("Diff")
            rows = [row + [row[1] - row[0]] for row in rows]
        text = _format(columns, rows)
        if print_data:
            print(f"{bench.plot_name}:\n{text}")
        if save_path:
            import csv
            import os

            os.makedirs(save_path, exist_ok=True)
            with open(os.path.join(save_path, f"{bench.plot_name}.csv"), "w", newline="") as f:
                csv.writer(f).writerows([columns] + [
                    [f"{v:.{save_precision}f}" if isinstance(v, float) else v for v in row]
                    for row in rows])
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
    first = len(bench.x_names)  # the line columns follow the x columns
    for i, name in enumerate(columns[first:first + len(bench.line_names)], start=first):
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


# --- the device's peak numbers, for roofline plots (Triton's helpers, same formulas) -----------

def nvsmi(attrs):
    """Integer answers of `nvidia-smi --query-gpu=<attrs>` for GPU 0."""
    import subprocess

    out = subprocess.check_output(["nvidia-smi", "-i", "0", f"--query-gpu={','.join(attrs)}",
                                   "--format=csv,noheader,nounits"])
    return [int(x) for x in out.decode().split(",")]


def _properties(device):
    from tilecc.compat.triton.runtime.driver import driver

    active = driver.active
    if device is None:
        device = active.get_current_device()
    return device, active.utils.get_device_properties(device)


def get_dram_gbps(device=None):
    """The device memory's bandwidth in GB/s: clock (kHz) × bus width × 2 (DDR)."""
    _, props = _properties(device)
    return props["mem_clock_rate"] * props["mem_bus_width"] * 2 / 1e6 / 8


def get_max_tensorcore_tflops(dtype, clock_rate, device=None):
    """Peak tensor-core TFLOPS for `dtype` (torch's, or the language's fp8 types) at
    `clock_rate` (kHz): 4 sub-cores per multiprocessor, each doing 256 (32-bit), 512
    (16-bit) or 1024 (8-bit) operations per clock from sm_80 on."""
    import torch

    device, props = _properties(device)
    major = torch.cuda.get_device_capability(device)[0]
    bits = _bits(dtype)
    if major < 8:
        if dtype != torch.float16:
            raise RuntimeError("dtype not supported")
        per_clock = 256
    else:
        per_clock = {32: 256, 16: 512, 8: 1024}.get(bits)
        if per_clock is None:
            raise RuntimeError("dtype not supported")
    return props["multiprocessor_count"] * 4 * clock_rate * per_clock * 1e-9


def get_max_simd_tflops(dtype, clock_rate, device=None):
    """Peak TFLOPS of the ordinary (not tensor-core) units for fp32 or 16-bit floats."""
    import torch

    device, props = _properties(device)
    if dtype == torch.float32:
        per_clock = 32
    elif dtype == torch.float16 or (dtype == torch.bfloat16 and
                                    torch.cuda.get_device_capability(device)[0] >= 8):
        per_clock = 64
    else:
        raise RuntimeError("dtype not supported")
    return props["multiprocessor_count"] * 4 * clock_rate * per_clock * 1e-9


def _bits(dtype) -> int | None:
    if hasattr(dtype, "itemsize") and not callable(dtype.itemsize):  # torch's dtypes
        return dtype.itemsize * 8 if (dtype.is_floating_point or str(dtype) in (
            "torch.int8", "torch.int16", "torch.int32")) else None
    return getattr(dtype, "bits", None)  # the language's (fp8)


def set_gpu_clock(ref_sm_clock=1350, ref_mem_clock=1215):
    """A context manager that locks GPU 0's clocks (nvidia-smi, needs the rights to) and
    yields (peak TFLOPS, peak GB/s) at them, unlocking them after."""
    import contextlib
    import subprocess

    @contextlib.contextmanager
    def locked():
        try:
            subprocess.check_output(["nvidia-smi", "-i", "0", "-pm", "1"])
            subprocess.check_output(["nvidia-smi", "-i", "0",
                                     f"--lock-gpu-clocks={ref_sm_clock},{ref_sm_clock}"])
            subprocess.check_output(["nvidia-smi", "-i", "0",
                                     f"--lock-memory-clocks={ref_mem_clock},{ref_mem_clock}"])
            sm, mem = nvsmi(["clocks.current.sm"])[0], nvsmi(["clocks.current.memory"])[0]
            if abs(sm - ref_sm_clock) >= 10 or abs(mem - ref_mem_clock) >= 10:
                raise RuntimeError(f"the GPU runs at {sm} / {mem} MHz, not the "
                                   f"{ref_sm_clock} / {ref_mem_clock} MHz asked for")
            yield 1e-6 * 2 * 108 * 4 * 256 * ref_sm_clock, 640 * 2 * ref_mem_clock * 1e-3
        finally:
            subprocess.check_output(["nvidia-smi", "-i", "0", "-pm", "0"])
            subprocess.check_output(["nvidia-smi", "-i", "0", "-rgc"])
            subprocess.check_output(["nvidia-smi", "-i", "0", "-rmc"])
    return locked()
