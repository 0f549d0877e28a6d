"""Shared test set-up: GPU tests are marked `gpu` and skipped cleanly without a GPU."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # tests import kernels.py, conftest_compilers.py


def gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
