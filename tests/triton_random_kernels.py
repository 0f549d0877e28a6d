"""Kernels drawing Triton's random numbers, written against `triton.language`, and the
cases they run: the same file makes the reference numbers under Triton
(scripts/triton_random_reference.py, into tests/data/triton_random_reference.json) and
runs under tilecc in tests/test_random.py, loaded with `tilecc.cli.load_kernel`.

Each case is (name, kernel, scalar arguments, input arrays, constexprs); a kernel's first
parameter is the output, `OUTPUTS` rows of `BLOCK` elements of `OUT_DTYPE`.
"""

import numpy as np
import triton
import triton.language as tl
from triton.language.random import randint as random_randint


@triton.jit
def randint4x_kernel(out_ptr, seed, base, ROWS: tl.constexpr, COLS: tl.constexpr,
                     WIDE: tl.constexpr, N_ROUNDS: tl.constexpr):
    # a 2-D block of offsets, int64 ones (with bits above 32) when WIDE
    if WIDE:
        base = base.to(tl.int64) * 4294967311
    offsets = base + tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    flat = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    r0, r1, r2, r3 = tl.randint4x(seed, offsets, N_ROUNDS)
    block = ROWS * COLS
    tl.store(out_ptr + flat, r0)
    tl.store(out_ptr + block + flat, r1)
    tl.store(out_ptr + 2 * block + flat, r2)
    tl.store(out_ptr + 3 * block + flat, r3)
    tl.store(out_ptr + 4 * block + flat, tl.randint(seed, offsets, N_ROUNDS))


@triton.jit
def floats_kernel(out_ptr, seed, base, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    offsets = tl.arange(0, BLOCK) + base
    if WIDE:
        offsets = offsets.to(tl.int64) - 3000000000
    idx = tl.arange(0, BLOCK)
    tl.store(out_ptr + idx, tl.rand(seed, offsets))
    tl.store(out_ptr + BLOCK + idx, tl.randn(seed, offsets))
    u0, u1, u2, u3 = tl.random.rand4x(seed, offsets)
    tl.store(out_ptr + 2 * BLOCK + idx, u0)
    tl.store(out_ptr + 3 * BLOCK + idx, u1)
    tl.store(out_ptr + 4 * BLOCK + idx, u2)
    tl.store(out_ptr + 5 * BLOCK + idx, u3)
    n0, n1, n2, n3 = tl.random.randn4x(seed, offsets)
    tl.store(out_ptr + 6 * BLOCK + idx, n0)
    tl.store(out_ptr + 7 * BLOCK + idx, n1)
    tl.store(out_ptr + 8 * BLOCK + idx, n2)
    tl.store(out_ptr + 9 * BLOCK + idx, n3)


@triton.jit
def philox_kernel(out_ptr, seed, counters_ptr, BLOCK: tl.constexpr, N_ROUNDS: tl.constexpr):
    # counters of the pointer's type (uint32 or uint64): Philox-4x32 or -4x64
    idx = tl.arange(0, BLOCK)
    c0 = tl.load(counters_ptr + idx)
    c1 = tl.load(counters_ptr + BLOCK + idx)
    c2 = tl.load(counters_ptr + 2 * BLOCK + idx)
    c3 = tl.load(counters_ptr + 3 * BLOCK + idx)
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, c2, c3, N_ROUNDS)
    tl.store(out_ptr + idx, r0)
    tl.store(out_ptr + BLOCK + idx, r1)
    tl.store(out_ptr + 2 * BLOCK + idx, r2)
    tl.store(out_ptr + 3 * BLOCK + idx, r3)


@triton.jit
def uniform_of_philox_kernel(out_ptr, seed, counters_ptr, BLOCK: tl.constexpr):
    # 64-bit words to floats, and the Box-Muller pair of two of them
    idx = tl.arange(0, BLOCK)
    c = tl.load(counters_ptr + idx)
    r0, r1, _, _ = tl.philox(seed, c, c, c, c)
    u0 = tl.random.uint_to_uniform_float(r0)
    u1 = tl.random.uint_to_uniform_float(r1)
    n0, n1 = tl.random.pair_uniform_to_normal(u0, u1)
    tl.store(out_ptr + idx, u0)
    tl.store(out_ptr + BLOCK + idx, u1)
    tl.store(out_ptr + 2 * BLOCK + idx, n0)
    tl.store(out_ptr + 3 * BLOCK + idx, n1)


