"""`triton.profiler` (proton) under the compatibility mode: sessions, scopes, launches
recorded with their `launch_metadata`, the `.hatchet` file and the viewer's metrics."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.compat.triton import profiler as proton
from tilecc.compat.triton.profiler import viewer
from tilecc.compat.triton.profiler.recorder import RECORDER, Frame
from tilecc.runtime import launch

ROOT = Path(__file__).resolve().parents[1]


def _metadata(grid, kernel, args):
    return {"name": f"{kernel.name} [N={args['n']}]", "flops16": 2.0 * args["n"],
            "bytes": 8 * args["n"], "ignored": 1}


@tilecc.jit(launch_metadata=_metadata)
def _add_one(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) + 1, mask=i < n)


@pytest.fixture
def interpreted(monkeypatch, tmp_path):
    monkeypatch.setenv("TILECC_INTERPRET", "1")
    monkeypatch.chdir(tmp_path)
    yield
    proton.finalize()  # (a failed test's sessions end here)


def _frames(node, path=()):
    """{path of names: metrics} of a .hatchet tree."""
    here = path + (node["frame"]["name"],)
    out = {here: node["metrics"]}
    for child in node["children"]:
        out.update(_frames(child, here))
    return out


# --- recording -----------------------------------------------------------------------------------

def test_a_session_records_scopes_and_launches_named_by_their_metadata(interpreted):
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    sid = proton.start("run", hook="triton")
    with proton.scope("outer", {"bytes": 100}):
        _add_one[(4,)](x, y, 64, BLOCK=16)
        _add_one[lambda meta: (4,)](x, y, 64, BLOCK=16)
    proton.deactivate(sid)
    _add_one[(2,)](x, y, 32, BLOCK=16)  # not recorded
    proton.activate(sid)
    _add_one[(2,)](x, y, 32, BLOCK=16)
    proton.finalize()
    np.testing.assert_array_equal(y, x + 1)  # the launches ran
    tree, devices = json.loads(Path("run.hatchet").read_text())
    frames = _frames(tree)
    assert list(frames) == [("ROOT",), ("ROOT", "outer"), ("ROOT", "outer", "_add_one [N=64]"),
                            ("ROOT", "_add_one [N=32]")]
    assert frames[("ROOT",)] == {"time (ns)": 0, "count": 0}
    inner = frames[("ROOT", "outer", "_add_one [N=64]")]
    assert (inner["count"], inner["flops16"], inner["bytes"]) == (2, 256.0, 1024)
    assert "ignored" not in inner and inner["time (ns)"] > 0
    assert frames[("ROOT", "_add_one [N=32]")]["count"] == 1  # the deactivated one left out
    assert frames[("ROOT", "outer")]["bytes"] == 100 and devices == {}
    parsed, names = viewer.parse(["time/ms", "count"], "run.hatchet")
    assert names == ["time/ms (inc)", "count (inc)"]
    assert parsed.roots[0].metrics["count (inc)"] == 3
    assert parsed.find("outer").metrics["time/ms (inc)"] >= \
        parsed.find("_add_one [N=64]").metrics["time/ms (inc)"] > 0


def test_launch_metadata_gets_the_grid_the_kernel_and_every_argument(interpreted):
    seen = []

    def metadata(grid, kernel, args):
        seen.append((grid, kernel.name, kernel.num_warps, dict(args)))
        return {}

    @tilecc.jit(launch_metadata=metadata)
    def k(x_ptr, n, SCALE: tl.constexpr = 3):
        tl.store(x_ptr + tl.program_id(0), n * SCALE)

    x = np.zeros(4, dtype=np.int32)
    k[(1,)](x, 5)  # outside a session: not called
    proton.start("meta", hook="triton")
    k[lambda meta: (meta["n"] - 3,)](x, 5, num_warps=2)
    proton.finalize()
    assert seen == [((2, 1, 1), "k", 2, {"x_ptr": x, "n": 5, "SCALE": 3})]
    assert list(x[:2]) == [15, 15]
    frames = _frames(json.loads(Path("meta.hatchet").read_text())[0])
    assert frames[("ROOT", "k")]["count"] == 1  # named by the kernel without a "name"


def test_launches_through_heuristics_and_autotuners_are_recorded(interpreted):
    @tilecc.heuristics({"BLOCK": lambda args: 16})
    @tilecc.jit(launch_metadata=_metadata)
    def add_one(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) + 1, mask=i < n)

    x = np.arange(32, dtype=np.float32)
    y = np.zeros_like(x)
    proton.start("heuristic", hook="triton")
    add_one[(2,)](x, y, 32)  # kernel.run, which heuristics call
    proton.finalize()
    np.testing.assert_array_equal(y, x + 1)
    frames = _frames(json.loads(Path("heuristic.hatchet").read_text())[0])
    assert frames[("ROOT", "add_one [N=32]")]["count"] == 1


def test_the_launch_path_is_observed_only_while_a_session_records_launches(interpreted):
    assert launch._observer is None
    scopes_only = proton.start("scopes")
    assert launch._observer is None
    hooked = proton.start("hooked", hook="triton")
    assert launch._observer is not None
    proton.deactivate(hooked)
    assert launch._observer is None
    proton.activate()
    assert launch._observer is not None
    proton.finalize(hooked)
    assert launch._observer is None and Path("hooked.hatchet").exists()
    assert not Path("scopes.hatchet").exists() and scopes_only in RECORDER.sessions
    proton.finalize()
    assert not RECORDER.sessions and Path("scopes.hatchet").exists()


def test_scopes_nest_as_context_managers_decorators_and_calls(interpreted):
    proton.start("nest")

    @proton.scope("decorated", {"flops": 10})
    def work():
        assert proton.context.depth() == 2
        proton.enter_scope("called", metrics={"bytes": 4})
        proton.exit_scope("called", metrics={"bytes": 1})

    with proton.scope("outer"):
        work()
        work()
    with pytest.raises(ValueError, match="mismatch"):
        proton.enter_scope("a")
        proton.exit_scope("b")
    proton.finalize()
    frames = _frames(json.loads(Path("nest.hatchet").read_text())[0])
    assert frames[("ROOT", "outer", "decorated")]["flops"] == 20
    called = frames[("ROOT", "outer", "decorated", "called")]
    assert (called["bytes"], called["count"]) == (10, 2)
    assert called["time (ns)"] >= 0 and proton.context.depth() is None


def test_a_scopes_own_time_is_its_span_less_what_was_recorded_inside():
    scope, kernel = Frame("scope"), None
    scope.span_ns, scope.timed, scope.count = 1000, True, 1
    kernel = scope.child("kernel")
    kernel.span_ns, kernel.timed, kernel.count = 300, True, 2
    out = scope.to_json()
    assert out["metrics"] == {"time (ns)": 700, "count": 0}
    assert out["children"][0]["metrics"] == {"time (ns)": 300, "count": 2}
    assert scope.inclusive_ns() == 1000


def test_start_checks_its_options():
    with pytest.raises(ValueError, match="backend"):
        proton.start("x", backend="nsys")
    with pytest.raises(ValueError, match="trees"):
        proton.start("x", data="trace")
    assert not RECORDER.sessions


# --- the viewer ----------------------------------------------------------------------------------

_PROFILE = [
    {"frame": {"name": "ROOT", "type": "function"}, "metrics": {"time (ns)": 0, "count": 0},
     "children": [
         {"frame": {"name": "scopeA", "type": "function"},
          "metrics": {"bytes": 2e6, "flops16": 4e9, "time (ns)": 1000000, "count": 2,
                      "device_id": "0", "device_type": "CUDA"},
          "children": [{"frame": {"name": "k1", "type": "function"},
                        "metrics": {"bytes": 1000, "flops16": 2e9, "time (ns)": 500000,
                                    "count": 1, "device_id": "0", "device_type": "CUDA"},
                        "children": []}]},
         {"frame": {"name": "k2", "type": "function"},
          "metrics": {"flops8": 1e12, "time (ns)": 2000000, "count": 4}, "children": []},
         {"frame": {"name": "empty", "type": "function"}, "metrics": {}, "children": []}]},
    {"CUDA": {"0": {"clock_rate": 1980000, "memory_clock_rate": 2619000, "bus_width": 5120,
                    "arch": "90", "num_sms": 132}}}]


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "p.hatchet"
    path.write_text(json.dumps(_PROFILE))
    return str(path)


def test_the_viewer_derives_tritons_metrics(profile):
    tree, names = viewer.parse(["tflop16/s", "time/ms", "tflop8/s", "gbyte/s", "avg_time/us",
                                "time/%", "util", "flops16", "count"], profile)
    assert names == ["tflop16/s (inc)", "time/ms (inc)", "tflop8/s (inc)", "gbyte/s (inc)",
                     "avg_time/us (inc)", "time/% (inc)", "util", "flops16", "count (inc)"]
    want = {  # (the values Triton's viewer gives for this file)
        "ROOT": [None, 3.5, None, None, 500.0, 100.0, None, None, 7],
        "scopeA": [8 / 3, 1.5, None, 4 / 3, 500.0, 300 / 7, 0.002698, 4e9, 3],
        "k1": [4.0, 0.5, None, 0.002, 500.0, 100 / 7, 0.004048, 2e9, 1],
        "k2": [None, 2.0, 500.0, None, 500.0, 400 / 7, None, None, 4]}
    assert tree.find("empty") is None  # a frame without metrics is dropped
    for frame, values in want.items():
        got = [tree.find(frame).value(n) for n in names]
        for name, g, w in zip(names, got, values):
            if w is None:
                assert np.isnan(g), (frame, name, g)
            else:
                assert g == pytest.approx(w, rel=1e-3), (frame, name, g)


def test_the_viewer_prints_the_tree(profile, capsys):
    tree, names = viewer.parse(["time/ms", "count"], profile)
    viewer.print_tree(tree, names)
    assert capsys.readouterr().out.splitlines()[:4] == [
        "3.500 7.000 ROOT", "├─ 1.500 3.000 scopeA", "│  └─ 0.500 1.000 k1",
        "└─ 2.000 4.000 k2"]
    tree, names = viewer.parse(["time/ms"], profile, include="k1")
    assert [n.name for n in tree.nodes()] == ["ROOT", "scopeA", "k1"]
    tree, names = viewer.parse(["time/ms"], profile, exclude="scope.*")
    assert [n.name for n in tree.nodes()] == ["ROOT", "k2"]
    with pytest.raises(RuntimeError, match="Metric flops is not found"):
        viewer.parse(["tflop/s"], profile)
    viewer.main(["-m", "avg_time/us", "-d", "1", profile])
    assert capsys.readouterr().out.strip() == "500.000 ROOT"


# --- under the compatibility mode ----------------------------------------------------------------

def test_tutorial_style_profiling_runs_under_the_compatibility_mode(tmp_path):
    code = textwrap.dedent("""
        import numpy as np
        import triton, triton.language as tl
        import triton.profiler as proton

        def meta(grid, kernel, args):
            return {"name": f"{kernel.name} [N={args['n']}]", "flops16": 2.0 * args["n"]}

        @triton.jit(launch_metadata=meta)
        def double(x, n, B: tl.constexpr):
            i = tl.arange(0, B)
            tl.store(x + i, tl.load(x + i, mask=i < n) * 2, mask=i < n)

        x = np.ones(8, dtype=np.float32)
        proton.start("tut", hook="triton")
        proton.deactivate()
        double[(1,)](x, 8, B=8)
        proton.activate(0)
        with proton.scope("blas", {"flops16": 10.0}):
            double[(1,)](x, 8, B=8)
        proton.deactivate(0)
        proton.finalize()
        import triton.profiler.viewer as proton_viewer
        tree, metrics = proton_viewer.parse(["flop16/s", "time/ms"], "tut.hatchet")
        proton_viewer.print_tree(tree, metrics)
        print(x[0])
    """)
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    (tmp_path / "tutorial.py").write_text(code)  # (kernels need a file for their source)
    r = subprocess.run([sys.executable, "-m", "tilecc.compat", "tutorial.py"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": path, "TRITON_INTERPRET": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == "4.0"
    assert [re.sub(r"(nan|[0-9.]+) ", "", line) for line in lines[:3]] == [
        "ROOT", "└─ blas", "   └─ double [N=8]"]  # (the deactivated launch left out)
    tflops = float(lines[2].split()[1])
    assert tflops > 0 and float(lines[1].split()[2]) > 0  # flops / its time


# --- on the GPU ----------------------------------------------------------------------------------

@pytest.mark.gpu
def test_launches_and_scopes_are_timed_by_cuda_events(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TILECC_INTERPRET", raising=False)
    x = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    _add_one[(x.numel() // 1024,)](x, y, x.numel(), BLOCK=1024)  # compiled outside
    proton.start("gpu", hook="triton")
    for _ in range(3):
        _add_one[(x.numel() // 1024,)](x, y, x.numel(), BLOCK=1024)
    with proton.scope("torch", {"bytes": 8 * x.numel()}):
        torch.add(x, 1, out=y)
    proton.finalize()
    assert torch.equal(y, x + 1)
    from tilecc.compat.triton.profiler.recorder import _event_timers

    assert ("torch", x.device.index or 0) in _event_timers
    frames = _frames(json.loads(Path("gpu.hatchet").read_text())[0])
    kernel = frames[("ROOT", f"_add_one [N={x.numel()}]")]
    assert kernel["count"] == 3 and kernel["device_type"] in ("CUDA", "HIP")
    assert kernel["device_id"] == str(x.device.index or 0)
    assert 0 < kernel["time (ns)"] < 1e9  # three launches of a 4 MB copy: microseconds
    assert 0 < frames[("ROOT", "torch")]["time (ns)"] < 1e9
    tree, names = viewer.parse(["gbyte/s", "time/ms"], "gpu.hatchet")
    assert tree.find("torch").metrics["gbyte/s (inc)"] > 0
