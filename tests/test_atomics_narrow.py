"""The 16-bit atomics Triton allows: atomic_add on fp16 / bf16 (the hardware's atom.add where
it has one, else a compare-and-swap loop on the enclosing 32-bit word) and atomic_cas on
int16 / uint16 / fp16 / bf16; Triton's refusals of the others; native compiles, the
interpreter against NumPy, and GPU cases under contention."""

from __future__ import annotations

import itertools
import linecache

import ml_dtypes
import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.errors import CompilationError
from tilecc.language import dtypes as D
from tilecc.testing import batch

try:
    import kernels_atomics as KA
    from conftest_compilers import (assert_compiles_together, compile_cleanly_together,
                                    require_cuda_compiler, require_hip_compiler)
except ImportError:  # tests/ imported as a package
    from tests import kernels_atomics as KA
    from tests.conftest_compilers import (assert_compiles_together, compile_cleanly_together,
                                          require_cuda_compiler, require_hip_compiler)

BF16 = np.dtype(ml_dtypes.bfloat16)
NARROW = {"add": {"fp16": np.float16, "bf16": BF16},
          "cas": {"i16": np.int16, "u16": np.uint16, "fp16": np.float16, "bf16": BF16}}
CASES = [(op, name) for op, names in NARROW.items() for name in names]


def _signature(name: str, S: int, op: str) -> str:
    return f"*{name},*{name},*{name},*{name},{S},{S},{KA.OP_CODE[op]}"


