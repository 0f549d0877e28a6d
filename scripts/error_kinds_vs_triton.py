"""Compile every kernel of tests/error_kinds_cases.py with Triton's frontend (no GPU
needed: code generation to TTIR raises the frontend's errors) and print, per case, the
exception class, the Python exception it wraps, and the message's last line.

    python scripts/error_kinds_vs_triton.py          # with an installed triton

The table this prints is what `TRITON` in that file records; tilecc's test
(tests/test_error_kinds.py) checks tilecc raises the same kinds.
"""

import importlib.util
import os
import re
import sys
import tempfile

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_FILE = os.path.join(HERE, "..", "tests", "error_kinds_cases.py")
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


def load_as_triton():
    text = open(CASES_FILE).read()
    text = text.replace("import tilecc.language as tl", "import triton.language as tl")
    text = text.replace("import tilecc\n", "import triton\n").replace("tilecc.", "triton.")
    text = text.replace("triton.JITFunction", "triton.runtime.JITFunction")
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "error_kinds_cases_triton.py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location("error_kinds_cases_triton", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    module = load_as_triton()
    for kernel in module.CASES:
        src = ASTSource(fn=kernel, signature=SIGNATURE, constexprs={"BLOCK": 16})
        try:
            triton.compile(src, target=GPUTarget("cuda", 80, 32))
        except Exception as e:  # noqa: BLE001  (what Triton raises is what we record)
            last = str(e).strip().splitlines()[-1] if str(e).strip() else ""
            # the Python exception Triton wrapped: its cause, or the repr it quotes
            quoted = re.match(r"(\w+)\(", last)
            cause = type(e.__cause__).__name__ if e.__cause__ is not None else \
                quoted.group(1) if quoted else None
            print(f"    {kernel.__name__!r}: ({type(e).__name__!r}, {cause!r}),  # {last[:90]}")
            continue
        print(f"    {kernel.__name__!r}: (None, None),  # compiles")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
