"""Layout assignment and memory-access planning.

A program is one thread block of `num_warps × warp_size` threads.  Every block value gets
a *blocked* layout: each thread holds `vec` consecutive elements, the threads of the
block cover `vec × threads` consecutive elements, and that pattern repeats to cover the
block — so a thread holds `regs` elements in a register array.  `vec` is the widest
16-byte vector any memory access on blocks of that size can use.  When a block is
smaller than the thread count, threads hold copies and only the owners store.

Each load and store then gets a `MemoryPlan`: its vector width (from the pointers'
contiguity and alignment) and how its mask is checked (once per vector, per vector
with a lane-by-lane tail, or per element), with the reason written for the header.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.transpiler.ir import Kernel, Op, Value
from tilecc.transpiler.passes.axis_info import info


@dataclass(frozen=True)
class Blocked1D:
    block: int
    vec: int
    threads: int

    @property
    def regs(self) -> int:
        return max(self.vec, self.block // self.threads)

    @property
    def replicated(self) -> bool:
        """More threads than elements: threads t >= block hold copies."""
        return self.block < self.threads

    def index(self, thread: int, reg: int) -> int:
        """Element held by `thread` in register slot `reg` (mirrors the device header)."""
        if self.replicated:
            return (thread * self.vec + reg) % self.block
        return (reg // self.vec) * (self.vec * self.threads) + thread * self.vec + reg % self.vec

    def describe(self) -> str:
        if self.replicated:
            return (f"{self.block} elements over {self.threads} threads: thread t holds element "
                    f"t % {self.block} (threads >= {self.block} hold copies and do not store)")
        reps = self.regs // self.vec
        where = f"t*{self.vec}" + (f" + {self.vec * self.threads}*k, k < {reps}" if reps > 1 else "")
        return (f"{self.block} elements; thread t holds {self.vec} consecutive element"
                f"{'s' if self.vec > 1 else ''} at {where} ({self.regs} registers)")


@dataclass(frozen=True)
class MemoryPlan:
    vec: int  # elements per vector access
    mask_mode: str  # "none", "vector", "prefix" (vector when whole, else lanes), "element"
    reason: str


def assign(kernel: Kernel, warp_size: int) -> dict[int, Blocked1D]:
    """Set `Value.layout` on block values and `op.attrs['plan']` on loads and stores.

    Returns the layouts by block size."""
    threads = kernel.num_warps * warp_size
    widest: dict[int, int] = {}
    for op in kernel.walk():
        if op.kind in ("load", "store") and op.operands[0].type.is_block:
            n = op.operands[0].type.shape[0]
            esize = op.operands[0].dtype.element_ty.itemsize
            widest[n] = max(widest.get(n, 1), 16 // esize)
    sizes = {v.type.shape[0] for op in kernel.walk() for v in op.results + op.operands
             if v.type.is_block}
    sizes |= {a.type.shape[0] for op in kernel.walk() for r in op.regions for a in r.args
              if a.type.is_block}
    layouts = {}
    for n in sorted(sizes):
        vec = min(widest.get(n, 1), max(1, n // threads))
        layouts[n] = Blocked1D(n, vec, threads)
    for op in kernel.walk():
        for v in op.results + [a for r in op.regions for a in r.args]:
            if v.type.is_block:
                v.layout = layouts[v.type.shape[0]]
        if op.kind in ("load", "store"):
            op.attrs["plan"] = _plan(op)
    return layouts


def _pow2_floor(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def _plan(op: Op) -> MemoryPlan:
    ptr = op.operands[0]
    mask = _mask_of(op)
    if not ptr.type.is_block:
        return MemoryPlan(1, "none" if mask is None else "element", "scalar access")
    layout = ptr.layout
    esize = ptr.dtype.element_ty.itemsize
    pinfo = info(ptr)
    align_elems = max(1, pinfo.divisibility // esize) if pinfo.divisibility >= esize else 1
    vec = _pow2_floor(min(layout.vec, pinfo.contiguity, align_elems, 16 // esize))
    why = (f"{vec} x {ptr.dtype.element_ty.name}" + (f" ({vec * esize} B)" if vec > 1 else "")
           + f"; pointers contiguous over {min(pinfo.contiguity, layout.block)}, "
           f"aligned to {pinfo.divisibility if pinfo.divisibility < 1 << 20 else 'any'} B")
    if mask is None:
        return MemoryPlan(vec, "none", why + "; no mask")
    minfo = info(mask)
    if vec == 1:
        return MemoryPlan(1, "element", why + "; mask checked per element")
    if minfo.constancy >= vec:
        return MemoryPlan(vec, "vector", why + f"; mask uniform over {minfo.constancy} "
                                             "elements, checked once per vector")
    if _is_prefix_mask(mask, vec):
        return MemoryPlan(vec, "prefix", why + "; mask is a bound on contiguous offsets: "
                                             "whole vectors in bounds take the vector path, "
                                             "the tail goes lane by lane")
    return MemoryPlan(1, "element", why.replace(f"{vec} x", "1 x", 1)
                      + "; mask varies within vectors, checked per element")


def _mask_of(op: Op) -> Value | None:
    if op.kind == "load":
        return op.operands[1] if len(op.operands) > 1 else None
    return op.operands[2] if len(op.operands) > 2 else None


def _is_prefix_mask(mask: Value, vec: int) -> bool:
    """mask = offs < n (or n > offs, <=, >=) with offs increasing and n uniform per vector:
    within a vector the mask is true on a prefix, so its last lane decides the whole."""
    op = mask.owner
    if op is None or op.kind != "cmp":
        return False
    a, c = (info(v) for v in op.operands)
    pred = op.attrs["pred"]
    if pred in ("lt", "le"):
        return a.contiguity >= vec and c.constancy >= vec
    if pred in ("gt", "ge"):
        return c.contiguity >= vec and a.constancy >= vec
    return False
