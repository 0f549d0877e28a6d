"""Record Triton's public surface into tests/data/triton_surface.json.

    python scripts/triton_surface.py            # with a Python that has triton==3.6.0
    python scripts/triton_surface.py --check    # exit 1 where the file differs

Walks Triton's public modules (`triton`, `triton.language` and its submodules,
`triton.runtime.*`, `triton.testing`, `triton.tools.*`) and the members of its kernel,
autotuner, config, compiled-kernel, tensor, dtype, constexpr and descriptor classes, and
writes each name with its kind and parameters (`tilecc/compat/surface.py` says how).  The
compatibility mode is tested against the file (tests/test_triton_surface.py): every name
is provided by tilecc with Triton's parameters, or refused with a reason
(`tilecc/compat/refused.py`).  The file is checked in, so the test needs no Triton.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "tests" / "data" / "triton_surface.json"


def load_surface_module():
    """tilecc/compat/surface.py by its path: without importing tilecc (whose dependencies
    the Python that has Triton may lack)."""
    spec = importlib.util.spec_from_file_location("triton_surface_walker",
                                                  ROOT / "tilecc" / "compat" / "surface.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render() -> str:
    data = load_surface_module().record()
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the checked-in file instead of writing it")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        same = args.output.exists() and args.output.read_text() == text
        print("up to date" if same else f"{args.output} differs from what Triton gives")
        return 0 if same else 1
    args.output.write_text(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
