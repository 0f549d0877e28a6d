"""`tl.rand`, `tl.randn`, `tl.randint`, `tl.randint4x`, `tl.philox`: Triton's counter-based
random numbers, written in the kernel language (as Triton writes them) and traced like
any helper, so the interpreter, CUDA and HIP share one definition.

The generator is Philox-4x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
3", SC'11) with 10 rounds, or Philox-4x64 for 64-bit counters, with Triton's constants,
key schedule and integer → float conversions, so that every value equals Triton's for
the same seed and offsets bit for bit: a dropout mask drawn here is the one Triton draws.
A stream is addressed by (seed, offset): the seed is the key, the offset the counter, so
the same offset always gives the same number and programs need no shared state.
"""

from __future__ import annotations

# `tl` is the language's core module (the package imports this one): inside kernels names
# resolve by their canonical name, so `tl.umulhi` here is the user's `tl.umulhi`
from tilecc.language import core as tl
from tilecc.language.core import kernel_function

N_ROUNDS_DEFAULT = tl.constexpr(10)  # Philox's rounds, as Triton

# Philox's multipliers (ROUND) and Weyl key increments (KEY), for 32- and 64-bit words
_ROUND_A_32, _ROUND_B_32 = 0xD2511F53, 0xCD9E8D57
_KEY_A_32, _KEY_B_32 = 0x9E3779B9, 0xBB67AE85
_ROUND_A_64, _ROUND_B_64 = 0xD2E7470EE14C6C93, 0xCA5A826395121157
_KEY_A_64, _KEY_B_64 = 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B

# The largest scale with (2**(N-1) - 1) * scale < 1 in fp32: uniform floats stay below 1
_UNIFORM_SCALE_32 = 4.6566127342e-10
_UNIFORM_SCALE_64 = 1.0842020432385337e-19


@kernel_function
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """`n_rounds` Philox rounds on the counter (c0, c1, c2, c3) under the key (k0, k1),
    all uint32 or all uint64; returns the four scrambled words."""
    if c0.dtype == tl.uint32:
        round_a = _ROUND_A_32
        round_b = _ROUND_B_32
        key_a = _KEY_A_32
        key_b = _KEY_B_32
    else:
        tl.static_assert(c0.dtype == tl.uint64, "philox_impl takes uint32 or uint64 words")
        round_a = _ROUND_A_64
        round_b = _ROUND_B_64
        key_a = _KEY_A_64
        key_b = _KEY_B_64
    for _ in tl.static_range(n_rounds):
        # one round: two multiplications whose high halves mix into the other words
        prev_c0, prev_c2 = c0, c2
        c0 = tl.umulhi(round_b, prev_c2) ^ c1 ^ k0
        c2 = tl.umulhi(round_a, prev_c0) ^ c3 ^ k1
        c1 = round_b * prev_c2  # the low halves: unsigned products wrap
        c3 = round_a * prev_c0
        k0 = k0 + key_a  # the key schedule (unsigned sums wrap)
        k1 = k1 + key_b
    return c0, c1, c2, c3


@kernel_function
def philox(seed, c0, c1, c2, c3, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Philox on the counter (c0, c1, c2, c3), keyed by the integer `seed`. 32-bit
    counters (of any type: their bits are taken) give four uint32 blocks, keyed by both
    halves of the seed; 64-bit counters four uint64 blocks, keyed by the seed alone."""
    seed = tl.to_tensor(seed)
    tl.static_assert(seed.dtype.is_int(), "the seed of Philox must be an integer")
    seed = seed.to(tl.uint64)
    c0 = tl.to_tensor(c0)
    c1 = tl.to_tensor(c1)
    c2 = tl.to_tensor(c2)
    c3 = tl.to_tensor(c3)
    if c0.dtype.primitive_bitwidth == 32:
        word = tl.uint32
        key_lo = (seed & 0xFFFFFFFF).to(tl.uint32)
        key_hi = ((seed >> 32) & 0xFFFFFFFF).to(tl.uint32)
    else:
        tl.static_assert(c0.dtype.primitive_bitwidth == 64,
                         "Philox counters must be 32- or 64-bit values")
        word = tl.uint64
        key_lo = seed
        # Triton's is a [1] block of zeros, which makes scalar counters' results [1] blocks;
        # a scalar here keeps them scalars (the same numbers)
        key_hi = tl.to_tensor(0).to(tl.uint64)
    return philox_impl(c0.to(word, bitcast=True), c1.to(word, bitcast=True),
                       c2.to(word, bitcast=True), c3.to(word, bitcast=True),
                       key_lo, key_hi, n_rounds)


@kernel_function
def randint4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random uint32 for the integer `offset` block under the scalar
    `seed`: the cheapest way to draw several streams at once. A 64-bit offset's high
    half is the counter's second word; the others are zero."""
    low = offset.to(tl.uint32)
    zero = tl.zeros_like(low)
    if offset.dtype.primitive_bitwidth > 32:
        high = (offset >> 32).to(tl.uint32)
    else:
        high = zero
    return philox(seed, low, high, zero, zero, n_rounds)


@kernel_function
def randint(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A block of random uint32 for the `offset` block under the scalar `seed` (the
    first of `randint4x`'s four)."""
    first, _, _, _ = randint4x(seed, offset, n_rounds)
    return first


@kernel_function
def uint_to_uniform_float(x):
    """Random 32- or 64-bit integers → float32 uniform in [0, 1): the bits read as
    signed, negatives folded onto non-negatives (~x is -x - 1), then scaled."""
    if x.dtype == tl.uint32 or x.dtype == tl.int32:
        x = x.to(tl.int32, bitcast=True)
        scale = _UNIFORM_SCALE_32
    else:
        tl.static_assert(x.dtype == tl.uint64 or x.dtype == tl.int64,
                         "uint_to_uniform_float takes 32- or 64-bit integers")
        x = x.to(tl.int64, bitcast=True)
        scale = _UNIFORM_SCALE_64
    x = tl.where(x < 0, ~x, x)
    return x * scale


@kernel_function
def rand(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A block of random float32, uniform in [0, 1), for the `offset` block under the
    scalar `seed`."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@kernel_function
def rand4x(seed, offsets, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random float32, uniform in [0, 1)."""
    i1, i2, i3, i4 = randint4x(seed, offsets, n_rounds)
    return (uint_to_uniform_float(i1), uint_to_uniform_float(i2),
            uint_to_uniform_float(i3), uint_to_uniform_float(i4))


@kernel_function
def pair_uniform_to_normal(u1, u2):
    """Two uniform blocks → two independent standard normal blocks (Box-Muller)."""
    u1 = tl.maximum(1.0e-7, u1)  # log(0) would be -inf
    theta = 6.283185307179586 * u2
    radius = tl.sqrt(-2.0 * tl.log(u1))
    return radius * tl.cos(theta), radius * tl.sin(theta)


@kernel_function
def randn(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A block of random float32 from the standard normal distribution, for the
    `offset` block under the scalar `seed`."""
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    n1, _ = pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))
    return n1


@kernel_function
def randn4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random float32 from the standard normal distribution."""
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4


# the functions `tl.<name>` and `tl.random.<name>` name
FUNCTIONS = ("philox_impl", "philox", "randint", "randint4x", "uint_to_uniform_float", "rand",
             "rand4x", "pair_uniform_to_normal", "randn", "randn4x")
