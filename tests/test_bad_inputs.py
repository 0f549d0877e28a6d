"""The command line on bad input: every case in tests/bad_inputs/cli/ (see its README.md)
ends in its one-line `tilecc: error: ...` message and a nonzero exit status, never a
traceback.  Each case runs in a process of its own (`python -m tilecc ...`, as the
`tilecc` script does), so that no case sees what another imported: forked from one that
has imported tilecc and nothing else (tests/prewarmed.py); `test_the_script_prints_no_traceback`
starts Python itself."""

import glob
import os
import shlex
import stat
import sys

import prewarmed
import pytest

from conftest_compilers import require_cuda_compiler
from tilecc.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CASE_DIR = os.path.join(HERE, "bad_inputs", "cli")
CASES = sorted(p for p in glob.glob(os.path.join(CASE_DIR, "*.py"))
               if not os.path.basename(p).startswith("_"))


KEYS = ("args", "error", "exit", "lines", "requires")


def _header(path: str) -> dict:
    """The case's `# key: value` lines (before its first line that is not a comment)."""
    out: dict = {"error": []}
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                break
            key, sep, value = line[1:].strip().partition(": ")
            if key not in KEYS or not sep:
                out.setdefault("bad", []).append(line)
            elif key == "error":
                out["error"].append(value.rstrip("\n"))
            else:
                out[key] = value.strip()
    return out


def _readonly(tmp_path) -> str:
    folder = tmp_path / "readonly"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    if os.access(folder, os.W_OK):  # root: permissions do not apply
        folder.chmod(stat.S_IRWXU)
        pytest.skip("file permissions do not apply to this user (root)")
    return str(folder)


def test_the_corpus_is_there():
    assert len(CASES) >= 40
    for case in CASES:
        h = _header(case)
        assert h.get("args") and h["error"], f"{case}: needs `# args:` and `# error:` lines"
        assert "bad" not in h, f"{case}: not `# KEY: value` with a KEY of {KEYS}: {h['bad']}"


@pytest.mark.parametrize("case", CASES, ids=lambda p: os.path.basename(p)[:-3])
def test_bad_input(case, tmp_path):
    h = _header(case)
    if h.get("requires") == "nvrtc":
        require_cuda_compiler()
    env = {k: v for k, v in os.environ.items() if k != "TILECC_TRACEBACK"}
    env["TILECC_CACHE_DIR"] = str(tmp_path / "cache")
    env["PYTHONPATH"] = os.pathsep.join([ROOT, *filter(None, [env.get("PYTHONPATH")])])
    places = {"{file}": case, "{dir}": CASE_DIR, "{tmp}": str(tmp_path / "out")}
    os.makedirs(places["{tmp}"])
    text = h["args"] + " ".join(h["error"])
    if "{readonly}" in text:
        places["{readonly}"] = _readonly(tmp_path)

    def fill(s: str) -> str:
        for k, v in places.items():
            s = s.replace(k, v)
        return s

    r = prewarmed.run([sys.executable, "-m", "tilecc", *shlex.split(fill(h["args"]))],
                      cwd=tmp_path, env=env, timeout=120)
    status, err = r.returncode, r.stderr
    assert "Traceback" not in err
    assert status == int(h.get("exit", 1)), err
    lines = err.rstrip("\n").split("\n")
    assert len(lines) == int(h.get("lines", 1)), err
    assert lines[0].startswith("tilecc: error: "), err
    for expected in h["error"]:
        assert fill(expected) in err, f"expected: {fill(expected)}\ngot:      {err}"


# ---- what the corpus cannot show everywhere ------------------------------------------------

KERNEL = os.path.join(CASE_DIR, "output_is_a_folder.py") + ":scale"
SIG = "*fp32:16,*fp32:16,i32,1024"


def _run(args, capsys):
    try:
        status = main(args)
    except SystemExit as e:
        status = e.code
    return status, capsys.readouterr().err


