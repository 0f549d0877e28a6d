"""Run `python -m tilecc ...` or `python script.py ...` as a new process does, without
paying for Python and tilecc's imports each time: a server process, started once per test
process, imports tilecc's stages and their libraries (libcst, Jinja2, NumPy: about half a
second a process) and then forks a child for each command.  The child starts from a
process that has imported only those modules: it takes the command's environment, working
directory, argv and PYTHONPATH, writes to its own stdout and stderr, runs the module or
script as `__main__`, runs the exit handlers and exits with the status Python would.

What it cannot show is what happens while `import tilecc` itself runs in a fresh
interpreter; tests that are about that (the console script, a clean import) keep starting
real processes.

    result = prewarmed.run([sys.executable, "-m", "tilecc", "emit", ...], env=..., cwd=...)
    result.returncode, result.stdout, result.stderr      # as subprocess.run(text=True)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading

# what the server imports before it forks (each child's commands import the rest)
PRELOAD = ("tilecc", "tilecc.cli", "tilecc.export", "tilecc.transpiler.render",
           "tilecc.transpiler.frontend", "tilecc.interpreter", "numpy", "jinja2", "libcst")

_server: subprocess.Popen | None = None
_lock = threading.Lock()


def _start() -> subprocess.Popen:
    global _server
    if _server is None or _server.poll() is not None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [root, *filter(None, [os.environ.get("PYTHONPATH")])])}
        _server = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True, env=env,
                                   start_new_session=True)
    return _server


def run(argv: list[str], *, env: dict, cwd: str, timeout: float = 120,
        stdin: str | None = None) -> subprocess.CompletedProcess:
    """`subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)`, for an
    argv of this Python: `[python, "-m", module, *args]` or `[python, script, *args]`."""
    if argv[0] != sys.executable or len(argv) < 2 or argv[1].startswith("-") and argv[1] != "-m":
        raise ValueError(f"not a command of this Python: {argv}")
    with _lock, tempfile.TemporaryDirectory() as folder:
        out, err, given = (os.path.join(folder, name) for name in ("out", "err", "in"))
        with open(given, "w") as f:
            f.write(stdin or "")
        server = _start()
        request = dict(argv=argv[1:], env=env, cwd=str(cwd), out=out, err=err, stdin=given)
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        answer: list[str] = []
        reader = threading.Thread(target=lambda: answer.append(server.stdout.readline()))
        reader.start()
        reader.join(timeout)
        if not answer or not answer[0]:
            _stop(server)
            raise subprocess.TimeoutExpired(argv, timeout) if not answer else \
                RuntimeError("the prewarmed server died")
        with open(out) as f_out, open(err) as f_err:
            return subprocess.CompletedProcess(argv, int(answer[0]), f_out.read(), f_err.read())


def _stop(server: subprocess.Popen) -> None:
    global _server
    import signal

    try:
        os.killpg(server.pid, signal.SIGKILL)  # the server and the child it waits for
    except ProcessLookupError:
        pass
    server.wait()
    _server = None


# ---- the server ------------------------------------------------------------------------------

def _child(request: dict) -> None:
    """In the forked child: become the command, then exit as Python would."""
    import atexit
    import runpy
    import traceback

    code = 0
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # found again from TMPDIR, as a new process would
        for fd, (path, mode) in enumerate([(request["stdin"], os.O_RDONLY),
                                           (request["out"], os.O_WRONLY),
                                           (request["err"], os.O_WRONLY)]):
            os.dup2(os.open(path, mode | (os.O_CREAT | os.O_TRUNC if fd else 0)), fd)
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        args = request["argv"]
        extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
        if args[0] == "-m":
            sys.argv = [args[1], *args[2:]]  # runpy puts the module's path in argv[0]
            sys.path[:1] = [os.getcwd(), *extra]
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(args)
            sys.path[:1] = [os.path.dirname(os.path.abspath(args[0])), *extra]
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - as the interpreter reports an uncaught error
        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _serve() -> None:
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), flush=True)


if __name__ == "__main__":
    _serve()
