"""The pytest plugin of `triton_tests.py`: runs Triton's own language tests under tilecc's
compatibility mode (or under Triton itself, for the reference), one selection of test
cases, and records how each case ended.

Loaded with `-p triton_tests_plugin` (this folder on PYTHONPATH), in the pytest process
and in every pytest-xdist worker, with

    --tt-backend tilecc|triton   tilecc: `import triton` is tilecc (tilecc.compat.install(),
                                 before the test files are imported)
    --tt-select FILE             the node ids to run, one a line (others are deselected)
    --tt-report FILE             one JSON line per case: {"id", "outcome", "kind", "detail",
                                 "where", "seconds"}
    --tt-timeout SECONDS         a case running longer fails as `timeout`
    --tt-collected FILE          the node ids collected (selected), one a line

Each case that did not pass is given a kind:

    refused     tilecc's CompilationError (or its launch check, LaunchError): an error of
                the kind a program expects from a compiler
    internals   the compatibility mode refused a part of Triton outside the language (its
                compiler's IR, `triton.compile`, knobs): "is not provided by tilecc"
    different   an assertion of the test on values failed: a different answer
    error-text  `pytest.raises(..., match=)` saw an error, with another message
    accepted    `pytest.raises` saw no error: tilecc ran what Triton rejects
    timeout     it ran past --tt-timeout
    crashed     any other exception (an assertion inside tilecc included): a bug
    skipped     the test skipped itself

Triton's tests import `triton._internal_testing`, a module of Triton's wheel (helpers that
make inputs and compare results) that the compatibility mode does not provide.  Under
tilecc the plugin loads the installed Triton's own file, its `import triton` resolving to
tilecc; the three internals of Triton's it imports besides (knobs, the type-name table of
its launcher, `tl.str_to_ty`) are stood in for while it loads, and only for it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import signal
import sys
import traceback
import types

import pytest

REFUSAL_MARK = "is not provided by tilecc"


def pytest_addoption(parser):
    group = parser.getgroup("triton_tests")
    group.addoption("--tt-backend", choices=("tilecc", "triton"), default="triton")
    group.addoption("--tt-select", default=None)
    group.addoption("--tt-report", default=None)
    group.addoption("--tt-timeout", type=float, default=0)
    group.addoption("--tt-collected", default=None, help="write the collected node ids here")


# ------------------------------------------------------------------------------------------
# tilecc as `triton`


def _install_tilecc() -> None:
    import tilecc.compat

    # Triton's installed package, found without importing it (the mode refuses to install
    # once Triton's modules are loaded)
    spec = importlib.machinery.PathFinder.find_spec("triton")
    tilecc.compat.install()
    helpers = None if spec is None or not spec.submodule_search_locations else \
        os.path.join(list(spec.submodule_search_locations)[0], "_internal_testing.py")
    if helpers is None or not os.path.exists(helpers):
        raise pytest.UsageError("Triton's tests import triton._internal_testing, a file of "
                                "Triton's wheel: install Triton in this Python")
    _load_internal_testing(helpers)


def _load_internal_testing(path: str) -> None:
    """Triton's triton/_internal_testing.py as `triton._internal_testing`, run with
    `triton` being tilecc."""
    import triton
    import triton.language as tl
    import triton.runtime.jit as jit

    knobs = types.ModuleType("triton.knobs")  # what the helpers read of Triton's knobs

    class base_knobs:  # noqa: N801 (Triton's name)
        pass

    knobs.base_knobs = base_knobs
    knobs.propagate_env = True
    knobs.nvidia = types.SimpleNamespace(ptxas=_Ptxas())
    dtypes = {name: d for name, d in vars(tl).items() if isinstance(d, tl.dtype)}
    # Triton's spellings of type names (its own, PyTorch's, C's) -> the dtype's name
    canonical = {name: d.name for name, d in dtypes.items()}
    canonical.update({d.name: d.name for d in dtypes.values()})
    canonical.update({"bool": tl.int1.name, "half": tl.float16.name, "float": tl.float32.name,
                      "double": tl.float64.name, "int": tl.int32.name,
                      "float8_e4m3fn": tl.float8e4nv.name, "float8_e5m2": tl.float8e5.name,
                      "float8_e4m3fnuz": tl.float8e4b8.name,
                      "float8_e5m2fnuz": tl.float8e5b16.name})
    by_name = {d.name: d for d in dtypes.values()}

    def str_to_triton_dtype(text: str):
        return by_name[canonical[text]]

    saved = {(triton, "knobs"), (jit, "type_canonicalisation_dict")}
    triton.knobs = knobs
    jit.type_canonicalisation_dict = canonical
    sys.modules["triton.knobs"] = knobs
    try:
        spec = importlib.util.spec_from_file_location("triton._internal_testing", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["triton._internal_testing"] = module
        spec.loader.exec_module(module)
    finally:
        for owner, name in saved:
            owner.__dict__.pop(name, None)
        sys.modules.pop("triton.knobs", None)
    module.str_to_triton_dtype = str_to_triton_dtype


class _Ptxas:
    """`knobs.nvidia.ptxas.version`, which the helpers read to know whether TMA works: the
    CUDA version PyTorch was built with (read when asked: PyTorch loads after the knobs)."""

    @property
    def version(self) -> str:
        torch = sys.modules.get("torch")
        version = getattr(getattr(torch, "version", None), "cuda", None) if torch else None
        return ".".join((version or "12.0").split(".")[:2])


# ------------------------------------------------------------------------------------------
# selection and timeouts


def pytest_configure(config):
    config._tt_backend = config.getoption("--tt-backend")
    config._tt_rows = {}
    if config._tt_backend == "tilecc":
        _install_tilecc()


def pytest_collection_modifyitems(config, items):
    path = config.getoption("--tt-select")
    if not path:
        return
    with open(path) as f:
        wanted = {line.strip() for line in f if line.strip()}
    keep = [item for item in items if item.nodeid in wanted]
    gone = [item for item in items if item.nodeid not in wanted]
    if gone:
        config.hook.pytest_deselected(items=gone)
    items[:] = keep


def pytest_collection_finish(session):
    path = session.config.getoption("--tt-collected")
    if path and not hasattr(session.config, "workerinput"):
        with open(path, "w") as f:
            f.write("".join(item.nodeid + "\n" for item in session.items))


class CaseTimeout(Exception):
    """The case ran past --tt-timeout."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    limit = item.config.getoption("--tt-timeout")
    if not limit or not hasattr(signal, "SIGALRM"):
        yield
        return

    def ring(signum, frame):
        raise CaseTimeout(f"ran past {limit:g} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ------------------------------------------------------------------------------------------
# classification


def _chain(exc):
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _is_tilecc_file(path: str) -> bool:
    return os.sep + "tilecc" + os.sep in path and os.sep + "scripts" + os.sep not in path


def _where(exc) -> str:
    """The innermost frame inside tilecc, else the innermost frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    inside = [f for f in frames if _is_tilecc_file(f.filename)]
    frame = (inside or frames or [None])[-1]
    if frame is None:
        return ""
    path = frame.filename
    if "tilecc" + os.sep in path:
        path = path[path.rindex("tilecc" + os.sep):]
    shown = path if _is_tilecc_file(frame.filename) else os.path.basename(path)
    return f"{shown}:{frame.lineno}"


def _first_line(exc) -> str:
    """The exception's message in a line (tilecc's: the message under the quoted line)."""
    text = [line for line in str(exc).strip().splitlines() if line.strip()]
    if len(text) > 1 and text[0].rstrip().endswith(":"):
        text = [text[-1]]
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}"


def classify(exc, backend: str) -> tuple[str, str, str]:
    """(kind, detail, where) of a case that raised `exc`."""
    chain = _chain(exc)
    detail, where = _first_line(exc), _where(exc)
    if isinstance(exc, CaseTimeout):
        return "timeout", detail, where
    if isinstance(exc, pytest.skip.Exception):
        return "skipped", detail, where
    if any(REFUSAL_MARK in str(e) for e in chain):
        return "internals", _first_line(next(e for e in chain if REFUSAL_MARK in str(e))), where
    if isinstance(exc, pytest.fail.Exception) and "DID NOT RAISE" in str(exc):
        return "accepted", detail, where
    if isinstance(exc, AssertionError) and "did not match" in str(exc) and "Regex" in str(exc):
        return "error-text", detail, where
    if backend == "tilecc":
        from tilecc.errors import CompilationError, LaunchError

        hit = next((e for e in chain if isinstance(e, (CompilationError, LaunchError))), None)
        if hit is not None:
            return "refused", _first_line(hit), _where(hit)
    if isinstance(exc, AssertionError):
        frames = traceback.extract_tb(exc.__traceback__)
        if frames and _is_tilecc_file(frames[-1].filename):
            return "crashed", detail, where
        return "different", detail, where
    inner = chain[-1]
    return "crashed", _first_line(inner) if inner is not exc else detail, _where(inner)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and report.when in ("setup", "call"):
        kind, detail, where = classify(call.excinfo.value, item.config._tt_backend)
        report.user_properties.append(("tt", {"kind": kind, "detail": detail,
                                              "where": where}))


def pytest_runtest_logreport(report):
    config = _CONFIG.get("config")
    if config is None or hasattr(config, "workerinput"):
        return  # the controller writes (pytest-xdist workers send it their reports)
    if report.when == "teardown":
        return
    if report.when == "setup" and report.passed:
        return
    info = dict(report.user_properties).get("tt", {})
    outcome = "passed" if report.passed else "skipped" if report.skipped else "failed"
    row = {"id": report.nodeid, "outcome": outcome,
           "kind": "passed" if report.passed else info.get("kind", outcome),
           "detail": info.get("detail", ""), "where": info.get("where", ""),
           "seconds": round(report.duration, 3)}
    if report.skipped and not info:
        longrepr = report.longrepr
        row["kind"], row["detail"] = "skipped", str(longrepr[-1] if isinstance(longrepr, tuple)
                                                    else longrepr)[:300]
    path = config.getoption("--tt-report")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(row) + "\n")


_CONFIG: dict = {}


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    _CONFIG["config"] = session.config