@pytest.mark.parametrize("op,name", CASES)
def test_interpreter_matches_numpy(op, name) -> None:
    S = 16
    dtype = np.dtype(NARROW[op][name])
    if dtype.kind == "u":  # rmw_args marks unwritten cells with -7: wrap it
        args = [a.astype(dtype) for a in KA.rmw_args(op, S, np.int16)]
    else:
        args = KA.rmw_args(op, S, dtype)
    want = KA.rmw_reference(op, [a.copy() for a in args])
    KA.replicated_rmw_kernel.interpret[(1,)](*args, S=S, C=S, OP=KA.OP_CODE[op])
    for got, ref in zip((args[0], args[2], args[3]), want):
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90"), ("hip", "gfx90a")])
@pytest.mark.parametrize("op,name", CASES)
def test_narrow_atomics_compile(op, name, target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    cases = [(KA.replicated_rmw_kernel, _signature(n, 16, o), dict(num_warps=4)) for o, n in CASES]
    if not compile_cleanly_together("narrow atomics", target, arch, lambda: cases, spills_ok=True):
        binary = KA.replicated_rmw_kernel.compile(_signature(name, 16, op), target=target,
                                                  arch=arch, num_warps=4)
        assert binary.data and "warning" not in (binary.log or "").lower(), binary.log


def test_generated_code_calls_the_header_atomics() -> None:
    src = KA.replicated_rmw_kernel.source(_signature("fp16", 16, "add"))
    assert "tc::atomic_add(P + " in src
    src = KA.replicated_rmw_kernel.source(_signature("bf16", 16, "cas"))
    assert "tc::atomic_cas(P + " in src


@tilecc.jit
def contended_add_kernel(P, n, BLOCK: tl.constexpr):
    """Every program adds 1 to each of the n 16-bit counters, whose neighbours in one
    32-bit word other programs update at the same time."""
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(P + offs, tl.full((BLOCK,), 1, P.dtype.element_ty), mask=offs < n)


@tilecc.jit
def contended_cas_kernel(P, OUT, n, BLOCK: tl.constexpr):
    """Program i swaps each of the BLOCK counters from i to i + 1 where it holds i: the
    programs take turns on each counter, spinning until it is theirs (atomic_cas has no
    mask: every lane's address is inside P)."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mine = tl.full((BLOCK,), 0, P.dtype.element_ty) + pid
    done = offs < 0
    while tl.sum((~done).to(tl.int32), axis=0) > 0:
        old = tl.atomic_cas(P + offs, mine, mine + 1)
        done = done | (old == mine)
    tl.store(OUT + pid, pid)


def _kernel(body: str):
    code = ("import tilecc\nimport tilecc.language as tl\n"
            "@tilecc.jit\n"
            "def k(P, V):\n"
            f"    {body}\n")
    name = f"<atomic-test-{abs(hash(body))}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    ns: dict = {}
    exec(compile(code, name, "exec"), ns)
    return ns["k"]


@pytest.mark.parametrize("body,signature,message", [
    ("tl.atomic_max(P, tl.load(V))", "*fp16,*fp16", "does not support {tl}.float16"),
    ("tl.atomic_xchg(P, tl.load(V))", "*bf16,*bf16", "does not support {tl}.bfloat16"),
    ("tl.atomic_add(P, tl.load(V))", "*i16,*i16", "does not support {tl}.int16"),
    ("tl.atomic_add(P, tl.load(V))", "*i8,*i8", "does not support {tl}.int8"),
    ("tl.atomic_cas(P, tl.load(V), tl.load(V))", "*u8,*u8", "does not support {tl}.uint8"),
    ("tl.atomic_add(P, tl.load(V), sem='seq_cst')", "*fp32,*fp32", "sem must be one of"),
    ("tl.atomic_add(P, tl.load(V), scope='block')", "*fp32,*fp32", "scope one of"),
])
def test_atomics_triton_refuses_are_errors(body, signature, message) -> None:
    with pytest.raises(CompilationError) as e:
        _kernel(body).source(signature)
    # dtypes as their repr names them: tilecc.language.int8, or triton.language.int8 where
    # `import triton` resolves to tilecc in this process
    assert message.format(tl=D.REPR_MODULE[0]) in str(e.value), str(e.value)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_contended_16bit_add_on_gpu(dtype) -> None:
    torch = pytest.importorskip("torch")
    p = torch.zeros(37, device="cuda", dtype=getattr(torch, dtype))
    contended_add_kernel[(200,)](p, 37, BLOCK=64)
    assert torch.equal(p.float(), torch.full((37,), 200.0, device="cuda"))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["int16", "float16", "bfloat16"])
def test_contended_16bit_cas_on_gpu(dtype) -> None:
    torch = pytest.importorskip("torch")
    programs = 32  # fewer than the SMs: every program is resident while others spin
    p = torch.zeros(64, device="cuda", dtype=getattr(torch, dtype))
    out = torch.full((programs,), -1, device="cuda", dtype=torch.int32)
    contended_cas_kernel[(programs,)](p, out, 64, BLOCK=64)
    assert torch.equal(p.float(), torch.full((64,), float(programs), device="cuda"))
    assert torch.equal(out.cpu(), torch.arange(programs, dtype=torch.int32))


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90"), ("hip", "gfx90a")])
def test_contended_kernels_compile(target, arch) -> None:
    assert_compiles_together(target, arch, [
        *[(contended_add_kernel, f"*{dt},i32,64", {}) for dt in ("fp16", "bf16")],
        *[(contended_cas_kernel, f"*{dt},*i32,i32,64", {}) for dt in ("i16", "fp16", "bf16")]])


@tilecc.jit
def scoped_rmw_kernel(P, X, OLD, OP: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr,
                      BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    if OP == 0:
        old = tl.atomic_add(P + offs, x, sem=SEM, scope=SCOPE)
    elif OP == 1:
        old = tl.atomic_max(P + offs, x, sem=SEM, scope=SCOPE)
    elif OP == 2:
        old = tl.atomic_min(P + offs, x, sem=SEM, scope=SCOPE)
    elif OP == 3:
        old = tl.atomic_xchg(P + offs, x, sem=SEM, scope=SCOPE)
    elif OP == 4:
        old = tl.atomic_cas(P + offs, x, x, sem=SEM, scope=SCOPE)
    elif OP == 5:
        old = tl.atomic_and(P + offs, x, sem=SEM, scope=SCOPE)
    elif OP == 6:
        old = tl.atomic_or(P + offs, x, sem=SEM, scope=SCOPE)
    else:
        old = tl.atomic_xor(P + offs, x, sem=SEM, scope=SCOPE)
    tl.store(OLD + offs, old)


SCOPED = {"add": ("i32", "u32", "i64", "u64", "fp16", "bf16", "fp32", "fp64"),
          "max": ("i32", "u32", "i64", "u64", "fp32", "fp64"),
          "min": ("i32", "u32", "i64", "u64", "fp32", "fp64"),
          "xchg": ("i32", "u32", "i64", "u64", "fp32", "fp64"),
          "cas": ("i16", "u16", "i32", "u32", "i64", "u64", "fp16", "bf16", "fp32", "fp64"),
          "and": ("i32", "u32", "i64", "u64"), "or": ("i32", "u32", "i64", "u64"),
          "xor": ("i32", "u32", "i64", "u64")}


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90"), ("hip", "gfx90a")])
def test_every_atomic_compiles_at_every_scope(target, arch) -> None:
    """Every tl.atomic_* on every dtype Triton allows, each scope and each order taken in
    turn (3 scopes against 4 orders: every op meets every scope and every order, and the
    pairs vary), one compile per op and dtype."""
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    sems = itertools.cycle(["relaxed", "acquire", "release", "acq_rel"])
    scopes = itertools.cycle(["cta", "gpu", "sys"])
    sources = {}
    for op, dtypes in SCOPED.items():
        for dt in dtypes:
            sig = f"*{dt},*{dt},*{dt},{KA.OP_CODE[op]},'{next(sems)}','{next(scopes)}',32"
            sources[sig] = scoped_rmw_kernel.source(sig, target=target, arch=arch)
    try:  # one compiler run for all of them
        binary = batch.compile_batch(list(sources.values()), target, arch)
    except Exception:
        assert not batch.failures(sources, target, arch)  # names the specializations
        raise
    assert binary.data and "warning" not in (binary.log or "").lower(), binary.log


def test_cta_scope_takes_block_scoped_atomics_and_fences() -> None:
    src = scoped_rmw_kernel.source("*fp32,*fp32,*fp32,0,'acq_rel','cta',32")
    assert "tc::atomic_add<tc::kCta>(" in src and "tc::fence_before<tc::kCta>(true)" in src
    src = scoped_rmw_kernel.source("*fp32,*fp32,*fp32,0,'relaxed','gpu',32")
    assert "tc::atomic_add(" in src and "tc::fence_before(false)" in src


@pytest.mark.parametrize("dtype", [np.int16, np.float16, BF16])
def test_contended_cas_kernel_on_the_interpreter(dtype) -> None:
    p = np.zeros(64, dtype)
    out = np.full(8, -1, np.int32)
    contended_cas_kernel.interpret[(8,)](p, out, 64, BLOCK=64)
    np.testing.assert_array_equal(p.astype(np.float32), np.full(64, 8.0, np.float32))
    np.testing.assert_array_equal(out, np.arange(8))
