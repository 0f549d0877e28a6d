"""Shared test set-up.  GPU tests are marked `gpu`; tilecc's pytest plugin
(tilecc.testing.pytest_plugin: the marker, clean skips without a GPU, `--require-gpu`, the
`tilecc_cache_dir` fixture and the Hypothesis profiles) is loaded through its entry point
where tilecc is installed, and through `pytest_plugins` below where it only is on PYTHONPATH
(the entry point has the module's name, so it is never loaded twice)."""

import atexit
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))  # tests import kernels.py, conftest_compilers.py
# every render verifies the IR the passes left and checks that rendering only read it
os.environ.setdefault("TILECC_CHECK_IR", "1")

# The suite's disk cache lives in a temporary directory, removed at exit, never in the
# user's ~/.cache/tilecc (unless they point TILECC_CACHE_DIR there themselves).  Set here,
# at import, so that kernels compiled while collecting and the subprocesses tests start
# (they inherit the environment) use it too.
USER_CACHE_DIR = os.environ.get("TILECC_CACHE_DIR") or None
if USER_CACHE_DIR is None:
    SUITE_CACHE_DIR = tempfile.mkdtemp(prefix="tilecc-test-cache-")
    os.environ["TILECC_CACHE_DIR"] = SUITE_CACHE_DIR
    atexit.register(shutil.rmtree, SUITE_CACHE_DIR, ignore_errors=True)
else:
    SUITE_CACHE_DIR = USER_CACHE_DIR

pytest_plugins = ["tilecc.testing.pytest_plugin"]


def pytest_runtest_logreport(report):
    """Name each failure the moment it happens (a run cut short by a time limit then still
    says what failed), on the controlling process only when the run is parallel."""
    if not report.failed or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    terminal = _CONFIG and _CONFIG.pluginmanager.get_plugin("terminalreporter")
    if terminal:
        phase = "" if report.when == "call" else f" (in {report.when})"
        terminal.write_line(f"FAILED {report.nodeid}{phase}", red=True)


_CONFIG = None


def pytest_configure(config):
    global _CONFIG
    _CONFIG = config
