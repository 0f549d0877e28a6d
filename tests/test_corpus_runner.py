"""scripts/corpus/run.py: a library taken from its wheel, run op by op through the
compatibility mode in a worker process of its own, one row per op whatever happens."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_TOY = {
    "toylib/__init__.py": "",
    "toylib/ops.py": '''
import torch
import triton
import triton.language as tl


@triton.jit
def _square(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    tl.store(Y + offs, x * x, mask=offs < n)


@triton.jit
def _twice(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    tl.store(Y + offs, x * 3, mask=offs < n)  # wrong on purpose


@triton.jit
def _odd(X, BLOCK: tl.constexpr):
    tl.store(X + tl.arange(0, BLOCK), tl.no_such_function(tl.arange(0, BLOCK)))


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        _square[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return 2 * x * dy


def twice(x):
    y = torch.empty_like(x)
    _twice[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y


def odd(x):
    _odd[(1,)](x, BLOCK=16)
    return x
''',
    "toylib/compiled.py": "import triton.compiler\n",
}

_LIB = '''
import torch
from common import Case, Ops, module

RELEASE = "toylib==1.0"
ARCHIVE = "toylib-1.0-py3-none-any.whl"
ROOT = ""
DEPS = []
MARKERS = ("toylib/",)
OPS = Ops()


@OPS.op("square", "toylib.ops")
def square(dev):
    f = module("toylib.ops").Square.apply
    for n in (10, 100):
        yield Case(f"n {n}", [torch.randn(n)], f, lambda x: x * x, 1e-6, 1e-6, grad=[0])


@OPS.op("twice", "toylib.ops")
def twice(dev):
    yield Case("n 7", [torch.randn(7)], module("toylib.ops").twice, lambda x: 2 * x, 1e-6, 1e-6,
               backward=False)


@OPS.op("odd", "toylib.ops")
def odd(dev):
    yield Case("n 16", [torch.zeros(16)], module("toylib.ops").odd, lambda x: x, 0, 0)


@OPS.op("compiled", "toylib.compiled")
def compiled(dev):
    yield from ()
'''


def test_corpus_runner_reports_each_op_of_a_wheel_and_goes_on_after_failures(tmp_path):
    """ok, mismatch, refused (tilecc's CompilationError; an ImportError of a part of
    Triton tilecc lacks, at the library's line) each in its row; exit 0; `triton` is tilecc."""
    pytest.importorskip("torch")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    with zipfile.ZipFile(corpus / "toylib-1.0-py3-none-any.whl", "w") as z:
        for name, text in _TOY.items():
            z.writestr(name, textwrap.dedent(text))
    (tmp_path / "lib_toy.py").write_text(_LIB)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "corpus" / "run.py"), "--libs", "toy",
                        "--lib-dir", str(tmp_path), "--corpus", str(corpus), "--device", "cpu",
                        "--compile", "", "--timeout", "120"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "triton = " in out and "tilecc" in out.split("triton = ")[1].splitlines()[0], out
    rows = {line.split()[0]: line for line in out.splitlines() if line.split()[:1] in
            (["square"], ["twice"], ["odd"], ["compiled"])}
    assert rows["square"].split()[1:3] == ["ok", "ok"], out
    assert rows["twice"].split()[1] == "mismatch" and "max err" in rows["twice"], out
    assert rows["odd"].split()[1] == "refused" and "toylib/ops.py:" in rows["odd"], out
    assert rows["compiled"].split()[1] == "refused", out
    assert "triton.compiler" in rows["compiled"] and "toylib/compiled.py:1" in rows["compiled"], out
    summary = out.split("== summary")[1].splitlines()
    assert summary[2].split()[:5] == ["toy", "toylib==1.0", "4", "2", "1"], out


# lib_liger.py: Liger-Kernel's package imports every op at once; each op is imported on its own

_FAKE_LIGER_OPS = {
    "__init__.py": "raise ImportError('lib_liger imports each op on its own')\n",
    "relu_squared.py": '''
import torch
import triton
import triton.language as tl


@triton.jit
def _fwd(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    tl.store(Y + offs, tl.where(x > 0, x * x, 0.0), mask=offs < n)


@triton.jit
def _bwd(X, DY, DX, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    dy = tl.load(DY + offs, mask=offs < n, other=0.0)
    tl.store(DX + offs, tl.where(x > 0, 2 * x * dy, 0.0), mask=offs < n)


class LigerReLUSquaredFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        _fwd[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        dx = torch.empty_like(x)
        _bwd[(triton.cdiv(x.numel(), 64),)](x, dy.contiguous(), dx, x.numel(), BLOCK=64)
        return dx
''',
    "softmax.py": '''
import torch
import triton
import triton.language as tl


@triton.jit
def _fwd(X, Y, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(Y + tl.arange(0, BLOCK), tl.no_such_function(x))


class LigerSoftmaxFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        _fwd[(1,)](x, y, BLOCK=64)
        return y
''',
    "layer_norm.py": "import triton.compiler\n",
}


