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


# --- set-up: the demo installs little, the tests everything ---------------------------------

FAKE_PYTHON = """#!/usr/bin/env bash
# a venv's python that logs what setup.sh asks of it: an empty venv (every probe fails)
case "$1 $2" in
  "-m pip") [ "$3" = --version ] && exit 0
            # without uv to be had (NO_UV=1) its install fails: setup.sh falls back to pip
            [ "${@: -1}" = uv ] && [ -n "$NO_UV" ] && exit 1
            echo "pip $*" >> "$LOG"; exit 0;;
  "-m uv") echo "uv $*" >> "$LOG"; exit 0;;
  "-V ") echo "Python 3.12.0"; exit 0;;
  "-c "*) exit 1;;
esac
exit 0
"""

LOGGER = '#!/usr/bin/env bash\necho "$(basename "$0") $*" >> "$LOG"\n'


def _run_setup(tmp_path, mode: str | None, gpu: bool, uv: bool = True) -> list[str]:
    """scripts/setup.sh in a copy of the repository's set-up files, with apt, dpkg and the
    venv's python replaced by loggers: what it would install on a fresh machine."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "setup.sh").write_text(open(os.path.join(ROOT, "scripts",
                                                                 "setup.sh")).read())
    (repo / "pyproject.toml").write_text(open(os.path.join(ROOT, "pyproject.toml")).read())
    venv_bin = repo / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(FAKE_PYTHON)
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("apt-get", "sudo"):
        (tools / name).write_text(LOGGER)
    (tools / "dpkg-query").write_text("#!/usr/bin/env bash\nexit 1\n")  # nothing installed
    (tools / "nvidia-smi").write_text(
        "#!/usr/bin/env bash\necho 'GPU 0: NVIDIA H100 (UUID: GPU-0)'\n" if gpu else
        "#!/usr/bin/env bash\nexit 9\n")
    for f in [venv_bin / "python", *tools.iterdir()]:
        f.chmod(0o755)
    log = tmp_path / "log"
    log.write_text("")
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "LOG": str(log),
           "NO_UV": "" if uv else "1"}
    r = subprocess.run(["bash", str(repo / "scripts" / "setup.sh"), *([mode] if mode else [])],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return log.read_text().splitlines()


def _installs(lines: list[str]) -> tuple[set[str], list[str]]:
    apt = {w for line in lines if " install " in line and "apt-get" in line
           for w in line.split() if not w.startswith("-") and w not in ("apt-get", "install")}
    pip = [line for line in lines if line.startswith(("pip ", "uv ")) and " -e " in line]
    return apt, pip


def test_the_demo_setup_needs_no_rocm_and_no_test_tools(tmp_path):
    apt, pip = _installs(_run_setup(tmp_path, "demo", gpu=False))
    assert not apt & {"hipcc", "libamdhip64-dev", "rocm-device-libs"}, apt
    assert len(pip) == 1 and pip[0].endswith("-e .[nvrtc]"), pip


def test_the_demo_setup_takes_cupy_only_with_a_gpu(tmp_path):
    _, pip = _installs(_run_setup(tmp_path, "demo", gpu=True))
    assert len(pip) == 1 and pip[0].endswith("-e .[cuda]"), pip


def test_the_test_setup_installs_everything_the_tests_need(tmp_path):
    apt, pip = _installs(_run_setup(tmp_path, None, gpu=False))
    assert {"hipcc", "libamdhip64-dev", "rocm-device-libs"} <= apt, apt
    assert len(pip) == 1 and pip[0].endswith("-e .[dev,cuda,hip]"), pip
    assert pip[0].startswith("uv "), pip  # uv where it can be had


def test_the_setup_falls_back_to_pip_without_uv(tmp_path):
    _, pip = _installs(_run_setup(tmp_path, None, gpu=False, uv=False))
    assert pip == ["pip -m pip install -q --disable-pip-version-check -e .[dev,cuda,hip]"], pip


def test_scripts_use_their_setup():
    def text(*path):
        with open(os.path.join(ROOT, *path)) as f:
            return f.read()

    assert "bash scripts/setup.sh demo\n" in text("scripts", "demo.sh")
    assert "bash scripts/setup.sh\n" in text("scripts", "test.sh")
    assert "scripts/test.sh" in text(".ci", "run")


def test_run_first_names_tests_that_exist():
    """Each of conftest.RUN_FIRST (the longest tests, started first) is a test function of
    its file: a renamed test would silently fall back to the end of the run."""
    here = os.path.dirname(os.path.abspath(__file__))
    assert len(set(conftest.RUN_FIRST)) == len(conftest.RUN_FIRST)
    for entry in conftest.RUN_FIRST:
        file, function = entry.split("::")
        with open(os.path.join(here, file)) as f:
            assert f"\ndef {function}(" in f.read(), entry
