"""Triton's public surface under the compatibility mode.

`tests/data/triton_surface.json` is Triton 3.6's surface, recorded by
`scripts/triton_surface.py`: each name must be provided by tilecc with Triton's parameters
or refused with its reason (`tilecc/compat/refused.py`).  The check runs in a fresh
Python (installing the mode replaces `triton` for the process)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tilecc.compat import surface
from tilecc.compat.refused import REFUSED

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "data" / "triton_surface.json"


def _python(*args, cwd=None):
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": path}, cwd=cwd, timeout=300)


def test_every_name_of_tritons_surface_is_provided_or_refused():
    r = _python(str(ROOT / "tests" / "triton_surface_check.py"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "0 problems", r.stdout


def test_the_record_covers_what_libraries_reach():
    record = json.loads(RECORD.read_text())
    assert record["triton_version"] == "3.6.0"
    assert {"triton", "triton.language", "triton.language.core", "triton.runtime.jit",
            "triton.runtime.autotuner", "triton.testing", "triton.tools.mxfp",
            "triton.profiler", "triton.profiler.viewer"} <= \
        set(record["modules"])
    assert {"start", "activate", "deactivate", "finalize", "scope", "enter_scope"} <= \
        set(record["modules"]["triton.profiler"])  # (re-exported from its submodules)
    assert {"parse", "print_tree"} <= set(record["modules"]["triton.profiler.viewer"])
    jit_members = record["classes"]["triton.runtime.jit.JITFunction"]
    assert {"arg_names", "params", "src", "fn", "cache_key", "warmup"} <= set(jit_members)
    assert {"n_regs", "n_spills", "metadata", "asm"} <= \
        set(record["classes"]["triton.compiler.compiler.CompiledKernel"])
    assert record["modules"]["triton.runtime.autotuner"]["Autotuner"]["params"][:6] == [
        [n, "", None] for n in ("fn", "arg_names", "configs", "key", "reset_to_zero",
                                "restore_value")]
    # every refusal names something Triton has (no stale entries); the walk leaves out
    # modules that are private or scripts (Triton's ahead-of-time tools), refused on import
    names = {f"{m}.{n}" for m, ns in record["modules"].items() for n in ns} | \
        {f"{c}.{n}" for c, ns in record["classes"].items() for n in ns}
    import_only = {"triton._C", "triton.tools.compile", "triton.tools.link"}
    stale = [k for k in REFUSED if k not in names | import_only and
             not any(n.startswith(k + ".") for n in names)]
    assert not stale, stale


def test_the_record_is_what_the_script_writes_from_triton():
    # asked of a fresh Python: in this one the compatibility mode may be serving `triton`
    if _python("-c", "import triton.compiler").returncode != 0:
        pytest.skip("Triton is not installed here (the record is checked in)")
    r = _python(str(ROOT / "scripts" / "triton_surface.py"), "--check")
    assert r.returncode == 0, r.stdout + r.stderr


# --- the checker itself: it must be able to fail ---------------------------------------------

def test_signature_comparison():
    want = [["x", "", None], ["y", "", "None"], ["z", "keyword", "True"]]
    assert surface.signature_problem(want, want) is None
    assert surface.signature_problem(want, want + [["extra", "", "0"]]) is None
    assert "missing" in surface.signature_problem(want, want[:2])
    assert "Triton's is y=None" in surface.signature_problem(
        want, [want[0], ["y", "", "1"], want[2]])
    assert "requires w" in surface.signature_problem(want, want + [["w", "", None]])
    assert "parameter 1 is div" in surface.signature_problem(
        [["x", "", None]], [["div", "", None]])


def test_check_reports_missing_wrong_and_unexplained_names():
    import json as json_module

    record = {"modules": {"json": {
        "dumps": {"kind": "function", "params": [["obj", "", None], ["skipkeys", "", "True"]]},
        "no_such_name": {"kind": "function"},
        "JSONDecoder": {"kind": "function"},
        "loads": {"kind": "module"},
        "decoder": {"kind": "module"}}}, "classes": {}}
    refused = {"json.decoder": surface.Refusal("a reason no error gives")}
    problems = surface.check(record, refused, {})
    assert problems["json.dumps"] == (
        "parameter 2 is skipkeys=False (keyword-only), Triton's is skipkeys=True")
    assert problems["json.no_such_name"].startswith("missing")
    assert "Triton's is a module" in problems["json.loads"]
    assert "JSONDecoder" not in problems  # a class is callable
    assert problems["json.decoder"] == "refused in the table, but provided"
    assert json_module.dumps  # (the module itself is untouched)


def test_refused_names_raise_with_their_reason_and_unknown_modules_are_not_found():
    r = _python("-m", "tilecc.compat", "-c", textwrap.dedent("""
        import importlib.util
        import triton, triton.language as tl
        from triton.runtime.jit import JITFunction
        def attempt(what, thunk):
            try:
                thunk()
            except Exception as e:
                print(what, "->", type(e).__name__, e)
            else:
                print(what, "-> ok")
        attempt("slice", lambda: tl.slice)
        attempt("hasattr", lambda: print(hasattr(tl, "slice"), hasattr(triton, "compile")))
        attempt("device_caches", lambda: triton.jit(attempt).device_caches)
        attempt("gluon", lambda: __import__("triton.experimental.gluon"))
        attempt("find_spec", lambda: importlib.util.find_spec("triton.experimental.gluon"))
        attempt("cache", lambda: __import__("triton.runtime.cache"))
        attempt("tools", lambda: triton.tools.tensor_descriptor.TensorDescriptor)
        attempt("profiler", lambda: __import__("triton.profiler"))
    """))
    assert r.returncode == 0, r.stderr
    out = dict(line.split(" -> ", 1) for line in r.stdout.splitlines() if " -> " in line)
    assert out["slice"].startswith("AttributeError") and "compiler frontend" in out["slice"]
    assert "False False" in r.stdout  # hasattr answers no, as for a missing name
    assert "launcher" in out["device_caches"]
    assert out["gluon"].startswith("ModuleNotFoundError") and "No module named" in out["gluon"]
    assert out["find_spec"].startswith("ModuleNotFoundError")
    assert out["cache"].startswith("ModuleNotFoundError") and "TILECC_CACHE_DIR" in out["cache"]
    assert out["tools"] == "ok"
    assert out["profiler"] == "ok"  # tilecc's own profiler (tests/test_compat_profiler.py)
