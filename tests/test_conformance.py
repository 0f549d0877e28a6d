"""scripts/conformance.py: every documented `tl` name is supported on a path or refused
with a CompilationError that says why; none ends in another exception (a bug)."""

import importlib.util
from pathlib import Path

import pytest

from conftest_compilers import require_cuda_compiler, require_hip_compiler

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "conformance.py"


@pytest.fixture(scope="module")
def conformance():
    spec = importlib.util.spec_from_file_location("conformance", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_documented_name_has_a_kernel(conformance):
    names = [n for names in conformance.SECTIONS.values() for n in names]
    assert len(names) == len(set(names))
    assert all(callable(getattr(conformance, f"k_{n}", None)) for n in names)


def test_no_documented_name_is_broken(conformance, capsys):
    require_cuda_compiler()
    require_hip_compiler()
    rc = conformance.main([])
    out = capsys.readouterr().out
    assert rc == 0, out
    totals = next(line for line in out.splitlines() if "documented names supported" in line)
    assert totals.endswith(" 0 BROKEN"), totals
    libdevice = out.splitlines()[-1]
    assert libdevice.startswith("libdevice: ") and "CUDA " in libdevice, libdevice
