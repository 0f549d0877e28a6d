"""The first compiles of a process on several threads at once (the autotuner compiles its
candidates on a thread pool, importing the compiler's stages on first use): one thread
importing the passes while another imports the renderer.  When the passes' package
imported every pass itself, the two threads took two modules' import locks in opposite
orders and CPython broke the deadlock by handing each the other's module half made:
"cannot import name 'dynamic_tiles' from partially initialized module", an autotuned
kernel of an outside library failing at its first launch (8 runs of 8 failed so)."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = r'''
import threading
import tilecc

errors = []
start = threading.Barrier(2)

def lower():  # what lowering a kernel imports first (runtime.compiler._lower)
    start.wait()
    try:
        from tilecc.transpiler.passes import run_passes  # noqa: F401
    except Exception as e:
        errors.append(repr(e))

def render():  # what rendering one imports (runtime.compiler._transpile)
    start.wait()
    try:
        import tilecc.transpiler.render  # noqa: F401
    except Exception as e:
        errors.append(repr(e))

threads = [threading.Thread(target=f) for f in (lower, render)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(errors)
'''


def test_first_compiles_on_two_threads_import_the_stages_once(tmp_path) -> None:
    """A fresh process each time: the modules not yet imported."""
    program = tmp_path / "first_compiles.py"
    program.write_text(PROGRAM)
    for _ in range(6):
        r = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stdout.strip() == "[]", r.stdout[-2000:]
