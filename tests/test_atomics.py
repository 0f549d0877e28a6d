"""Atomics on blocks whose elements are held by several threads or registers, without a GPU:
the owner of each element (layouts), the generated source (one atomic per element, the
result handed to every copy), NVRTC / hiprtc compiles, and the interpreter against NumPy,
including Triton's order for float max / min.  The same kernels run on the GPU in
tests/test_gpu.py."""

from __future__ import annotations

import re
from itertools import product

import numpy as np
import pytest

from tilecc.transpiler.passes.layouts import Blocked, Placement, Slice, default_blocked

try:
    import kernels_atomics as KA
    from conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                    require_hip_compiler)
except ImportError:  # tests/ imported as a package
    from tests import kernels_atomics as KA
    from tests.conftest_compilers import (compile_cleanly_together, require_cuda_compiler,
                                          require_hip_compiler)

DTYPES = {"i32": np.int32, "fp32": np.float32, "fp64": np.float64}


def _op_dtypes():
    for op in KA.OPS:
        for name in DTYPES:
            if op in KA.BITWISE and name != "i32":
                continue
            yield op, name


def _signature(name: str, S: int, op: str, C: int | None = None) -> str:
    return f"*{name},*{name},*{name},*{name},{S},{S if C is None else C},{KA.OP_CODE[op]}"


# --- layouts: exactly one owning copy per element ------------------------------------------

def _eval_owner(expr: str, lane: int, warp: int) -> bool:
    text = expr.replace("tc::lane_id()", str(lane)).replace("tc::warp_id()", str(warp))
    text = text.replace("&&", " and ").replace("/", "//").replace("true", "True")
    return bool(eval(text))  # only integers and operators: the layout's own expression


def _placements():
    for shape, vec, warps, ws in [((4, 1), 1, 4, 32), ((16, 1), 1, 1, 32), ((1, 1), 1, 4, 32),
                                  ((16, 16), 4, 1, 32), ((4, 4), 4, 2, 32), ((64,), 1, 4, 32),
                                  ((8, 64), 4, 4, 64), ((2, 8), 8, 1, 32)]:
        enc = default_blocked(shape, vec, warps, ws)
        yield Placement(enc, shape), warps, ws
        if len(shape) == 2:
            for dim in (0, 1):  # what a reduction along dim leaves
                yield Placement(Slice(enc, dim), shape[:dim] + shape[dim + 1:]), warps, ws
                # and that slice expanded back to a size-1 axis (x[:, None])
                yield Placement(enc, shape[:dim] + (1,) + shape[dim + 1:]), warps, ws
    # an S x 1 block in the layout of an S x S block stored in 4-element vectors: each
    # thread holds its row 4 times (the copies are registers)
    yield Placement(Blocked((1, 4), (8, 4), (1, 1), (1, 0)), (16, 1)), 1, 32


@pytest.mark.parametrize("p,warps,ws", list(_placements()),
                         ids=lambda x: str(x) if not isinstance(x, Placement) else
                         f"{x.shape}-{type(x.enc).__name__}")