def test_liger_ops_run_one_by_one_whatever_the_others_import(tmp_path):
    """Liger's cases (liger_cases.py) over a stand-in wheel of Liger whose `ops` package
    cannot be imported whole: an op that runs, one whose kernel tilecc refuses and one that
    imports a part of Triton tilecc lacks each get their row, refusals at Liger's line."""
    pytest.importorskip("torch")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    with zipfile.ZipFile(corpus / "liger_kernel-0.8.5-py3-none-any.whl", "w") as z:
        z.writestr("liger_kernel/__init__.py", "")
        z.writestr("liger_kernel/utils.py", "def infer_device():\n    return 'cpu'\n")
        for name, text in _FAKE_LIGER_OPS.items():
            z.writestr(f"liger_kernel/ops/{name}", text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "corpus" / "run.py"), "--libs", "liger",
                        "--only", "liger:relu_squared,liger:softmax,liger:layer_norm",
                        "--corpus", str(corpus), "--device", "cpu", "--compile", "", "--timeout", "120"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {line.split()[0]: line for line in r.stdout.splitlines() if line.split()[:1] in
            (["relu_squared"], ["softmax"], ["layer_norm"])}
    assert rows["relu_squared"].split()[1:3] == ["ok", "ok"], r.stdout
    assert "kernels: _bwd, _fwd" in rows["relu_squared"], r.stdout
    assert rows["softmax"].split()[1] == "refused", r.stdout
    assert "tl.no_such_function" in rows["softmax"], r.stdout
    assert "liger_kernel/ops/softmax.py:10" in rows["softmax"], r.stdout
    assert rows["layer_norm"].split()[1] == "refused", r.stdout
    assert "triton.compiler" in rows["layer_norm"], r.stdout
    assert "liger_kernel/ops/layer_norm.py:1" in rows["layer_norm"], r.stdout


# scripts/corpus/tutorials.py: each tutorial file run unedited, one row of status per file

_TUTORIALS = {
    "01-ok.py": '''
import triton
import triton.testing


@triton.testing.perf_report(triton.testing.Benchmark(
    x_names=["N"], x_vals=[1, 2], line_arg="p", line_vals=["a"], line_names=["A"],
    plot_name="never", args={}))
def bench(N, p):
    raise SystemExit("the benchmark ran")


print("before the benchmark")
bench.run(print_data=True)
''',
    "02-fails.py": '''
def helper(n):
    raise ValueError(f"no {n}")


helper(3)
''',
}


def test_tutorials_runner_statuses_and_benchmarks_skipped_without_editing(tmp_path):
    folder = tmp_path / "tutorials"
    folder.mkdir()
    for name, text in _TUTORIALS.items():
        (folder / name).write_text(text.lstrip())
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "corpus" / "tutorials.py"),
                        str(folder), "--out", str(out), "--no-bench", "--timeout", "100"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 1, r.stdout + r.stderr  # one failed
    rows = {line.split()[0]: line for line in r.stdout.splitlines() if line[:2].isdigit()}
    assert rows["01-ok"].split()[1] == "ran", r.stdout
    assert "failed at 02-fails.py:2: ValueError: no 3" in rows["02-fails"]
    stdout = (out / "01-ok" / "stdout.txt").read_text()
    assert "before the benchmark" in stdout and "benchmark never: skipped" in stdout
    assert "Traceback" in (out / "02-fails" / "stderr.txt").read_text()


def test_kernels_table_lists_each_kernel_of_the_slow_ops(capsys):
    """`run.py --kernels RATIO`: under a library's table, every kernel of the ops at or past
    RATIO (tilecc time over Triton's), its µs a call under each backend and their ratio,
    the slowest first; ops below RATIO and kernels one backend did not run stay apart."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "scripts" / "corpus" / "run.py"
    spec = importlib.util.spec_from_file_location("corpus_run", path)
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    rows = [{"op": "slow", "_ratio": 1.5}, {"op": "fast", "_ratio": 0.9}, {"op": "untimed"}]
    times = {"slow": ({"k_a": 3.0, "k_b": 9.0, "only_mine": 1.0}, {"k_a": 3.0, "k_b": 4.5}),
             "fast": ({"k_c": 1.0}, {"k_c": 2.0})}
    run.print_kernels(rows, times, 1.1)
    lines = capsys.readouterr().out.splitlines()
    assert "1.10" in lines[0]
    body = [line.split() for line in lines[1:]]
    assert [b[1] for b in body] == ["k_b", "k_a", "only_mine"]
    assert body[0][2:] == ["9.0", "4.5", "2.00"] and body[1][4] == "1.00"
    assert body[2][2:] == ["1.0", "0.0", "-"]
    run.print_kernels(rows, times, 2.0)  # no op that slow: nothing printed
    assert capsys.readouterr().out == ""
