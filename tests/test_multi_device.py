"""Several GPUs without a GPU: a launch runs on the device of its array arguments (whatever
device is current), arrays on two devices are an error naming them, kernels are loaded once
per device and compiled once per architecture — with the stand-in arrays and driver of
test_launch_path (a second device is one more id there).  The GPU half, on a machine with
two GPUs, is in tests/test_gpu.py (test_launch_on_the_second_device and after)."""

import types

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from test_launch_path import (BASE, MAKERS, CAIArray, FakeCuPyArray, FakeTensor,  # noqa: F401
                              RecordingKernel, gpu)
from tilecc.runtime import compiler as C
from tilecc.runtime import launch as L
from tilecc.runtime.binary import Binary

REAL_BUILD = L._build  # before the `gpu` fixture replaces it


def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def _launch(k, make, dev, n=100):
    x, y, out = (make(BASE + i * 4096, dev) for i in range(3))
    k[(tilecc.cdiv(n, 64),)](x, y, out, n, BLOCK=64)


@pytest.mark.parametrize("fw", ["torch", "cupy", "cai"])
def test_the_launch_follows_the_arguments_device_not_the_current_one(gpu, fw):
    k = tilecc.jit(add)
    for dev in (1, 1, 0, 1):  # the current device is 0 throughout (the fixture's)
        _launch(k, MAKERS[fw], dev)
    assert [e["device"] for e in gpu.log] == [1, 1, 0, 1]


@pytest.mark.parametrize("fw", ["torch", "cupy", "cai"])
def test_arguments_on_two_devices_name_each_argument_and_device(gpu, fw):
    k = tilecc.jit(add)
    make = MAKERS[fw]
    _launch(k, make, 0)  # warm on device 0: the mixed launch misses the warm path's key
    with pytest.raises(ValueError) as e:
        k[(2,)](make(BASE, 0), make(BASE + 4096, 1), make(BASE + 8192, 0), 100, BLOCK=64)
    msg = str(e.value)
    assert "different devices: [0, 1]" in msg
    assert "`x_ptr` on cuda:0, `y_ptr` on cuda:1, `out_ptr` on cuda:0" in msg
    assert len(gpu.log) == 1  # nothing launched


@pytest.fixture
def loads(gpu, monkeypatch, tilecc_cache_dir):
    """The real build (compile, then load) with NVRTC's compile and the driver's module
    load recorded instead of run; the devices' architectures are set by the test."""
    monkeypatch.setattr(L, "_build", REAL_BUILD)
    monkeypatch.setattr(L, "_archs", {})
    monkeypatch.setattr(C, "_compiled", {})
    rec = types.SimpleNamespace(compiled=[], loaded=[], archs={0: "sm_80", 1: "sm_80"})

    def compile_source(art, target):
        rec.compiled.append(art.arch)
        return Binary(target.name, art.arch, b"cubin for " + art.arch.encode(), "")

    def load(binary, name, threads, device_id, specs, cooperative=False):
        rec.loaded.append((device_id, binary.arch))
        return RecordingKernel(specs, threads // 32, device_id, gpu.log)

    monkeypatch.setattr(C, "compile_source", compile_source)
    monkeypatch.setattr(L.cuda, "load", load)
    monkeypatch.setattr(L.cuda, "device_arch", lambda dev: rec.archs[dev])
    return rec


def test_kernels_are_loaded_per_device_and_compiled_once_per_architecture(gpu, loads):
    k = tilecc.jit(add)
    for dev in (0, 1, 0, 1, 1):
        _launch(k, MAKERS["torch"], dev)
    assert loads.loaded == [(0, "sm_80"), (1, "sm_80")]  # one module per device
    assert loads.compiled == ["sm_80"]  # the same architecture: one binary for both
    assert [e["device"] for e in gpu.log] == [0, 1, 0, 1, 1]


def test_devices_of_two_architectures_get_a_binary_each(gpu, loads):
    loads.archs[1] = "sm_90"
    k = tilecc.jit(add)
    for dev in (0, 1, 0, 1):
        _launch(k, MAKERS["cupy"], dev)
    assert loads.loaded == [(0, "sm_80"), (1, "sm_90")]
    assert loads.compiled == ["sm_80", "sm_90"]
    assert [e["device"] for e in gpu.log] == [0, 1, 0, 1]


def test_host_arrays_are_still_named_among_device_arrays(gpu):
    k = tilecc.jit(add)
    with pytest.raises(TypeError, match="`y_ptr` is a host"):
        k[(2,)](FakeTensor(BASE, device=1), np.zeros(100, np.float32), FakeTensor(BASE), 100,
                BLOCK=64)


def test_distributed_example_exits_cleanly_without_two_gpus():
    """examples/distributed_add.py runs in scripts/gpu_check.sh's loop over the examples:
    where it cannot run (no torch, fewer than two GPUs) it says so and succeeds, at once."""
    import os
    import subprocess
    import sys

    from test_gpu import _gpu_count

    if _gpu_count() >= 2:
        pytest.skip("two GPUs here: tests/test_gpu.py's two-GPU tests and the example run")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, os.path.join(root, "examples", "distributed_add.py")],
                       env={**os.environ, "PYTHONPATH": root}, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("// skipped: this example needs"), r.stdout
