"""Scans in registers, proven without a GPU: the kernel's index expressions (which register
holds which element in scan order, each lane's and warp's place along the axis, the lane
whose total a run takes) are evaluated for every thread of a block, and the scan the
kernel's template spells — runs in registers, shuffles up (down for reverse=True) between
lanes, run totals through a shared array between warps, prefixes applied — is emulated on
them.  The combine function is one that fails on any wrong order: each value is the span
of a line's elements it covers, in scan order, and only adjacent spans of one line combine.
So a wrong register, lane, warp, direction, or a copy counted twice fails here."""

from __future__ import annotations

from functools import lru_cache

import pytest

from tilecc.transpiler.passes.layouts import default_blocked
from tilecc.transpiler.passes.placement import Blocked, Placement, Slice
from tilecc.transpiler.render_scan import RegisterScan


def _combine(a, b):
    """Spans (line, first, last) of one line, in scan order: only adjacent ones combine."""
    assert a[0] == b[0], f"lines {a[0]} and {b[0]} combined"
    assert a[2] + 1 == b[1], f"spans {a[1:]} and {b[1:]} are not adjacent in scan order"
    return (a[0], a[1], b[2])


@lru_cache(maxsize=None)
def _compiled(expr: str):
    """A C index expression of non-negative ints, as Python."""
    text = expr.replace("tc::lane_id()", "lane").replace("tc::warp_id()", "warp")
    return compile(text.replace("/", "//"), expr, "eval")


def _evaluate(expr: str, lane: int, warp: int, **names: int) -> int:
    return eval(_compiled(expr), {}, dict(names, lane=lane, warp=warp))  # noqa: S307


