"""How the renderer writes each value: as an expression at its uses (inlined), or as a
variable, and which variables loop-carried values reuse.

A function of the IR alone, computed by the renderer for its own use and by the passes
that settle what depends on it (`passes.settle`: a pipeline can only move ops the renderer
writes as expressions), so both see the same answer.
"""

from __future__ import annotations

import math

from tilecc.transpiler import ir
from tilecc.transpiler.ir import Kernel, Op, Region, Value
from tilecc.transpiler.matrix_units import MatrixUnit
from tilecc.transpiler.passes.dce import PURE
from tilecc.transpiler.passes.dot import accumulator
from tilecc.transpiler.passes.placement import Blocked

ALWAYS_INLINE = {"const", "splat", "arange", "expand_dims", "broadcast"}
INDEX_COST, INDEX_REPEATS = 32, 8  # the size of index values recomputed at each use (below)


def in_accumulator_layout(v: Value, units: tuple[MatrixUnit, ...]) -> bool:
    """Held as the accumulator of one of the target's matrix units."""
    enc = v.layout.enc if v.layout is not None else None
    return isinstance(enc, Blocked) and any(
        enc == accumulator(u, enc.wpc) for u in units)


def pairs_cast(op: Op) -> bool:
    """A block cast from fp32 to fp16 or bf16, converted two elements at a time (the
    accumulators of tensor-core products must be: see tc::cast_pair)."""
    if op.kind != "cast" or op.attrs.get("bitcast") or op.attrs.get("rounding") or \
            not op.result.type.is_block:
        return False
    return (op.operands[0].dtype.short == "fp32" and op.result.dtype.short in ("fp16", "bf16")
            and op.result.layout is not None and op.result.layout.regs % 2 == 0)


def _sixteen_bit_pairs(op: Op) -> bool:
    """A block op of fp16 or bf16 values only, an even number of registers a thread."""
    return (op.result.type.is_block and op.result.dtype.short in ("fp16", "bf16")
            and all(x.dtype == op.result.dtype for x in op.operands)
            and op.result.layout is not None and op.result.layout.regs % 2 == 0)


def pairs_product(op: Op) -> bool:
    """A block product of fp16 or bf16 values, two elements per instruction
    (tc::mul_pair)."""
    return op.kind == "binary" and op.attrs == {"fn": "mul"} and _sixteen_bit_pairs(op)


def pairs_sum(op: Op) -> bool:
    """A block sum or difference of fp16 or bf16 values, two elements per instruction
    (tc::add_pair, tc::sub_pair)."""
    return op.kind == "binary" and op.attrs.get("fn") in ("add", "sub") and \
        len(op.attrs) == 1 and _sixteen_bit_pairs(op)


def pairs_fma(op: Op) -> bool:
    """A block fused multiply-add of fp16 or bf16 values (passes.contract), two elements
    per instruction (tc::fma_pair)."""
    return op.kind == "fma" and _sixteen_bit_pairs(op)


def in_pairs(op: Op) -> bool:
    """An op rendered two registers at a time, alone (`pairs_cast`, `pairs_product`,
    `pairs_sum`, `pairs_fma`)."""
    return pairs_cast(op) or pairs_product(op) or pairs_sum(op) or pairs_fma(op)


