"""Shared test set-up.  GPU tests are marked `gpu`; tilecc's pytest plugin
(tilecc.testing.pytest_plugin: the marker, clean skips without a GPU, `--require-gpu`, the
`tilecc_cache_dir` fixture and the Hypothesis profiles) is loaded through its entry point
where tilecc is installed, and through `pytest_plugins` below where it only is on PYTHONPATH
(the entry point has the module's name, so it is never loaded twice)."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # tests import kernels.py, conftest_compilers.py
# every render verifies the IR the passes left and checks that rendering only read it
os.environ.setdefault("TILECC_CHECK_IR", "1")

pytest_plugins = ["tilecc.testing.pytest_plugin"]
