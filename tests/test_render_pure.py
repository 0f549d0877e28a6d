"""Rendering only reads the IR: the passes decide (plans, pipelines, the arch-specific
target), `render` writes.  With TILECC_CHECK_IR=1 (conftest sets it for the suite) `render`
verifies the IR and fails when writing the source changed it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from test_golden import GOLDEN, _kernel
from tilecc.transpiler import ir
from tilecc.transpiler.passes.settle import dynamic_tiles
from tilecc.transpiler.render import render
from tilecc.transpiler.render_dot import DotWriter
from tilecc.transpiler.target import resolve_target


def _lower(stem: str, target: str = "cuda", arch: str | None = None, num_stages: int | None = None):
    kernel, signature, warps = _kernel(stem)
    specs = kernel._specs(signature, {})
    k, conversions = kernel.lower(specs, target, warps, arch=arch, num_stages=num_stages)
    return k, conversions


def _render(k, conversions, target: str = "cuda"):
    return render(k, resolve_target(target), conversions, specialization=[])


@pytest.mark.parametrize("target", ["cuda", "hip"])
@pytest.mark.parametrize("stem", sorted(GOLDEN))
def test_rendering_leaves_the_ir_as_the_passes_left_it(stem: str, target: str) -> None:
    k, conversions = _lower(stem, target)
    before = ir.fingerprint(k)
    _render(k, conversions, target)
    assert ir.fingerprint(k) == before


def test_the_passes_settle_plans_and_pipelines_before_rendering() -> None:
    """Attention on sm_90: the second product's A (the probabilities) goes to wgmma from
    registers and its pipeline keeps a multiplication in flight — said by the IR the passes
    leave, before anything is rendered."""
    k, conversions = _lower("attention", num_stages=4)
    dots = [op for op in k.walk() if op.kind == "dot"]
    assert [d.attrs["plan"].unit.name for d in dots] == ["wgmma", "wgmma"]
    assert dots[1].attrs["plan"].a_from_registers
    assert "A from registers" in dots[1].attrs["plan"].description
    assert k.arch_specific
    loops = [op.attrs["pipeline"] for op in k.walk() if "pipeline" in op.attrs]
    assert loops and all(p.distance == p.stages - 1 - (p.in_flight and not p.refill_barrier)
                         for p in loops)
    assert all("copied into shared memory" in p.note for p in loops)
    # its dynamic shared memory: Q staged once before the loop, then K's and V's stages,
    # then (two warpgroups releasing their stages) the stages' mbarriers, two per stage
    hoisted = [h for op in k.walk() for h in op.attrs.get("hoisted", ())]
    assert [(h.dot is dots[0], h.which) for h in hoisted] == [(True, 0)]
    tiles = dynamic_tiles(k)
    assert len(tiles) == 4 and tiles[0] is hoisted[0].tile
    assert all(p.releases for p in loops) and tiles[3] is loops[0].barriers
    assert tiles[3].nbytes == 2 * 8 * loops[0].stages
    assert [t.offset for t in tiles] == [sum(t.nbytes for t in tiles[:i]) for i in range(4)]
    rendered = _render(k, conversions)
    assert f"dynamic_smem + {tiles[1].offset}" in rendered.source
    assert rendered.shared_bytes >= tiles[2].offset
    m, _ = _lower("matmul", arch="sm_80")
    assert not m.arch_specific


def test_render_returns_its_products_and_writes_nothing_on_the_kernel() -> None:
    k, conversions = _lower("matmul", num_stages=4)
    fields = dict(vars(k))
    rendered = _render(k, conversions)
    assert vars(k) == fields
    assert rendered.shared_bytes > 0 and rendered.shared_uses
    assert {"pid", "a_ptrs"} <= rendered.c_names
    assert not hasattr(k, "shared_bytes") and not hasattr(k, "c_names")


def test_fingerprint_sees_plans_pipelines_and_layouts() -> None:
    k, _ = _lower("matmul", num_stages=4)
    before = ir.fingerprint(k)
    loop = next(op for op in k.walk() if "pipeline" in op.attrs)
    p = loop.attrs["pipeline"]
    loop.attrs["pipeline"] = replace(p, note=p.note + ".")
    assert ir.fingerprint(k) != before
    loop.attrs["pipeline"] = p
    assert ir.fingerprint(k) == before
    dot = next(op for op in k.walk() if op.kind == "dot")
    layout = dot.result.layout
    dot.result.layout = None
    assert ir.fingerprint(k) != before
    dot.result.layout = layout
    k.arch_specific = not k.arch_specific
    assert ir.fingerprint(k) != before


def test_a_render_step_that_changes_the_ir_fails(monkeypatch) -> None:
    """The check catches what rendering used to do: replace a dot's plan, drop a pipeline."""
    monkeypatch.setenv("TILECC_CHECK_IR", "1")
    op_dot = DotWriter.op_dot

    def replans(self, op):
        op_dot(self, op)
        op.attrs["plan"] = replace(op.attrs["plan"], sources="decided while rendering")

    k, conversions = _lower("matmul")
    monkeypatch.setattr(DotWriter, "op_dot", replans)
    with pytest.raises(AssertionError, match="changed its IR"):
        _render(k, conversions)
    monkeypatch.setattr(DotWriter, "op_dot", op_dot)

    pipelined_ops = DotWriter.pipelined_ops

    def drops_pipelines(self):
        for op in self.ctx.kernel.walk():
            op.attrs.pop("pipeline", None)
        return pipelined_ops(self)

    k, conversions = _lower("matmul")
    monkeypatch.setattr(DotWriter, "pipelined_ops", drops_pipelines)
    with pytest.raises(AssertionError, match="changed its IR"):
        _render(k, conversions)