def _emulate(plan: RegisterScan, warp_size: int, num_warps: int) -> dict:
    """Every thread's result registers, as the template's scan computes them."""
    src, n = plan.src, plan.src.shape[plan.axis]
    threads = range(warp_size * num_warps)

    coords = {(t, r): src.coords(t, r, warp_size) for t in threads for r in range(src.regs)}

    def element(t, r):
        c = coords[t, r]
        line = c[:plan.axis] + c[plan.axis + 1:]
        pos = n - 1 - c[plan.axis] if plan.reverse else c[plan.axis]
        return (line, pos, pos)

    lane_of = lambda t: t % warp_size  # noqa: E731
    ev = lambda e, t, **kw: _evaluate(e, lane_of(t), t // warp_size, **kw)  # noqa: E731
    lane_pos = {t: ev(plan.lane_pos, t) if plan.lanes > 1 else 0 for t in threads}
    warp_pos = {t: ev(plan.warp_pos, t) if plan.warps > 1 else 0 for t in threads}

    def shuffle(values, delta, t):  # the template's shfl_up / shfl_down
        lane = lane_of(t) + {"tc::shfl_up": -delta, "tc::shfl_down": delta}[plan.shuffle]
        return values[t - lane_of(t) + lane] if 0 <= lane < warp_size else values[t]

    reg_expr, reg0_expr = plan.register("o", "q", "j"), plan.register("o", "q", "0")
    copy_expr = plan.at("o", "k")
    y = {t: {} for t in threads}
    prev, run_total, totals = {}, {}, {}
    for o in range(plan.n_out):
        for q in range(plan.reps):
            reg = lambda j, t: ev(reg_expr, t, o=o, q=q, j=j)  # noqa: E731
            acc = {}
            for t in threads:
                acc[t] = element(t, reg(0, t))
                y[t][reg(0, t)] = acc[t]
                for j in range(1, plan.chunk):
                    acc[t] = _combine(acc[t], element(t, reg(j, t)))
                    y[t][reg(j, t)] = acc[t]
            delta = 1
            while delta < plan.lanes:
                other = {t: shuffle(acc, delta * plan.lane_stride, t) for t in threads}
                acc = {t: _combine(other[t], acc[t]) if lane_pos[t] >= delta else acc[t]
                       for t in threads}
                delta *= 2
            for t in threads:
                if plan.lanes > 1 and not plan.lane_exclusive:  # a run of one: final
                    y[t][reg(0, t)] = acc[t]
                prev[t, o, q] = shuffle(acc, plan.lane_stride, t)
                if plan.warps > 1 and plan.lane_exclusive and lane_pos[t] > 0:
                    for j in range(plan.chunk):  # the lanes' prefix before the exchange
                        y[t][reg(j, t)] = _combine(prev[t, o, q], y[t][reg(j, t)])
                if plan.lanes > 1:
                    last = ev(plan.last_lane, t, lane_pos=lane_pos[t])
                    assert 0 <= last < warp_size
                    run_total[t, o, q] = acc[t - lane_of(t) + last]
                else:
                    run_total[t, o, q] = acc[t]
                if plan.warps > 1 and lane_pos[t] == plan.lanes - 1:
                    key = (acc[t][0], q, warp_pos[t])  # the line's slot
                    assert totals.setdefault(key, acc[t]) == acc[t], "copies disagree"
    for t in threads:
        for o in range(plan.n_out):
            carry = None
            for q in range(plan.reps):
                later, line = q > 0, y[t][ev(reg0_expr, t, o=o, q=q)][0]
                if plan.warps > 1:  # the line's run totals before this one: runs, then warps
                    entries = [(qq, w) for qq in range(plan.reps) for w in range(plan.warps)]
                    before = entries[:entries.index((q, warp_pos[t]))]
                    has_prefix, prefix = bool(before), None
                    for qq, w in before:
                        total = totals[line, qq, w]
                        prefix = total if prefix is None else _combine(prefix, total)
                    through = None  # no carry: the prefix covers the runs before
                else:
                    prefix, has_prefix, through = carry, later, run_total[t, o, q]
                if plan.warps == 1 and plan.lane_exclusive and lane_pos[t] > 0:
                    p = prev[t, o, q]
                    prefix, has_prefix = (_combine(prefix, p) if has_prefix else p), True
                if not (plan.reps > 1 or plan.warps > 1):  # the lanes' prefix alone
                    prefix, has_prefix = prev[t, o, q], plan.lane_exclusive and lane_pos[t] > 0
                if has_prefix:
                    for j in range(plan.chunk):
                        r = ev(reg_expr, t, o=o, q=q, j=j)
                        y[t][r] = _combine(prefix, y[t][r])
                if through is not None:
                    carry = _combine(carry, through) if later else through
            for j in range(plan.chunk, plan.spt):  # copies in registers
                at = lambda k: ev(copy_expr, t, o=o, k=k)  # noqa: E731
                y[t][at(j)] = y[t][at(j % plan.chunk)]
    return y, coords


def _check(p: Placement, axis: int, reverse: bool, warp_size: int, num_warps: int) -> None:
    plan = RegisterScan(p, axis, reverse)
    y, coords = _emulate(plan, warp_size, num_warps)
    n = p.shape[axis]
    for t, regs in y.items():
        assert len(regs) == p.regs, f"thread {t} wrote {sorted(regs)} of {p.regs} registers"
        for r, value in regs.items():
            c = coords[t, r]
            pos = n - 1 - c[axis] if reverse else c[axis]
            assert value == (c[:axis] + c[axis + 1:], 0, pos), (t, r, c, value)


def _blocked(shape, vec, num_warps, warp_size, order=None) -> Placement:
    return Placement(default_blocked(shape, vec, num_warps, warp_size, order), shape)


CASES = [  # (placement, num_warps, warp_size)
    *[(_blocked((n,), vec, w, ws), w, ws) for n in (2, 32, 256) for vec in (1, 4)
      for w, ws in ((1, 32), (4, 32), (8, 64))],
    (_blocked((1024,), 4, 4, 32), 4, 32),
    *[(_blocked(shape, vec, w, ws, order), w, ws)
      for shape in ((2, 8), (16, 16), (64, 16), (8, 128)) for vec in (1, 4)
      for w, ws in ((1, 32), (4, 64)) for order in ((1, 0), (0, 1))],
    # copies: in registers (4 per thread of an axis of 2), lanes and warps beyond the axis
    (Placement(Blocked((4, 1), (1, 32), (1, 4), (1, 0)), (2, 8)), 4, 32),
    (Placement(Blocked((1, 2), (8, 4), (2, 2), (1, 0)), (4, 4)), 4, 32),
    (Placement(Blocked((2, 1), (16, 4), (4, 1), (0, 1)), (8, 2)), 4, 64),
    # a 1-D block sliced from a 2-D tiling: lanes and warps of the dropped axis hold copies
    (Placement(Slice(Blocked((1, 4), (8, 4), (4, 1), (1, 0)), 0), (16,)), 4, 32),
    (Placement(Slice(Blocked((1, 4), (8, 4), (4, 1), (1, 0)), 1), (64,)), 4, 32),
]


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_register_scan_index_math_on_every_thread(reverse: bool) -> None:
    """Each element of every thread ends as the combination of its line's elements up to
    it in scan order, for 1-D and 2-D blocks along each axis, warp sizes 32 and 64, 1 to 8
    warps, runs that repeat, and copies in registers, lanes and warps."""
    for p, num_warps, warp_size in CASES:
        for axis in range(len(p.shape)):
            _check(p, axis, reverse, warp_size, num_warps)


@pytest.mark.parametrize("wrong", ["lane_pos", "shuffle"])
def test_emulation_fails_on_wrong_index_math(monkeypatch, wrong: str) -> None:
    """The emulation notices a lane place counted the wrong way, and a shuffle in the
    wrong direction."""
    bad = {"lane_pos": "31 - tc::lane_id()", "shuffle": "tc::shfl_down"}[wrong]
    monkeypatch.setattr(RegisterScan, wrong, property(lambda s: bad))
    with pytest.raises(AssertionError):
        _check(_blocked((64,), 1, 1, 32), 0, False, 32, 1)
