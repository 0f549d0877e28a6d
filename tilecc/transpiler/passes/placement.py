"""Encodings and placements: which thread holds which element of a block, in which register.

* `Blocked(spt, tpw, wpc, order)`: along each axis a thread holds `spt` consecutive
  elements, `tpw` lanes of a warp and `wpc` warps tile the axis, and the tile repeats to
  cover the block; `order` lists axes fastest first.
* `Slice(parent, dim)`: the parent with axis `dim` removed.

An encoding is shape-free; a `Placement` is an encoding applied to a block shape.  These
are the vocabulary the passes (`layouts`, `dot`) and the renderer share; `layouts.assign`
decides which value gets which.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import prod

@dataclass(frozen=True)
class Blocked:
    spt: tuple[int, ...]
    tpw: tuple[int, ...]
    wpc: tuple[int, ...]
    order: tuple[int, ...]  # axes, fastest first


@dataclass(frozen=True)
class Slice:
    parent: "Blocked | Slice"
    dim: int


Encoding = Blocked | Slice


def _stride(sizes: tuple[int, ...], order: tuple[int, ...], axis: int) -> int:
    s = 1
    for a in order:
        if a == axis:
            return s
        s *= sizes[a]
    raise ValueError(axis)


@dataclass(frozen=True)
class Placement:
    enc: Encoding
    shape: tuple[int, ...]

    @cached_property
    def _resolved(self) -> tuple[Blocked, tuple[int, ...], tuple[int, ...]]:
        enc, shape, removed = self.enc, self.shape, []
        while isinstance(enc, Slice):
            removed.append(enc.dim)
            shape = shape[:enc.dim] + (1,) + shape[enc.dim:]
            enc = enc.parent
        kept = list(range(len(shape)))
        for d in reversed(removed):  # innermost slice was applied last
            kept.pop(d)
        # kept[i] = base axis of value axis i; the removal indices are in parent terms
        return enc, shape, tuple(kept)

    @property
    def base(self) -> Blocked:
        return self._resolved[0]

    @property
    def full(self) -> tuple[int, ...]:
        return self._resolved[1]

    @property
    def kept(self) -> tuple[int, ...]:
        return self._resolved[2]

    def tile(self, e: int) -> int:
        b = self.base
        return b.spt[e] * b.tpw[e] * b.wpc[e]

    def regs_along(self, e: int) -> int:
        if e not in self.kept:
            return 1
        return self.base.spt[e] * max(1, self.full[e] // self.tile(e))

    @cached_property
    def reg_sizes(self) -> tuple[int, ...]:
        return tuple(self.regs_along(e) for e in range(len(self.full)))

    @property
    def regs(self) -> int:
        return prod(self.reg_sizes)

    def rstride(self, e: int) -> int:
        return _stride(self.reg_sizes, self.base.order, e)

    def lstride(self, e: int) -> int:
        return _stride(self.base.tpw, self.base.order, e)

    def wstride(self, e: int) -> int:
        return _stride(self.base.wpc, self.base.order, e)

    @property
    def fast_axis(self) -> int | None:
        """The value axis whose consecutive registers hold consecutive elements."""
        for e in self.base.order:
            if e in self.kept:
                return self.kept.index(e)
        return None

    @property
    def vec(self) -> int:
        ax = self.fast_axis
        if ax is None:
            return 1
        e = self.kept[ax]
        return min(self.base.spt[e], self.full[e])

    def unique_lanes(self, e: int) -> int:
        b = self.base
        return min(b.tpw[e], max(1, self.full[e] // b.spt[e]))

    def unique_warps(self, e: int) -> int:
        b = self.base
        return min(b.wpc[e], max(1, self.full[e] // (b.spt[e] * b.tpw[e])))

    # --- Python evaluation (the definition the C expressions must match) -------------------
    def coords(self, thread: int, r: int, warp_size: int) -> tuple[int, ...]:
        lane, warp = thread % warp_size, thread // warp_size
        out = []
        for e in self.kept:
            out.append(self._coord(e, r, lane, warp))
        return tuple(out)

    def _coord(self, e: int, r: int, lane: int, warp: int) -> int:
        b = self.base
        r_e = (r // self.rstride(e)) % self.reg_sizes[e]
        lane_e = (lane // self.lstride(e)) % b.tpw[e]
        warp_e = (warp // self.wstride(e)) % b.wpc[e]
        c = ((r_e // b.spt[e]) * self.tile(e) + warp_e * b.spt[e] * b.tpw[e]
             + lane_e * b.spt[e] + r_e % b.spt[e])
        return c % self.full[e]

    # --- C expressions --------------------------------------------------------------------
    def reg_component(self, e: int, r: str) -> str:
        stride, size = self.rstride(e), self.reg_sizes[e]
        if not r.isidentifier():
            r = f"({r})"
        text = r if stride == 1 else f"{r} / {stride}"
        if stride * size < self.regs:
            text = f"({text}) % {size}" if stride != 1 else f"{text} % {size}"
        return text

    def lane_along(self, e: int) -> str:
        return _div_mod("tc::lane_id()", self.lstride(e), self.base.tpw[e], prod(self.base.tpw))

    def warp_along(self, e: int) -> str:
        return _div_mod("tc::warp_id()", self.wstride(e), self.base.wpc[e], prod(self.base.wpc))

    def coord_expr(self, axis: int, r: str) -> str:
        e = self.kept[axis]
        b = self.base
        r_e = self.reg_component(e, r)
        terms = []
        if self.reg_sizes[e] > b.spt[e]:
            terms.append(f"({r_e}) / {b.spt[e]} * {self.tile(e)}" if b.spt[e] > 1
                         else f"({r_e}) * {self.tile(e)}")
        if b.wpc[e] > 1:
            terms.append(f"{self.warp_along(e)} * {b.spt[e] * b.tpw[e]}")
        if b.tpw[e] > 1:
            terms.append(f"{self.lane_along(e)}" + (f" * {b.spt[e]}" if b.spt[e] > 1 else ""))
        if b.spt[e] > 1:
            terms.append(f"({r_e}) % {b.spt[e]}")
        text = " + ".join(terms) or "0"
        if self.full[e] < self.tile(e):
            text = f"({text}) % {self.full[e]}"
        return text.replace("(r) ", "r ")

    def owner_expr(self) -> str:
        """True in the one thread that stores each element (others hold copies)."""
        return " && ".join(self.owner_terms()) or "true"

    def owner_terms(self) -> list[str]:
        """What `owner_expr` requires, each term apart (none: every thread owns)."""
        b, conds = self.base, []
        for e in range(len(self.full)):
            base_e = []
            if b.wpc[e] > 1:
                base_e.append(f"{self.warp_along(e)} * {b.spt[e] * b.tpw[e]}")
            if b.tpw[e] > 1:
                base_e.append(self.lane_along(e) + (f" * {b.spt[e]}" if b.spt[e] > 1 else ""))
            if not base_e:
                continue
            if e not in self.kept:
                conds.append(f"{' + '.join(base_e)} == 0")
            elif self.full[e] < self.tile(e):
                conds.append(f"{' + '.join(base_e)} < {self.full[e]}")
        return conds

    @property
    def matrix_fragments(self) -> bool:
        """Whether each pair of registers (r, r + 1), r even, holds in every warp one 8 x 8
        block of a 2-D block in the tensor cores' fragment order: lane i its row R + i / 4,
        columns C + 2 (i % 4) and the next, with R and C alike in every lane and C a
        multiple of 8 — what `stmatrix` stores as it is (the accumulators of mma.sync and
        wgmma are placed so).  Every element is held once, and the registers come in
        whole groups of four such pairs."""
        b = self.base
        return (isinstance(self.enc, Blocked) and len(self.shape) == 2
                and b.order == (1, 0) and b.spt == (1, 2) and b.tpw == (8, 4)
                and all(self.full[e] % self.tile(e) == 0 for e in (0, 1))
                and self.regs % 8 == 0)

    # --- copies: where one element is held more than once ------------------------------
    # An axis shorter than its tile is held several times: by several registers of a
    # thread (shorter than `spt`), several lanes or several warps.  Sizes are powers of
    # two, so the copy that owns an element is found by clearing bits: the owning register
    # is `r & reg_owner_mask`, the owning lane `lane & lane_owner_mask` (`owner()` says
    # which thread), and the owner's position along each axis is below the axis' size.
    @property
    def reg_owner_mask(self) -> int:
        """Register r's element is owned by register `r & reg_owner_mask` of the thread."""
        mask = 0
        for e in self.kept:
            mask |= (min(self.reg_sizes[e], self.full[e]) - 1) * self.rstride(e)
        return mask

    @property
    def lane_owner_mask(self) -> int:
        """Within a warp, the lane `lane & lane_owner_mask` holds the owning copy."""
        mask = 0
        for e in range(len(self.full)):
            mask |= (self.unique_lanes(e) - 1) * self.lstride(e)
        return mask

    @property
    def replicated_registers(self) -> bool:
        return self.reg_owner_mask != self.regs - 1

    @property
    def replicated_lanes(self) -> bool:
        b = self.base
        return any(self.unique_lanes(e) < b.tpw[e] for e in range(len(self.full)))

    @property
    def replicated_warps(self) -> bool:
        b = self.base
        return any(self.unique_warps(e) < b.wpc[e] for e in range(len(self.full)))

    @property
    def replicated(self) -> bool:
        return self.replicated_registers or self.replicated_lanes or self.replicated_warps

    def owns(self, thread: int, r: int, warp_size: int) -> bool:
        """Python definition of the owning copy (tests check the C expressions by it)."""
        lane, warp = thread % warp_size, thread // warp_size
        b = self.base
        for e in range(len(self.full)):
            r_e = (r // self.rstride(e)) % self.reg_sizes[e] if e in self.kept else 0
            lane_e = (lane // self.lstride(e)) % b.tpw[e]
            warp_e = (warp // self.wstride(e)) % b.wpc[e]
            u = ((r_e // b.spt[e]) * self.tile(e) + warp_e * b.spt[e] * b.tpw[e]
                 + lane_e * b.spt[e] + r_e % b.spt[e])
            if u >= self.full[e]:
                return False
        return True

    def describe(self) -> str:
        b = self.base
        dims = " x ".join(map(str, self.shape)) or "scalar"
        parts = []
        for i, e in enumerate(self.kept):
            parts.append(f"axis {i}: {b.spt[e]} per thread x {b.tpw[e]} lanes x "
                         f"{b.wpc[e]} warps")
        sliced = "" if isinstance(self.enc, Blocked) else \
            f"; sliced from a {' x '.join(map(str, self.full))} tiling (reduced axes dropped)"
        return f"{dims} block, {self.regs} registers per thread; " + "; ".join(parts) + sliced


def _div_mod(x: str, stride: int, size: int, total: int) -> str:
    """(x / stride) % size, written without the operations that do nothing."""
    if size == 1:
        return "0"
    text = x if stride == 1 else f"{x} / {stride}"
    if stride * size == total:  # x < total already
        return text if stride == 1 else f"({text})"
    return f"({text}) % {size}" if stride != 1 else f"{text} % {size}"
