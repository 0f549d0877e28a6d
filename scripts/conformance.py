"""Which of Triton's documented `triton.language` names tilecc runs, per path.

    python scripts/conformance.py [--markdown]

Each name of Triton 3.6's documented API list (docs/python-api/triton.language.rst, in its
sections) has a small kernel here that uses it.  Each kernel is run three ways: on the
interpreter (NumPy), through NVRTC for sm_90 (CUDA) and through hiprtc for gfx90a (HIP), a
target's kernels in one compiler run (each on its own only where that run fails).
A cell says `yes` (it ran, or compiled), `refused` (a CompilationError, or on the
interpreter an InterpreterError, that says why; the table prints the reason) or `BROKEN` (any other exception: a bug).  The totals at the end
are what docs/language.md and the closing notes quote.  Results are about support, not
values: every supported name has its own tests against NumPy in tests/.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys

import numpy as np

import tilecc
import tilecc.language as tl

N = 1024  # elements of every array argument
SIGNATURE = "*fp32,*fp32,*i32,*fp32,*i32,i32"
jit = tilecc.jit

# --- one kernel per name: (X, Y, I, O, OI, n); X, Y in [0.1, 1), I in [0, 16) ---------------


@jit
def k_program_id(X, Y, I, O, OI, n):
    tl.store(OI + tl.program_id(0), tl.program_id(0))


@jit
def k_num_programs(X, Y, I, O, OI, n):
    tl.store(OI + tl.program_id(0), tl.num_programs(0))


@jit
def k_tensor(X, Y, I, O, OI, n):
    x = tl.load(X + tl.arange(0, 16))
    tl.static_assert(isinstance(x, tl.tensor))
    tl.store(O + tl.arange(0, 16), x)


@jit
def k_arange(X, Y, I, O, OI, n):
    tl.store(OI + tl.arange(0, 16), tl.arange(0, 16))


@jit
def k_cat(X, Y, I, O, OI, n):
    a = tl.load(X + tl.arange(0, 16))
    b = tl.load(Y + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 32), tl.cat(a, b, can_reorder=True))


@jit
def k_full(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.full((16,), 2.5, tl.float32))


@jit
def k_zeros(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.zeros((16,), tl.float32))


@jit
def k_zeros_like(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.zeros_like(tl.load(X + tl.arange(0, 16))))


@jit
def k_cast(X, Y, I, O, OI, n):
    tl.store(OI + tl.arange(0, 16), tl.cast(tl.load(X + tl.arange(0, 16)) * 10, tl.int32))


@jit
def k_broadcast(X, Y, I, O, OI, n):
    a = tl.load(X + tl.arange(0, 16))[:, None]
    b = tl.load(Y + tl.arange(0, 16))[None, :]
    a, b = tl.broadcast(a, b)
    tl.store(O + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], a + b)


@jit
def k_broadcast_to(X, Y, I, O, OI, n):
    a = tl.broadcast_to(tl.load(X + tl.arange(0, 16))[None, :], (16, 16))
    tl.store(O + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], a)


@jit
def k_expand_dims(X, Y, I, O, OI, n):
    a = tl.expand_dims(tl.load(X + tl.arange(0, 16)), 1)
    tl.store(O + tl.arange(0, 16)[:, None] + tl.zeros((16, 1), tl.int32), a)


@jit
def k_interleave(X, Y, I, O, OI, n):
    a = tl.load(X + tl.arange(0, 16))
    b = tl.load(Y + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 32), tl.interleave(a, b))


@jit
def k_join(X, Y, I, O, OI, n):
    a = tl.load(X + tl.arange(0, 16))
    b = tl.load(Y + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 16)[:, None] * 2 + tl.arange(0, 2)[None, :], tl.join(a, b))


@jit
def k_permute(X, Y, I, O, OI, n):
    a = tl.load(X + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
    tl.store(O + tl.arange(0, 8)[:, None] * 4 + tl.arange(0, 4)[None, :], tl.permute(a, (1, 0)))


@jit
def k_ravel(X, Y, I, O, OI, n):
    a = tl.load(X + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
    tl.store(O + tl.arange(0, 32), tl.ravel(a))


@jit
def k_reshape(X, Y, I, O, OI, n):
    a = tl.reshape(tl.load(X + tl.arange(0, 32)), (4, 8))
    tl.store(O + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :], a)


@jit
def k_split(X, Y, I, O, OI, n):
    a, b = tl.split(tl.load(X + tl.arange(0, 16)[:, None] * 2 + tl.arange(0, 2)[None, :]))
    tl.store(O + tl.arange(0, 16), a - b)


@jit
def k_trans(X, Y, I, O, OI, n):
    a = tl.load(X + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
    tl.store(O + tl.arange(0, 8)[:, None] * 4 + tl.arange(0, 4)[None, :], tl.trans(a))


@jit
def k_view(X, Y, I, O, OI, n):
    a = tl.view(tl.load(X + tl.arange(0, 32)), (4, 8))
    tl.store(O + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :], a)


@jit
def k_dot(X, Y, I, O, OI, n):
    r = tl.arange(0, 16)
    a = tl.load(X + r[:, None] * 16 + r[None, :])
    b = tl.load(Y + r[:, None] * 16 + r[None, :])
    tl.store(O + r[:, None] * 16 + r[None, :], tl.dot(a, b))


@jit
def k_dot_scaled(X, Y, I, O, OI, n):
    r = tl.arange(0, 32)
    a = tl.load(I + r[:, None] * 32 + r[None, :]).to(tl.uint8)
    b = tl.load(I + r[:, None] * 32 + r[None, :]).to(tl.uint8)
    c = tl.dot_scaled(a, None, "e4m3", b, None, "e4m3")
    tl.store(O + r[:, None] * 32 + r[None, :], c)


@jit
def k_load(X, Y, I, O, OI, n):
    offs = tl.arange(0, 16)
    tl.store(O + offs, tl.load(X + offs, mask=offs < n, other=0.0))


@jit
def k_store(X, Y, I, O, OI, n):
    offs = tl.arange(0, 16)
    tl.store(O + offs, tl.load(X + offs), mask=offs < n)


@jit
def k_make_block_ptr(X, Y, I, O, OI, n):
    p = tl.make_block_ptr(X, shape=(n, 16), strides=(16, 1), offsets=(0, 0),
                          block_shape=(16, 16), order=(1, 0))
    q = tl.make_block_ptr(O, shape=(n, 16), strides=(16, 1), offsets=(0, 0),
                          block_shape=(16, 16), order=(1, 0))
    tl.store(q, tl.load(p, boundary_check=(0,)), boundary_check=(0,))


@jit
def k_advance(X, Y, I, O, OI, n):
    p = tl.make_block_ptr(X, shape=(n, 16), strides=(16, 1), offsets=(0, 0),
                          block_shape=(16, 16), order=(1, 0))
    q = tl.make_block_ptr(O, shape=(n, 16), strides=(16, 1), offsets=(0, 0),
                          block_shape=(16, 16), order=(1, 0))
    p = tl.advance(p, (16, 0))
    tl.store(q, tl.load(p, boundary_check=(0,)), boundary_check=(0,))


@jit
def k_flip(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.flip(tl.load(X + tl.arange(0, 16))))


@jit
def k_where(X, Y, I, O, OI, n):
    x = tl.load(X + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 16), tl.where(x > 0.5, x, -x))


@jit
def k_swizzle2d(X, Y, I, O, OI, n):
    i, j = tl.swizzle2d(tl.program_id(0), tl.program_id(1), 4, 4, 2)
    tl.store(OI + i * 4 + j, 1)


@jit
def k_abs(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.abs(tl.load(X + tl.arange(0, 16)) - 0.5))


@jit
def k_cdiv(X, Y, I, O, OI, n):
    tl.store(OI + tl.arange(0, 16), tl.cdiv(tl.load(I + tl.arange(0, 16)), 3))


@jit
def k_ceil(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.ceil(tl.load(X + tl.arange(0, 16)) * 4))


@jit
def k_clamp(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.clamp(tl.load(X + tl.arange(0, 16)), 0.3, 0.6))


@jit
def k_cos(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.cos(tl.load(X + tl.arange(0, 16))))


@jit
def k_div_rn(X, Y, I, O, OI, n):
    x = tl.load(X + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 16), tl.div_rn(x, tl.load(Y + tl.arange(0, 16))))


@jit
def k_erf(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.erf(tl.load(X + tl.arange(0, 16))))


@jit
def k_exp(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.exp(tl.load(X + tl.arange(0, 16))))


@jit
def k_exp2(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.exp2(tl.load(X + tl.arange(0, 16))))


@jit
def k_fdiv(X, Y, I, O, OI, n):
    x = tl.load(X + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 16), tl.fdiv(x, tl.load(Y + tl.arange(0, 16))))


@jit
def k_floor(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.floor(tl.load(X + tl.arange(0, 16)) * 4))


@jit
def k_fma(X, Y, I, O, OI, n):
    x = tl.load(X + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 16), tl.fma(x, x, tl.load(Y + tl.arange(0, 16))))


@jit
def k_log(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.log(tl.load(X + tl.arange(0, 16))))


@jit
def k_log2(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.log2(tl.load(X + tl.arange(0, 16))))


@jit
def k_maximum(X, Y, I, O, OI, n):
    x = tl.load(X + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 16), tl.maximum(x, tl.load(Y + tl.arange(0, 16))))


@jit
def k_minimum(X, Y, I, O, OI, n):
    x = tl.load(X + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 16), tl.minimum(x, tl.load(Y + tl.arange(0, 16))))


@jit
def k_rsqrt(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.rsqrt(tl.load(X + tl.arange(0, 16))))


@jit
def k_sigmoid(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.sigmoid(tl.load(X + tl.arange(0, 16))))


@jit
def k_sin(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.sin(tl.load(X + tl.arange(0, 16))))


@jit
def k_softmax(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.softmax(tl.load(X + tl.arange(0, 16))))


@jit
def k_sqrt(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.sqrt(tl.load(X + tl.arange(0, 16))))


@jit
def k_sqrt_rn(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.sqrt_rn(tl.load(X + tl.arange(0, 16))))


@jit
def k_umulhi(X, Y, I, O, OI, n):
    i = tl.load(I + tl.arange(0, 16))
    tl.store(OI + tl.arange(0, 16), tl.umulhi(i * 123456789, i + 987654321))


@jit
def k_argmax(X, Y, I, O, OI, n):
    tl.store(OI, tl.argmax(tl.load(X + tl.arange(0, 16)), axis=0))


@jit
def k_argmin(X, Y, I, O, OI, n):
    tl.store(OI, tl.argmin(tl.load(X + tl.arange(0, 16)), axis=0))


@jit
def k_max(X, Y, I, O, OI, n):
    tl.store(O, tl.max(tl.load(X + tl.arange(0, 16)), axis=0))


@jit
def k_min(X, Y, I, O, OI, n):
    tl.store(O, tl.min(tl.load(X + tl.arange(0, 16)), axis=0))


@jit
def _add(a, b):
    return a + b


@jit
def k_reduce(X, Y, I, O, OI, n):
    tl.store(O, tl.reduce(tl.load(X + tl.arange(0, 16)), 0, _add))


@jit
def k_sum(X, Y, I, O, OI, n):
    tl.store(O, tl.sum(tl.load(X + tl.arange(0, 16)), axis=0))


@jit
def k_xor_sum(X, Y, I, O, OI, n):
    tl.store(OI, tl.xor_sum(tl.load(I + tl.arange(0, 16)), axis=0))


@jit
def k_associative_scan(X, Y, I, O, OI, n):
    x = tl.load(X + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 16), tl.associative_scan(x, 0, _add))


@jit
def k_cumprod(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.cumprod(tl.load(X + tl.arange(0, 16)), axis=0))


@jit
def k_cumsum(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.cumsum(tl.load(X + tl.arange(0, 16)), axis=0))


@jit
def k_histogram(X, Y, I, O, OI, n):
    tl.store(OI + tl.arange(0, 16), tl.histogram(tl.load(I + tl.arange(0, 64)), 16))


@jit
def k_sort(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.sort(tl.load(X + tl.arange(0, 16))))


@jit
def k_gather(X, Y, I, O, OI, n):
    x = tl.load(X + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 16), tl.gather(x, tl.load(I + tl.arange(0, 16)), 0))


@jit
def k_atomic_add(X, Y, I, O, OI, n):
    tl.atomic_add(O + tl.arange(0, 16), tl.load(X + tl.arange(0, 16)))


@jit
def k_atomic_and(X, Y, I, O, OI, n):
    tl.atomic_and(OI + tl.arange(0, 16), tl.load(I + tl.arange(0, 16)))


@jit
def k_atomic_cas(X, Y, I, O, OI, n):
    tl.atomic_cas(OI + tl.arange(0, 16), 0, 1)


@jit
def k_atomic_max(X, Y, I, O, OI, n):
    tl.atomic_max(O + tl.arange(0, 16), tl.load(X + tl.arange(0, 16)))


@jit
def k_atomic_min(X, Y, I, O, OI, n):
    tl.atomic_min(O + tl.arange(0, 16), tl.load(X + tl.arange(0, 16)))


@jit
def k_atomic_or(X, Y, I, O, OI, n):
    tl.atomic_or(OI + tl.arange(0, 16), tl.load(I + tl.arange(0, 16)))


@jit
def k_atomic_xchg(X, Y, I, O, OI, n):
    tl.atomic_xchg(O + tl.arange(0, 16), tl.load(X + tl.arange(0, 16)))


@jit
def k_atomic_xor(X, Y, I, O, OI, n):
    tl.atomic_xor(OI + tl.arange(0, 16), tl.load(I + tl.arange(0, 16)))


@jit
def k_randint4x(X, Y, I, O, OI, n):
    a, b, c, d = tl.randint4x(n, tl.arange(0, 16))
    tl.store(OI + tl.arange(0, 16), (a ^ b ^ c ^ d).to(tl.int32, bitcast=True))


@jit
def k_randint(X, Y, I, O, OI, n):
    tl.store(OI + tl.arange(0, 16), tl.randint(n, tl.arange(0, 16)).to(tl.int32, bitcast=True))


@jit
def k_rand(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.rand(n, tl.arange(0, 16)))


@jit
def k_randn(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.randn(n, tl.arange(0, 16)))


@jit
def k_range(X, Y, I, O, OI, n):
    acc = tl.zeros((16,), tl.float32)
    for i in tl.range(0, n, 16, num_stages=2):
        acc += tl.load(X + i + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 16), acc)


@jit
def k_static_range(X, Y, I, O, OI, n):
    acc = tl.zeros((16,), tl.float32)
    for i in tl.static_range(4):
        acc += tl.load(X + i * 16 + tl.arange(0, 16))
    tl.store(O + tl.arange(0, 16), acc)


@jit
def k_inline_asm_elementwise(X, Y, I, O, OI, n):
    i = tl.load(I + tl.arange(0, 16))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [i], dtype=tl.int32, is_pure=True,
                                  pack=1)
    tl.store(OI + tl.arange(0, 16), y)


@jit
def k_inline_asm_elementwise_hip(X, Y, I, O, OI, n):
    i = tl.load(I + tl.arange(0, 16))
    y = tl.inline_asm_elementwise("v_mov_b32 $0, $1", "=v,v", [i], dtype=tl.int32, is_pure=True,
                                  pack=1)
    tl.store(OI + tl.arange(0, 16), y)


@jit
def k_assume(X, Y, I, O, OI, n):
    tl.assume(n > 0)
    tl.store(O + tl.arange(0, 16), tl.load(X + tl.arange(0, 16)))


@jit
def k_debug_barrier(X, Y, I, O, OI, n):
    tl.store(O + tl.arange(0, 16), tl.load(X + tl.arange(0, 16)))
    tl.debug_barrier()


@jit
def k_max_constancy(X, Y, I, O, OI, n):
    offs = tl.max_constancy(tl.arange(0, 16) // 4, 4)
    tl.store(O + tl.arange(0, 16), tl.load(X + offs))


@jit
def k_max_contiguous(X, Y, I, O, OI, n):
    offs = tl.max_contiguous(tl.arange(0, 16), 16)
    tl.store(O + offs, tl.load(X + offs))


@jit
def k_multiple_of(X, Y, I, O, OI, n):
    start = tl.multiple_of(n * 0, 16)
    tl.store(O + start + tl.arange(0, 16), tl.load(X + start + tl.arange(0, 16)))


@jit
def k_static_print(X, Y, I, O, OI, n):
    tl.static_print("conformance: static_print")
    tl.store(O + tl.arange(0, 16), tl.load(X + tl.arange(0, 16)))


@jit
def k_static_assert(X, Y, I, O, OI, n):
    tl.static_assert(16 % 4 == 0, "16 is a multiple of 4")
    tl.store(O + tl.arange(0, 16), tl.load(X + tl.arange(0, 16)))


@jit
def k_device_print(X, Y, I, O, OI, n):
    tl.device_print("conformance: n =", n)


@jit
def k_device_assert(X, Y, I, O, OI, n):
    tl.device_assert(n > 0, "n must be positive")
    tl.store(O + tl.arange(0, 16), tl.load(X + tl.arange(0, 16)))


# Triton 3.6's documented list, by section (docs/python-api/triton.language.rst)
SECTIONS = {
    "Programming model": ["tensor", "program_id", "num_programs"],
    "Creation": ["arange", "cat", "full", "zeros", "zeros_like", "cast"],
    "Shape manipulation": ["broadcast", "broadcast_to", "expand_dims", "interleave", "join",
                           "permute", "ravel", "reshape", "split", "trans", "view"],
    "Linear algebra": ["dot", "dot_scaled"],
    "Memory/pointer": ["load", "store", "make_block_ptr", "advance"],
    "Indexing": ["flip", "where", "swizzle2d"],
    "Math": ["abs", "cdiv", "ceil", "clamp", "cos", "div_rn", "erf", "exp", "exp2", "fdiv",
             "floor", "fma", "log", "log2", "maximum", "minimum", "rsqrt", "sigmoid", "sin",
             "softmax", "sqrt", "sqrt_rn", "umulhi"],
    "Reduction": ["argmax", "argmin", "max", "min", "reduce", "sum", "xor_sum"],
    "Scan/sort": ["associative_scan", "cumprod", "cumsum", "histogram", "sort", "gather"],
    "Atomic": ["atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min",
               "atomic_or", "atomic_xchg", "atomic_xor"],
    "Random numbers": ["randint4x", "randint", "rand", "randn"],
    "Iterators": ["range", "static_range"],
    "Inline assembly": ["inline_asm_elementwise"],
    "Compiler hints": ["assume", "debug_barrier", "max_constancy", "max_contiguous",
                       "multiple_of"],
    "Debug": ["static_print", "static_assert", "device_print", "device_assert"],
}
GRIDS = {"swizzle2d": (4, 4)}
# inline assembly is the target's own language: HIP gets GCN assembly
HIP_KERNELS = {"inline_asm_elementwise": k_inline_asm_elementwise_hip}


def _arrays():
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 1.0, N).astype(np.float32)
    y = rng.uniform(0.1, 1.0, N).astype(np.float32)
    i = rng.integers(0, 16, N).astype(np.int32)
    return x, y, i, np.zeros(N, np.float32), np.zeros(N, np.int32), 64


def _outcome(action) -> tuple[str, str]:
    """('yes', '') | ('refused', first line of the reason) | ('BROKEN', the exception)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            action()
        return "yes", ""
    except (tilecc.CompilationError, tilecc.InterpreterError) as e:
        lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
        return "refused", lines[-1] if lines else type(e).__name__
    except Exception as e:  # anything else is a bug of tilecc
        return "BROKEN", f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e) else ''}"