def test_syntax_error_names_line_and_column_as_python_does(capsys):
    path = os.path.join(CASE_DIR, "syntax_error.py")
    try:
        compile(open(path).read(), path, "exec")
    except SyntaxError as e:
        expected = f"tilecc: error: {path}:{e.lineno}:{e.offset}: SyntaxError: {e.msg}\n"
    status, err = _run(["emit", f"{path}:scale", "-s", SIG], capsys)
    assert status == 1 and err == expected


def test_permission_denied_where_permissions_apply_to_nobody(tmp_path, monkeypatch, capsys):
    """As root (where the corpus' read-only cases are skipped): the checks ask os.access."""
    locked = str(tmp_path / "locked")
    os.mkdir(locked)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p).startswith(locked)
                        else real(p, mode))
    status, err = _run(["emit", KERNEL, "-s", SIG, "-o", f"{locked}/k.cu"], capsys)
    assert status == 1 and err == (f"tilecc: error: cannot write {locked}/k.cu: permission "
                                   "denied; give a writable -o\n")
    status, err = _run(["export", KERNEL, "-s", SIG, "-o", f"{locked}/gen"], capsys)
    assert status == 1 and err == (f"tilecc: error: cannot create folder {locked}/gen: {locked} "
                                   "is not writable (permission denied); give another -o\n")


def test_a_write_that_fails_after_the_checks_is_one_line(tmp_path, monkeypatch, capsys):
    """The disk fills up, or the folder goes away, between the check and the write."""
    import tilecc.cli_input as cli_input

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli_input, "open", full, raising=False)
    status, err = _run(["emit", KERNEL, "-s", SIG, "-o", str(tmp_path / "k.cu")], capsys)
    assert status == 1 and err == (f"tilecc: error: cannot write {tmp_path}/k.cu: No space left "
                                   "on device; give another -o\n")
    monkeypatch.setattr(os, "makedirs", full)
    status, err = _run(["export", KERNEL, "-s", SIG, "-o", str(tmp_path / "gen")], capsys)
    assert status == 1 and err.startswith("tilecc: error: cannot write ") and \
        err.endswith(": No space left on device; give a writable output folder\n")


def test_an_internal_error_is_one_line_unless_asked(monkeypatch, capsys):
    from tilecc.runtime.jit import JITFunction

    def broken(*a, **k):
        raise KeyError("layout")

    monkeypatch.setattr(JITFunction, "source", broken)
    status, err = _run(["emit", KERNEL, "-s", SIG], capsys)
    assert status == 70 and err == (
        "tilecc: internal error: KeyError: 'layout' (a bug in tilecc: rerun with "
        "TILECC_TRACEBACK=1 for the traceback and report it)\n")
    monkeypatch.setenv("TILECC_TRACEBACK", "1")
    with pytest.raises(KeyError):
        main(["emit", KERNEL, "-s", SIG])


def test_a_closed_pipe_is_not_an_error_message(monkeypatch, capsys):
    """`tilecc emit ... | head`: the reader closed the pipe; nothing to report."""
    import io

    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("sys.stdout", Closed())
    status = main(["emit", KERNEL, "-s", SIG])
    assert status == 1 and capsys.readouterr().err == ""


def test_the_script_prints_no_traceback(tmp_path):
    """The same through `python -m tilecc`, as a user runs it."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.path.dirname(HERE)}
    for args in (["emit", os.path.join(CASE_DIR, "import_raises.py") + ":scale", "-s", SIG],
                 ["emit", KERNEL, "-s", SIG, "-o", str(tmp_path / "no" / "k.cu")],
                 ["emit", KERNEL, "-s", SIG, "--target", "ptx"]):
        r = subprocess.run([sys.executable, "-m", "tilecc", *args], capture_output=True,
                           text=True, timeout=120, env=env)
        assert r.returncode in (1, 2) and r.stdout == "", r.stderr
        assert r.stderr.startswith("tilecc: error: ") and r.stderr.count("\n") == 1, r.stderr
