"""scripts/wgmma_register_check.py: the loop hazard it reports, on disassembly written here
(what nvdisasm prints for sm_90a: a label, HGMMA with its A fragment's first register, a
branch back)."""

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "wgmma_register_check", os.path.join(HERE, "..", "scripts", "wgmma_register_check.py"))
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

LOOP = """\
.L_x_4:
        /*0e60*/                   WARPGROUP.ARRIVE ;
        /*0f50*/                   HGMMA.64x64x16.F32 R24, R88, gdesc[UR4], RZ, !UPT ;
        /*1000*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*1690*/                   F2FP.F16.F32.PACK_AB {dest}, R45, R44 ;
        /*1870*/                   HGMMA.64x64x16.F32 R56, R88, gdesc[UR8].tnspB, R56 ;
        /*18f0*/              @!P0 BRA `(.L_x_4) ;
"""


def test_an_a_fragment_overwritten_later_in_its_loop_is_reported() -> None:
    # R90 is the third register of the fragment R88..R91 the first product reads
    found = check.hazards(LOOP.format(dest="R90").splitlines())
    assert len(found) == 1 and "R24, R88" in found[0]


def test_registers_outside_the_fragment_or_rewritten_first_are_not() -> None:
    assert check.hazards(LOOP.format(dest="R92").splitlines()) == []
    rewritten = LOOP.format(dest="R90").replace(
        "WARPGROUP.ARRIVE ;", "WARPGROUP.ARRIVE ;\n        /*0e70*/                   "
        "PRMT R90, R1, 0x5410, R2 ;")
    assert check.hazards(rewritten.splitlines()) == []
    no_loop = LOOP.format(dest="R90").replace("@!P0 BRA `(.L_x_4)", "@!P0 BRA `(.L_x_9)")
    assert check.hazards(no_loop.splitlines()) == []