class Emission:
    """`inline`: ids of values written as expressions where they are read; `alias`: loop-
    carried slot → the value whose variable it reuses; `mutable`: values whose variable
    is assigned more than once; `recomputed`: named index values recomputed at each use;
    `held`: blocks of pointers a loop reads plus its carried offset
    (passes.carried_offsets), kept in registers from before the loop, as the loop-carried
    blocks they replace were, not recomputed in each iteration (`pinned_step`: which of
    their registers are pinned there)."""

    def __init__(self, kernel: Kernel, units: tuple[MatrixUnit, ...]):
        self.k, self.units = kernel, units
        self.uses = ir.uses(kernel)
        self.held = {op.operands[0].id for op in kernel.walk()
                     if op.kind == "addptr" and op.attrs.get("carried_offset")}
        self.inline: set[int] = set()
        self.mutable: set[int] = set()
        self.alias: dict[int, int] = {}
        self.paired = self._written_in_pairs()
        self._plan(kernel.body)
        self.recomputed = self._index_values()

    def pinned_step(self, v: Value) -> int | None:
        """For a held block that a pipeline's cp.async copies read: the step between the
        registers they read (the gcd of their vectors), which the renderer pins where the
        block is computed; None for others.  Left to itself ptxas rebuilt such a block at
        each use from one of its pointers (they lie a stride apart), a chain of dependent
        64-bit multiply-adds each copy waited on, its registers reused while the copies
        before still read them (Triton's matmul tutorial at 128 x 128 x 64 on an H200:
        0.78x Triton's speed with the chain, level without).  Not for blocks read element
        by element: every register pinned, the block's pointers outgrow the registers."""
        if v.id not in self.held:
            return None
        readers = {o.result.id for o in self.k.walk() if o.kind == "addptr" and
                   o.attrs.get("carried_offset") and o.operands[0] is v}
        copies = [ld for o in self.k.walk() if "pipeline" in o.attrs
                  for ld, tma in zip(o.attrs["pipeline"].loads, o.attrs["pipeline"].tma)
                  if tma is None and ld.operands[0].id in readers]
        return math.gcd(*(ld.attrs["plan"].vec for ld in copies)) if copies else None

    def _plan(self, region: Region) -> None:
        use_region: dict[int, bool] = {}
        for op in region.ops:
            for v in op.operands:
                use_region[v.id] = True
        yielded_here = {v.id for v in region.yields}
        for op in region.ops:
            for r in op.regions:
                self._plan(r)
            if op.kind in PURE and op.results and op.result.id not in self.held:
                v = op.result
                n_uses = self.uses.get(v.id, 0)
                single_local = n_uses == 1 and (v.id in use_region or v.id in yielded_here)
                if op.kind in ALWAYS_INLINE or (op.kind in ("program_id", "num_programs")
                                               and v.name is None):
                    self.inline.add(v.id)
                elif single_local and (v.name is None or v.id in yielded_here) and not (
                        pairs_cast(op) and in_accumulator_layout(op.operands[0], self.units)
                ) and v.id not in self.paired:
                    self.inline.add(v.id)
            if op.kind in ("for", "while"):
                inits = op.operands[3:] if op.kind == "for" else op.operands
                slots = op.results
                for init, slot in zip(inits, slots):
                    reusable = (self.uses.get(init.id, 0) == 1 and init.id not in self.inline
                                and init.owner is not None and init.owner in region.ops)
                    if reusable:
                        self.alias[slot.id] = self.root(init)
                    self.mutable.add(self.root(slot))
                    for r in op.regions:
                        args = r.args[1:] if op.kind == "for" else r.args
                        self.alias[args[slots.index(slot)].id] = self.root(slot)
            if op.kind == "if":
                for res in op.results:
                    self.mutable.add(res.id)
            if op.kind == "dot":  # accumulate in place when nothing else reads the old value
                acc = op.operands[2]
                if self.uses.get(acc.id, 0) == 1 and acc.id not in self.inline and \
                        acc.layout == op.result.layout:
                    self.alias[op.result.id] = self.root(acc)

    def _written_in_pairs(self) -> set[int]:
        """16-bit products, sums and fused multiply-adds: statements two elements at a time.
        Written into their reader instead, one element at a time, each product is a float
        product and a conversion, each fma one instruction per element (a rotary embedding
        ran 270 SASS instructions, Triton's 107).  A conversion from fp32 one of them reads
        once stays in it, converted two at a time there (`render._paired_statements`)."""
        return {op.result.id for op in self.k.walk() if in_pairs(op) and not pairs_cast(op)}

    def _index_values(self) -> set[int]:
        """Block values built only from `tl.arange`, constants and unchanging scalars (offsets,
        masks): recomputed at each use instead of kept in registers, as Triton does — they
        cost a few integer operations and save a register array each."""
        found: set[int] = set()
        # An index value is written out whole at each use, and an operand read twice by it
        # twice: a chain of such steps (Philox's rounds on offsets) doubles at each one.
        # `written`: the operations its expression holds written out; `distinct`: the
        # values among them. Past INDEX_COST operations, or INDEX_REPEATS operations written
        # more than once, it is a variable (the limits sit above what kernels' addresses
        # and masks take: attention's offsets hold 19 operations).
        written: dict[int, int] = {}
        distinct: dict[int, frozenset[int]] = {}
        carried_in = set(self.alias.values())  # variables loop-carried slots live in
        for op in self.k.walk():
            if op.kind not in PURE or not op.results or not op.result.type.is_block or \
                    op.result.id in carried_in or op.result.id in self.held or \
                    op.attrs.get("fn") == "umulhi":
                continue  # tl.umulhi hashes (Philox's rounds), it computes no addresses
            ok = all((v.id in found or (v.id in self.inline and v.owner is not None and
                                        v.owner.kind in ("const", "arange")))
                     if v.type.is_block else self.root(v) not in self.mutable
                     for v in op.operands)
            size = 1 + sum(written.get(v.id, 0) for v in op.operands)
            values = frozenset({op.result.id}).union(
                *(distinct.get(v.id, ()) for v in op.operands))
            if (ok and size <= INDEX_COST and size - len(values) <= INDEX_REPEATS) or \
                    op.kind == "arange":
                found.add(op.result.id)
                written[op.result.id], distinct[op.result.id] = size, values
                self.inline.add(op.result.id)
        return {op.result.id for op in self.k.walk() if op.results and op.result.id in found
                and op.result.name and op.kind not in ("splat", "const")}

    def root(self, v: Value) -> int:
        """The value whose C variable `v` lives in (loop-carried slots reuse variables)."""
        vid = v.id
        while vid in self.alias:
            vid = self.alias[vid]
        return vid