def test_each_element_has_one_owning_copy(p: Placement, warps: int, ws: int) -> None:
    owners: dict[tuple, list] = {}
    for t, r in product(range(warps * ws), range(p.regs)):
        lane, warp = t % ws, t // ws
        owns = p.owns(t, r, ws)
        # the C forms agree with the definition: the thread's owner() and the register mask
        assert owns == (_eval_owner(p.owner_expr(), lane, warp)
                        and (r & p.reg_owner_mask) == r), (t, r)
        if owns:
            owners.setdefault(p.coords(t, r, ws), []).append((t, r))
    assert sorted(owners) == sorted(np.ndindex(*p.shape)) if p.shape else [()]
    assert all(len(v) == 1 for v in owners.values()), owners
    # every copy finds its owner where the broadcast looks: register r & reg_owner_mask of
    # lane & lane_owner_mask (in its own warp when no copy is in another warp)
    for t, r in product(range(warps * ws), range(p.regs)):
        (ot, orr), = owners[p.coords(t, r, ws)]
        assert orr == r & p.reg_owner_mask
        if not p.replicated_warps:
            assert ot == (t // ws) * ws + ((t % ws) & p.lane_owner_mask)
    copies = warps * ws * p.regs // max(1, int(np.prod(p.shape)))
    assert p.replicated == (copies > 1)


# --- the generated source -------------------------------------------------------------------

def _atomic_statements(src: str) -> list[tuple[str, int]]:
    """The statements that call an atomic, each joined on one line (long lines are
    wrapped), with where each starts in `src`."""
    found, statement, start, offset = [], [], 0, 0
    for ln in src.splitlines(keepends=True):
        here, offset = offset, offset + len(ln)
        ln = ln.rstrip("\n")
        if ln.lstrip().startswith(("//", "#")):
            continue
        if not statement:
            start = here
        statement.append(ln.strip() if statement else ln)
        if ln.rstrip().endswith((";", "{", "}")):
            joined = " ".join(statement)
            if "tc::atomic_" in joined:
                found.append((joined, start))
            statement = []
    return found


def _atomic_lines(src: str) -> list[str]:
    return [joined for joined, _ in _atomic_statements(src)]


@pytest.mark.parametrize("S,C,num_warps,how", [
    (1, 1, 1, "lanes"), (4, 4, 1, "lanes"), (16, 16, 1, "lanes, registers"),
    (64, 64, 1, "lanes, registers"), (1, 1, 4, "warps"), (4, 4, 4, "warps"),
    (16, 16, 4, "lanes, registers"), (64, 64, 4, "lanes, registers"),
    (32, 4, 1, "registers"), (128, 4, 4, "registers"),
])
def test_only_owners_perform_the_atomic_and_copies_take_its_result(S, C, num_warps, how):
    src = KA.replicated_rmw_kernel.source(_signature("i32", S, "add", C), target="cuda",
                                          num_warps=num_warps)
    ((line, start),) = _atomic_statements(src)
    after = src[start:]
    if "registers" in how:  # one thread holds a row several times: one register updates
        assert re.search(r"\(r & \d+\) == r\)", line), line
    if how != "registers":  # several threads hold it: one of them updates it
        assert "::owner()" in line, line
    if how == "warps":
        assert "through shared memory" in after and "__syncthreads();" in after
    elif "lanes" in how:
        assert re.search(r"old\[r\] = tc::shfl\(old\[r( & \d+)?\], tc::lane_id\(\) & \d+\)",
                         after)
    else:  # copies in registers of one thread only
        assert re.search(r"old\[r\] = old\[r & \d+\];", after)


def test_unreplicated_atomic_keeps_its_code() -> None:
    """A 1-D block spread one element per thread: no guard, no broadcast, no barrier."""
    src = KA.float_extreme_kernel.source("*fp32,*fp32,*fp32,i32,1,128", target="cuda",
                                         num_warps=4)
    body = src[src.index('extern "C"'):]
    assert "owner()" not in body and "__syncthreads" not in body and "shfl" not in body


def test_slice_layout_atomic_broadcasts() -> None:
    src = KA.reduce_then_atomic_kernel.source("*fp32,*fp32,*fp32,16", target="cuda",
                                              num_warps=4)
    ((line, start),) = _atomic_statements(src)
    assert "owner()" in line
    assert "copies of an element" in src[start:]


def test_atomics_in_loops_and_branches_wait_before_reusing_shared_memory() -> None:
    src = KA.loop_atomic_kernel.source("*i32,*i32,i32,i32,4", target="cuda", num_warps=4)
    starts = [m.end() for m in re.finditer(r"for \(int \w+ = 0; \w+ < T;|if \(flag > 0\)", src)]
    assert len(starts) == 2
    for start in starts:  # the loop's and the branch's broadcasts
        body = src[start:]
        step = body.index("int* result")
        assert "__syncthreads();  // the buffer may still be read" in body[:step]


# --- compiles -------------------------------------------------------------------------------

def _compile(kernel, signature, target, **options) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    arch = "sm_80" if target == "cuda" else "gfx90a"
    binary = kernel.compile(signature, target=target, arch=arch, **options)
    assert binary.data
    assert "warning" not in (binary.log or "").lower(), binary.log


def _every_op_and_dtype(op, dtype):
    return [(KA.replicated_rmw_kernel, _signature(dtype, 16, op), dict(num_warps=4))]


def _every_shape(S, num_warps):
    return [(KA.replicated_rmw_kernel, _signature("fp64", S, "cas"), dict(num_warps=num_warps)),
            (KA.issue_add_kernel, f"*i32,*i32,{S}", dict(num_warps=num_warps))]


def _slice_loop_and_float_order():
    return [(KA.reduce_then_atomic_kernel, "*fp64,*fp64,*fp64,16", dict(num_warps=4)),
            (KA.loop_atomic_kernel, "*i32,*i32,i32,i32,16", dict(num_warps=4)),
            (KA.issue_cas_kernel, "*i32,*i32,16", dict(num_warps=4)),
            *[(KA.float_extreme_kernel, f"*{dt},*{dt},*{dt},i32,{largest},16", {})
              for dt, largest in product(("fp32", "fp64"), (1, 0))]]


SHAPES = list(product((1, 4, 16, 64), (1, 4)))


def _compile_cases(target, cases) -> None:
    """`cases` compile without warnings, checked first with all of this file's in one
    compiler run per target (hiprtc's start costs more than a small kernel); each alone
    only if that fails.  Spills are allowed: the largest shapes on one warp are stress
    cases (64 fp64 compare-and-swap loops a thread on sm_80 spill)."""
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    arch = "sm_80" if target == "cuda" else "gfx90a"
    if compile_cleanly_together("atomics", target, arch, lambda: [
            *(c for op, dt in _op_dtypes() for c in _every_op_and_dtype(op, dt)),
            *(c for S, w in SHAPES for c in _every_shape(S, w)),
            *_slice_loop_and_float_order()], spills_ok=True):
        return
    for kernel, signature, options in cases:
        _compile(kernel, signature, target, **options)


@pytest.mark.parametrize("target", ["cuda", "hip"])
@pytest.mark.parametrize("op,dtype", list(_op_dtypes()))
def test_every_op_and_dtype_compiles(op, dtype, target) -> None:
    _compile_cases(target, _every_op_and_dtype(op, dtype))


@pytest.mark.parametrize("target", ["cuda", "hip"])
@pytest.mark.parametrize("S,num_warps", SHAPES)
def test_every_shape_compiles(S, num_warps, target) -> None:
    _compile_cases(target, _every_shape(S, num_warps))


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_slice_loop_and_float_order_kernels_compile(target) -> None:
    _compile_cases(target, _slice_loop_and_float_order())


# --- the interpreter against NumPy ------------------------------------------------------------

@pytest.mark.parametrize("op,dtype", list(_op_dtypes()))
def test_interpreter_matches_numpy(op, dtype) -> None:
    S = 16
    args = KA.rmw_args(op, S, DTYPES[dtype])
    want = KA.rmw_reference(op, [a.copy() for a in args])
    KA.replicated_rmw_kernel.interpret[(1,)](*args, S=S, C=S, OP=KA.OP_CODE[op])
    for got, ref in zip((args[0], args[2], args[3]), want):
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("largest", [True, False], ids=["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interpreter_float_max_min_follow_tritons_order(dtype, largest) -> None:
    mem, val = KA.float_extreme_args(dtype)
    before = mem.copy()
    old = np.zeros_like(mem)
    KA.float_extreme_kernel.interpret[(1,)](mem, val, old, mem.size, LARGEST=largest,
                                            BLOCK=16)
    bits = f"i{mem.itemsize}"
    want = KA.float_extreme_reference(before, val, largest)
    np.testing.assert_array_equal(mem.view(bits), want.view(bits))  # -0.0, NaN signs too
    np.testing.assert_array_equal(old.view(bits), before.view(bits))


def test_interpreter_issue_kernels() -> None:
    S = 16
    p = np.arange(S, dtype=np.int32) * 0
    out = np.full((S, S), -1, np.int32)
    KA.issue_add_kernel.interpret[(1,)](p, out, S=S)
    np.testing.assert_array_equal(p, np.arange(S))
    want = np.full((S, S), -1, np.int32)
    want[0, :] = 1  # every old value is 0
    np.testing.assert_array_equal(out, want)


def test_system_scope_uses_system_atomics_and_fences() -> None:
    """scope="sys" reaches the host and peer devices: the _system atomics and fences
    (device-wide ones would not order those accesses); other scopes keep device-wide."""
    src = KA.replicated_rmw_kernel.source(_signature("fp64", 16, "max"), target="cuda")
    (line,) = _atomic_lines(src)
    assert "tc::atomic_max<tc::kSystem>(" in line
    assert "tc::fence_before<tc::kSystem>(true);" in src
    assert "tc::fence_after<tc::kSystem>(true);" in src
    src = KA.replicated_rmw_kernel.source(_signature("i32", 16, "or"), target="cuda")
    (line,) = _atomic_lines(src)  # scope="cta": block-scoped atomics and fences
    assert "tc::atomic_or<tc::kCta>(" in line and "kSystem" not in src
    assert "tc::fence_before<tc::kCta>(true);" in src
    src = KA.replicated_rmw_kernel.source(_signature("i32", 16, "add"), target="cuda")
    (line,) = _atomic_lines(src)
    assert "tc::atomic_add(" in line and "kSystem" not in src and "kCta" not in src


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interpreter_float_cas_compares_bits(dtype) -> None:
    mem, cmp = KA.float_cas_args(dtype)
    before = mem.copy()
    old = np.zeros_like(mem)
    KA.float_cas_kernel.interpret[(1,)](mem, cmp, old, BLOCK=mem.size)
    bits = f"u{mem.itemsize}"
    np.testing.assert_array_equal(mem.view(bits), KA.float_cas_reference(before, cmp).view(bits))
    np.testing.assert_array_equal(old.view(bits), before.view(bits))


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_float_cas_kernel_compiles(target) -> None:
    for dt in ("fp32", "fp64"):
        _compile(KA.float_cas_kernel, f"*{dt},*{dt},*{dt},8", target)
