"""tilecc's pytest plugin — loaded automatically where tilecc is installed (entry point
`pytest11`), or with `-p tilecc.testing.pytest_plugin`; `-p no:tilecc.testing.pytest_plugin`
turns it off.

* `@pytest.mark.gpu`: the test needs a CUDA GPU that tilecc can launch on (CuPy sees a
  device); without one it is skipped, with the reason.  `--require-gpu` makes that an error
  instead (for the GPU machine, where a silent skip would hide a broken driver).
* `tilecc_cache_dir` fixture: a fresh, empty directory set as TILECC_CACHE_DIR for the test.
* Hypothesis settings profiles (tilecc.testing.profiles: "tilecc", "tilecc-ci",
  "tilecc-dev", "tilecc-gpu"), registered, not loaded: chosen with
  `--hypothesis-profile NAME` or `settings.load_profile(NAME)`, so other projects' tests in
  the same environment keep their settings.
Hypothesis is optional: without it the plugin works and registers no profiles (only
tilecc.testing's strategies need it).
"""

from __future__ import annotations

import os

import pytest

from tilecc.testing.profiles import register_profiles

GPU_MARKER = "gpu: needs a CUDA GPU tilecc can launch on (skipped where there is none)"


register_profiles()  # at import: before Hypothesis's own plugin loads a profile by name


def pytest_addoption(parser) -> None:
    parser.addoption("--require-gpu", action="store_true", default=False,
                     help="tilecc: fail, instead of skipping, tests marked gpu when no GPU "
                          "is present")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", GPU_MARKER)


def _gpu() -> bool:
    from tilecc.testing.devices import gpu_available

    return gpu_available()


def pytest_report_header(config) -> str | None:
    if os.environ.get("TILECC_TEST_BACKENDS"):
        return f"tilecc: TILECC_TEST_BACKENDS={os.environ['TILECC_TEST_BACKENDS']}"
    return None


def pytest_collection_modifyitems(config, items) -> None:
    marked = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not marked or _gpu():
        return
    if config.getoption("--require-gpu"):
        raise pytest.UsageError(f"--require-gpu: {len(marked)} tests are marked gpu, but "
                                "CuPy sees no CUDA device here")
    skip = pytest.mark.skip(reason="no CUDA GPU on this machine (CuPy sees none)")
    for item in marked:
        item.add_marker(skip)


@pytest.fixture
def tilecc_cache_dir(tmp_path, monkeypatch):
    """A fresh, empty tilecc cache directory (TILECC_CACHE_DIR) for this test."""
    path = tmp_path / "tilecc-cache"
    path.mkdir()
    monkeypatch.setenv("TILECC_CACHE_DIR", str(path))
    return path
