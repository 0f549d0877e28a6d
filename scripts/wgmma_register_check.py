"""Look in compiled sm_90a code for a hazard of ptxas 13.0: a wgmma whose A operand comes
from registers that live across a loop's back edge, and that some instruction of the same
loop overwrites after the wgmma without writing them again before it (the next iteration
then multiplies whatever was left there).  tilecc no longer reads such an A from registers
(passes/settle.py stages it in shared memory once); this script is how that was found
and how to look again with another ptxas.

    python scripts/wgmma_register_check.py FILE.cubin ...
    python scripts/wgmma_register_check.py --examples     # the examples' Hopper kernels

Needs `nvdisasm` (on PATH, or NVDISASM=path; the nvidia-cuda-nvdisasm wheel has one).
Exit status 1 if any kernel has the hazard.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

LABEL = re.compile(r"\s*(\.L_x_\d+):")
BACK = re.compile(r"BRA `\((\.L_x_\d+)\)")
HGMMA_A_REGS = re.compile(r"HGMMA\.\S+ R\d+, R(\d+), gdesc")
DEST = re.compile(r"\s*/\*\w+\*/\s+(?:@!?U?P\w+\s+)?[A-Z][\w.]*\s+(R\d+)\b")


def hazards(sass: list[str]) -> list[str]:
    """The wgmma lines whose register A a later instruction of their loop overwrites."""
    labels = {m.group(1): i for i, line in enumerate(sass) if (m := LABEL.match(line))}
    found = []
    for end, line in enumerate(sass):
        m = BACK.search(line)
        if not m or labels.get(m.group(1), end + 1) > end:
            continue  # not a branch back to an earlier label: no loop
        body = sass[labels[m.group(1)]:end + 1]
        for at, ins in enumerate(body):
            h = HGMMA_A_REGS.search(ins)
            if not h:
                continue
            regs = {f"R{int(h.group(1)) + k}" for k in range(4)}  # a fragment: 4 registers

            def writes(x: str) -> bool:
                d = DEST.match(x)
                return bool(d) and d.group(1) in regs
            if any(map(writes, body[at + 1:])) and not any(map(writes, body[:at])):
                found.append(ins.strip())
    return found


def disassemble(cubin: bytes) -> list[str]:
    tool = os.environ.get("NVDISASM") or shutil.which("nvdisasm")
    if tool is None:
        sys.exit("nvdisasm not found: put it on PATH or set NVDISASM")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([tool, "-c", f.name], capture_output=True, text=True,
                              check=True).stdout.splitlines()


def example_binaries():
    """(name, cubin) of the examples' kernels (test_golden's list), compiled for sm_90a."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [os.path.join(here, "..", "examples"), os.path.join(here, "..", "tests")]
    import importlib

    from test_golden import GOLDEN

    for name, (module, fn, sig, warps) in GOLDEN.items():
        kernel = getattr(importlib.import_module(module), fn)
        yield name, kernel.compile(sig, arch="sm_90a", num_warps=warps).data


def main(argv: list[str]) -> int:
    if argv == ["--examples"]:
        items = list(example_binaries())
    else:
        items = [(p, open(p, "rb").read()) for p in argv]
    bad = 0
    for name, cubin in items:
        found = hazards(disassemble(cubin))
        bad += bool(found)
        print(f"{name}: " + ("ok" if not found else f"{len(found)} wgmma reading clobbered A "
                             f"registers, first: {found[0]}"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