@triton.jit
def block_seed_kernel(out_ptr, seeds_ptr, base, BLOCK: tl.constexpr):
    # a seed per element (Triton's philox takes blocks of seeds too)
    idx = tl.arange(0, BLOCK)
    seeds = tl.load(seeds_ptr + idx)
    bits = random_randint(seeds, idx + base)  # imported from triton.language.random
    tl.store(out_ptr + idx, bits.to(tl.float32, bitcast=True))
    tl.store(out_ptr + BLOCK + idx, tl.rand(seeds, idx + base))


def _counters(dtype, block: int, salt: int) -> np.ndarray:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(salt)
    return rng.integers(0, int(info.max), size=4 * block, dtype=dtype, endpoint=True)


# (name, kernel, scalar args, array args, constexprs, outputs, output dtype)
CASES = [
    ("randint4x_seed123", "randint4x_kernel", dict(seed=123, base=0), {},
     dict(ROWS=4, COLS=16, WIDE=False, N_ROUNDS=10), 5, "uint32"),
    ("randint4x_seed0_base1000", "randint4x_kernel", dict(seed=0, base=1000), {},
     dict(ROWS=2, COLS=32, WIDE=False, N_ROUNDS=10), 5, "uint32"),
    ("randint4x_negative_seed", "randint4x_kernel", dict(seed=-7, base=-40), {},
     dict(ROWS=8, COLS=8, WIDE=False, N_ROUNDS=10), 5, "uint32"),
    ("randint4x_int64_seed", "randint4x_kernel", dict(seed=2**40 + 12345, base=77), {},
     dict(ROWS=4, COLS=16, WIDE=False, N_ROUNDS=10), 5, "uint32"),
    ("randint4x_int64_offsets", "randint4x_kernel", dict(seed=2024, base=3), {},
     dict(ROWS=4, COLS=16, WIDE=True, N_ROUNDS=10), 5, "uint32"),
    ("randint4x_7_rounds", "randint4x_kernel", dict(seed=99, base=5), {},
     dict(ROWS=4, COLS=16, WIDE=False, N_ROUNDS=7), 5, "uint32"),
    ("floats_seed42", "floats_kernel", dict(seed=42, base=0), {},
     dict(BLOCK=128, WIDE=False), 10, "float32"),
    ("floats_big_seed", "floats_kernel", dict(seed=2**62 + 3, base=123456), {},
     dict(BLOCK=128, WIDE=False), 10, "float32"),
    ("floats_int64_offsets", "floats_kernel", dict(seed=31337, base=17), {},
     dict(BLOCK=128, WIDE=True), 10, "float32"),
    ("philox_4x32", "philox_kernel", dict(seed=2**33 + 5),
     dict(counters_ptr=("uint32", 1)), dict(BLOCK=64, N_ROUNDS=10), 4, "uint32"),
    ("philox_4x32_3_rounds", "philox_kernel", dict(seed=11),
     dict(counters_ptr=("uint32", 2)), dict(BLOCK=64, N_ROUNDS=3), 4, "uint32"),
    ("philox_4x64", "philox_kernel", dict(seed=2**50 + 9),
     dict(counters_ptr=("uint64", 3)), dict(BLOCK=64, N_ROUNDS=10), 4, "uint64"),
    ("uniform_of_philox_4x64", "uniform_of_philox_kernel", dict(seed=8),
     dict(counters_ptr=("uint64", 4)), dict(BLOCK=64), 4, "float32"),
    ("block_seeds", "block_seed_kernel", dict(base=10),
     dict(seeds_ptr=("int64", 5)), dict(BLOCK=64), 2, "float32"),
]


def case_arrays(case) -> dict:
    """The NumPy input arrays of a case (the same bits on every run)."""
    name, kernel, scalars, arrays, constexprs, outputs, out_dtype = case
    block = constexprs.get("BLOCK", 0)
    return {arg: _counters(np.dtype(dtype), block, salt) for arg, (dtype, salt) in arrays.items()}


def output_size(case) -> int:
    constexprs = case[4]
    return case[5] * constexprs.get("BLOCK", constexprs.get("ROWS", 1) * constexprs.get("COLS", 1))


def argument_order(case) -> list[str]:
    """The kernel's non-constexpr parameters after the output, in order."""
    return {"randint4x_kernel": ["seed", "base"], "floats_kernel": ["seed", "base"],
            "philox_kernel": ["seed", "counters_ptr"],
            "uniform_of_philox_kernel": ["seed", "counters_ptr"],
            "block_seed_kernel": ["seeds_ptr", "base"]}[case[1]]
