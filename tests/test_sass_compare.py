"""scripts/sass_compare.py: its hot loop on a hand-written SASS listing — the innermost
range a backward branch closes that holds the tensor-core products, not the outer loop
around it nor a retry's branch from far below back into it — and the programs an SM
holds by a kernel's registers and by its shared memory."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "sass_compare.py"


@pytest.fixture(scope="module")
def sass():
    spec = importlib.util.spec_from_file_location("sass_compare", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _listing(rows: list[str]) -> str:
    """cuobjdump's layout: each instruction at its address, its encoding beside it."""
    return "\n".join(f"        /*{16 * i:04x}*/  {row} ;  /* 0x0000000000000000 */"
                     for i, row in enumerate(rows))


# 0x10..0x90: an outer loop around the K loop 0x20..0x60; 0xa0: an epilogue store;
# 0xb0..0xc0: the retry of the wait at 0x30, branching back into the K loop
ROWS = [
    "MOV R0, RZ",                         # 0x00
    "IADD3 R1, R1, 0x1, RZ",              # 0x10 outer loop
    "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2",  # 0x20 K loop
    "@!P0 BRA 0xb0",                      # 0x30 to the retry
    "HGMMA.64x128x16.F32 R24, gdesc[UR8], R24",     # 0x40
    "HGMMA.64x128x16.F32 R24, gdesc[UR12], R24",    # 0x50
    "@P1 BRA 0x20",                       # 0x60 K loop back
    "FMUL R3, R24, R25",                  # 0x70
    "FFMA R4, R3, R3, R4",                # 0x80
    "@P2 BRA 0x10",                       # 0x90 outer loop back
    "STG.E.128 [R6], R24",                # 0xa0
    "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2",  # 0xb0 retry
    "@!P0 BRA 0xb0",                      # 0xc0 (a spin on itself)
    "BRA 0x40",                           # 0xd0 back into the K loop
    "EXIT",                               # 0xe0
]


def test_the_hot_loop_is_the_innermost_range_of_the_products(sass):
    loop = sass.hot_loop(_listing(ROWS))
    assert loop is not None
    got = sass.counts(loop)
    assert got["HMMA/HGMMA"] == 2
    assert got["all instructions"] == 5  # 0x20..0x60: the wait, its branch, 2 HGMMA, back
    assert got["STG 128-bit"] == 0 and got["FFMA"] == 0


def test_without_products_the_loop_of_the_most_ffmas(sass):
    rows = ["MOV R0, RZ", "FADD R1, R1, R2", "@P0 BRA 0x10", "FFMA R1, R1, R2, R3",
            "FFMA R1, R1, R2, R3", "@P1 BRA 0x30", "EXIT"]
    got = sass.counts(sass.hot_loop(_listing(rows)))
    assert got["FFMA"] == 2 and got["all instructions"] == 3


def test_straight_code_has_no_hot_loop(sass):
    assert sass.hot_loop(_listing(["MOV R0, RZ", "@P0 BRA 0x30", "FADD R1, R1, R2",
                                   "EXIT"])) is None


@pytest.mark.parametrize("regs,warps,programs", [
    (32, 32, 2),    # 1024 threads at 32 registers: two programs
    (33, 32, 1),    # one register more: a warp takes 1280 (the 256-register unit), one
    (168, 4, 3),    # 5376 a warp: three of 21504 in 65536
    (36, 8, 6),     # 1152 a warp given as 1280: six, not seven
    (255, 8, 1),
    (16, 1, 32),    # at most 32 programs an SM, however small
    (16, 4, 16),    # and at most 2048 threads
    (None, 4, None),
])
def test_programs_an_sm_holds_by_registers(sass, regs, warps, programs):
    assert sass.programs_by_registers(regs, warps) == programs


@pytest.mark.parametrize("nbytes,arch,programs", [
    (81920, 90, 2),     # 80 KiB and the reserved one: two of 228
    (73728, 90, 3),     # 72 KiB: three (what Triton's int8 weights at 64 x 128 x 64 take)
    (232448, 90, 1),    # a program's whole 227 KiB
    (81920, 80, 2),     # sm_80's 164 KiB
    (49152, 86, 2),     # sm_86's 100 KiB: two of 49 KiB
    (0, 90, 32),        # none: the program count's own limit
    (None, 90, None),
])
def test_programs_an_sm_holds_by_shared_memory(sass, nbytes, arch, programs):
    assert sass.programs_by_shared(nbytes, arch) == programs


def test_a_kernels_static_shared_memory_is_ptxas_own_count(sass):
    log = "ptxas info    : Used 26 registers, used 1 barriers, 32 bytes smem, 400 bytes cmem[0]"
    assert sass.static_shared(log) == 32
    assert sass.static_shared("ptxas info    : Used 26 registers") == 0
