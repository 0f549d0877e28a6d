"""`python -m tilecc.compat script.py [args]` (or `-m module [args]`, `-c code`): run a
program written for Triton with `import triton` resolved to tilecc, unedited."""

from __future__ import annotations

import os
import runpy
import sys
import traceback

import tilecc.compat

USAGE = ("usage: python -m tilecc.compat script.py [args...]\n"
         "       python -m tilecc.compat -m module [args...]\n"
         "       python -m tilecc.compat -c code [args...]\n"
         "Runs the program with `import triton` resolved to tilecc (tilecc.compat.install()).")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    tilecc.compat.install()
    try:
        return _run(argv)
    except Exception as e:  # the traceback `python script.py` shows: the program's frames
        tb = e.__traceback__
        while tb is not None and _runner_frame(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        return 1


def _runner_frame(filename: str) -> bool:
    return filename == __file__ or filename.startswith("<frozen runpy")


def _run(argv: list[str]) -> int:
    if argv[0] == "-m" and len(argv) > 1:
        sys.argv = [argv[1], *argv[2:]]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c" and len(argv) > 1:
        sys.argv = ["-c", *argv[2:]]
        sys.path.insert(0, "")
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    elif argv[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    else:
        if not os.path.isfile(argv[0]):
            print(f"python -m tilecc.compat: {argv[0]}: no such file", file=sys.stderr)
            return 2
        sys.argv = list(argv)
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
