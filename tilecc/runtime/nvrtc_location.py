"""Where libnvrtc is, found without loading it: the files the disk cache stamps NVRTC's
identity from (`cache.compiler_stamp`) and the library `nvrtc.py` loads.  Its own module
so that the cache and the compiler both read it without importing each other."""

from __future__ import annotations

import os
import sys


def nvrtc_files() -> list[str]:
    """The libnvrtc files (the library and its versioned builtins) of the first place that
    has them: what NVRTC's identity is stamped from, and what tilecc loads."""
    for folders in _nvrtc_places():
        libs = sorted(os.path.join(d, f) for d in folders for f in _listdir(d)
                      if f.startswith("libnvrtc") and ".so" in f[8:])  # libnvrtc*.so*
        if libs:
            return libs
    return []


def _nvrtc_places():
    """The folders where libnvrtc may be, in the search order of cuda-pathfinder, which CuPy
    uses: the pip wheels (nvidia/cu13/lib, nvidia/cuda_nvrtc/lib), conda, then the
    toolkit.  Each item is one place: a list of folders (a wildcard's matches, as glob
    would give them; os.listdir spares importing glob and its regular expressions)."""
    for base in sys.path:
        yield _subfolders(os.path.join(base or ".", "nvidia"), "lib")
    if os.environ.get("CONDA_PREFIX"):
        yield [os.path.join(os.environ["CONDA_PREFIX"], "lib")]
    for var in ("CUDA_PATH", "CUDA_HOME"):
        if os.environ.get(var):
            root = os.environ[var]
            yield [os.path.join(root, "lib64")]
            yield _subfolders(os.path.join(root, "targets"), "lib")
    yield ["/usr/local/cuda/lib64"]
    yield _subfolders("/usr/local/cuda/targets", "lib")


def _subfolders(parent: str, child: str) -> list[str]:
    """`parent/*/child`: one folder per name in `parent` (not hidden ones, as glob)."""
    return [os.path.join(parent, name, child) for name in _listdir(parent)
            if not name.startswith(".")]


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:  # missing, or not a folder
        return []
