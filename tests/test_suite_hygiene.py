"""The test suite leaves the user's machine alone: its disk cache is a temporary directory
(tests/conftest.py), in this process and in the subprocesses tests start."""

import os
import subprocess
import sys
import tempfile

import conftest
from tilecc.runtime import cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _under(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([path, folder]) == folder


def test_suite_cache_is_a_temporary_directory_not_the_users():
    home_cache = os.path.join(os.path.expanduser("~"), ".cache", "tilecc")
    if conftest.USER_CACHE_DIR is not None:  # the user chose it: theirs to choose
        assert cache.cache_dir() == conftest.USER_CACHE_DIR
        return
    assert cache.cache_dir() == conftest.SUITE_CACHE_DIR
    assert _under(cache.cache_dir(), tempfile.gettempdir())
    assert not _under(cache.cache_dir(), home_cache)
    assert not _under(cache.cache_dir(), os.path.expanduser("~"))


def test_subprocesses_inherit_the_suite_cache():
    env = {**os.environ, "PYTHONPATH": ROOT}
    r = subprocess.run([sys.executable, "-c",
                        "from tilecc.runtime import cache; print(cache.cache_dir())"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == conftest.SUITE_CACHE_DIR
