# result: ok
# requires: nvrtc
# Float constants in an fp32 context beyond fp32's range, below its normals, or between its
# largest value and infinity: the kernel computes what fp32 rounds them to (inf, 0, a
# denormal, the largest float), as Triton does; the generated source compiles (C rejects
# `1e39f`), and the interpreter agrees.

import numpy as np

import tilecc
import tilecc.language as tl

VALUES = (1e39, -1e39, 1e-50, -1e-50, 1e-40, 3.40282356e38, 1.5)


@tilecc.jit
def constants(out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr,
              E: tl.constexpr, F: tl.constexpr, G: tl.constexpr):
    offs = tl.arange(0, 8)
    v = tl.full((8,), G, tl.float32)
    v = tl.where(offs == 0, tl.full((8,), A, tl.float32), v)
    v = tl.where(offs == 1, tl.full((8,), B, tl.float32), v)
    v = tl.where(offs == 2, tl.full((8,), C, tl.float32), v)
    v = tl.where(offs == 3, tl.full((8,), D, tl.float32), v)
    v = tl.where(offs == 4, tl.full((8,), E, tl.float32), v)
    v = tl.where(offs == 5, tl.full((8,), F, tl.float32), v)
    tl.store(out_ptr + offs, v)


def run():
    names = dict(zip("ABCDEFG", VALUES))
    with np.errstate(over="ignore", under="ignore"):
        expected = np.array([*VALUES, VALUES[-1]], np.float64).astype(np.float32)
    out = np.zeros(8, np.float32)
    constants.interpret[(1,)](out, **names)
    assert np.array_equal(out, expected) and np.signbit(out[3]), (out, expected)
    source = constants.source("*fp32", **names)
    assert "tc::inf<float>()" in source and "-tc::inf<float>()" in source, source
    assert "-0.0f" in source and "e+39f" not in source and "e-50f" not in source, source
    constants.compile("*fp32", **names)