NATIVE = {"CUDA": ("cuda", "sm_90"), "HIP": ("hip", "gfx90a")}


def _kernel(name: str, target: str = "cuda"):
    return HIP_KERNELS.get(name, globals()[f"k_{name}"]) if target == "hip" else \
        globals()[f"k_{name}"]


def check(names: list[str]) -> dict[str, dict[str, tuple[str, str]]]:
    """Each name's cells: the interpreter's run, then per target one compiler run for all
    the kernels that transpile (a compiler's start and the device header cost more than
    these small kernels); only where that run fails is each compiled on its own, through
    `kernel.compile`, to find which."""
    from tilecc.testing.batch import failures

    cells: dict[str, dict[str, tuple[str, str]]] = {}
    for name in names:
        kernel, grid = _kernel(name), GRIDS.get(name, (1,))
        cells[name] = {"interpreter": _outcome(lambda: kernel.interpret[grid](*_arrays()))}
    for path, (target, arch) in NATIVE.items():
        texts: dict[str, str] = {}
        for name in names:
            kernel = _kernel(name, target)
            cells[name][path] = _outcome(lambda: texts.__setitem__(name, kernel.source(
                SIGNATURE, target=target, arch=arch, line_directives=True)))
        for name in failures(texts, target, arch):
            kernel = _kernel(name, target)
            cells[name][path] = _outcome(lambda: kernel.compile(SIGNATURE, target=target,
                                                                arch=arch))
    return cells


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    paths = ["interpreter", "CUDA", "HIP"]
    totals = {p: 0 for p in paths}
    rows, reasons, broken = [], {}, 0
    cells = check([n for names in SECTIONS.values() for n in names])
    for section, names in SECTIONS.items():
        for name in names:
            result = cells[name]
            for p in paths:
                totals[p] += result[p][0] == "yes"
                broken += result[p][0] == "BROKEN"
            why = next((r for s, r in result.values() if s != "yes"), "")
            if why:
                reasons[name] = why
            rows.append((section, name, *(result[p][0] for p in paths)))
    count = len(rows)
    if args.markdown:
        print("| section | name | interpreter | CUDA | HIP |\n|---|---|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row[:2]) + " | " + " | ".join(row[2:]) + " |")
    else:
        width = max(len(r[1]) for r in rows)
        print(f"{'section':<20} {'name':<{width}}  interpreter  CUDA     HIP")
        for section, name, *cells in rows:
            print(f"{section:<20} {name:<{width}}  {cells[0]:<11}  {cells[1]:<7}  {cells[2]}")
    print()
    for name, why in reasons.items():
        print(f"{name}: {why}")
    print("\n" + ", ".join(f"{p}: {totals[p]}/{count}" for p in paths)
          + f" documented names supported; {broken} BROKEN")
    print(_libdevice_summary())
    return 1 if broken else 0


def _libdevice_summary() -> str:
    """The libdevice functions (Triton 3.6's extra.cuda.libdevice, plus extra.hip's), from
    the table every path reads: each is compiled and checked in tests/test_libdevice.py."""
    from tilecc.language.extra.libdevice_table import TABLE

    on_hip = sum(all(s.hip is not None for s in f.signatures) for f in TABLE.values())
    in_interpreter = sum(f.numpy is not None for f in TABLE.values())
    return (f"libdevice: {len(TABLE)} functions; interpreter {in_interpreter}, CUDA "
            f"{len(TABLE)}, HIP {on_hip} (the rest refused on HIP for every or some dtypes: "
            f"AMD has no instruction that rounds the same way)")


if __name__ == "__main__":
    sys.exit(main())
