"""Kernel-level and run-time mistakes: every case in tests/bad_inputs/kernels/ (see its
README.md) ends in its one clear exception — or, for a `# result: ok` case, in the right
result — never an internal error or a hang.  Each case runs in a process of its own (a
kernel file, the disk cache and the interpreter's state cannot leak between cases):
pytest starts `python tests/test_bad_kernels.py CASE` (forked from a process that has
imported tilecc and nothing else: tests/prewarmed.py), which runs the case's `run()`."""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import sys

import prewarmed

HERE = os.path.dirname(os.path.abspath(__file__))
CASE_DIR = os.path.join(HERE, "bad_inputs", "kernels")
CASES = sorted(p for p in glob.glob(os.path.join(CASE_DIR, "*.py"))
               if not os.path.basename(p).startswith("_"))
KEYS = ("raises", "error", "result", "requires")
TIMEOUT_S = 60  # a case is a few kernels at most: a hang shows as a failure, not a stall


def header(path: str) -> dict:
    """The case's leading `# key: value` lines; the comment lines after them say what the
    case is about."""
    out: dict = {"error": []}
    with open(path) as f:
        for line in f:
            key, sep, value = line[1:].strip("\n").lstrip().partition(": ")
            if not line.startswith("#") or not re.fullmatch(r"[a-z]+", key) or not sep:
                break
            if key not in KEYS:
                out.setdefault("bad", []).append(line)
            elif key == "error":
                out["error"].append(value)
            else:
                out[key] = value.strip()
    return out


def run_case(path: str) -> int:
    """In the child: import the case as a module of its own and call its `run()`.  Prints
    `ok`, or `raised: TYPE` and the message; `context: yes` when the error would show a
    second traceback ("During handling of the above exception ...")."""
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        module.run()
    except Exception as e:  # noqa: BLE001  (what the user would see is the point)
        shown = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
        import traceback

        package = os.path.join(os.path.dirname(HERE), "tilecc") + os.sep
        inside = [f for f in traceback.extract_tb(e.__traceback__)
                  if f.filename.startswith(package)]
        print(f"raised: {type(e).__module__}.{type(e).__qualname__}")
        # a cause kept without frames (the Python error a CompilationError wraps, which
        # Triton keeps as __cause__ too) shows as one line, not as a second traceback
        second = shown is not None and shown.__traceback__ is not None
        print(f"context: {'yes' if second else 'no'}")
        print(f"tilecc frames: {len(inside)}")
        print(str(e))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(run_case(sys.argv[1]))


import pytest  # noqa: E402  (the child above needs no pytest)


def test_the_corpus_is_there():
    assert len(CASES) >= 12
    for case in CASES:
        h = header(case)
        assert "bad" not in h, f"{case}: not `# KEY: value` with a KEY of {KEYS}: {h['bad']}"
        assert (h.get("raises") and h["error"]) or h.get("result") == "ok", \
            f"{case}: needs `# raises:` and `# error:` lines, or `# result: ok`"


@pytest.mark.parametrize("case", CASES, ids=lambda p: os.path.basename(p)[:-3])
def test_bad_kernel(case, tmp_path):
    h = header(case)
    if h.get("requires") == "nvrtc":
        from conftest_compilers import require_cuda_compiler

        require_cuda_compiler()
    env = {**os.environ, "PYTHONPATH": os.path.dirname(HERE), "TILECC_CACHE_DIR":
           str(tmp_path / "cache"), "TMPDIR": str(tmp_path)}
    for name in ("TILECC_INTERPRET", "TILECC_DEBUG", "TILECC_DUMP"):
        env.pop(name, None)
    r = prewarmed.run([sys.executable, __file__, case], timeout=TIMEOUT_S, env=env,
                      cwd=str(tmp_path))
    out = r.stdout
    if h.get("result") == "ok":
        assert r.returncode == 0 and out == "ok\n", out + r.stderr
        return
    assert r.returncode == 1 and out.startswith("raised: "), out + r.stderr
    kind, context, frames, message = out.split("\n", 3)
    expected = h["raises"] if "." in h["raises"] else f"tilecc.errors.{h['raises']}"
    assert kind == f"raised: {expected}", out
    assert context == "context: no", out
    # of tilecc's frames, only the entry that raised it
    if h["raises"] in ("CompilationError", "InterpreterError", "OutOfResources",
                       "OutOfRegisters", "LaunchError"):
        assert frames in ("tilecc frames: 0", "tilecc frames: 1"), out
    assert "Traceback" not in message, out
    lines = message.split("\n")
    for line in h["error"]:
        line = line.replace("{file}", case)
        if line.strip() == "^":  # a caret: exactly where it points
            assert line in lines, f"expected the caret line: {line!r}\ngot:\n{message}"
        else:
            assert line in message, f"expected: {line}\ngot:\n{message}"
