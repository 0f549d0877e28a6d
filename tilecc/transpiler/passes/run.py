"""`run_passes`: the passes of this package in their order (the package's docstring)."""

from __future__ import annotations

from tilecc.transpiler import ir
from tilecc.transpiler.ir import Kernel
from tilecc.transpiler.passes import axis_info, dot, layouts, pipeline, pointer_tiles
from tilecc.transpiler.passes.carried_offsets import carry_offsets, hoist_offsets
from tilecc.transpiler.passes.coalesce import coalesce_in_loops, coalesce_loads, coalesce_stores
from tilecc.transpiler.passes.contract import contract_products, fold_dot_adds
from tilecc.transpiler.passes.transpose import fold_transposed_loads
from tilecc.transpiler.passes.unit_dims import fold_unit_dims
from tilecc.transpiler.passes.dce import eliminate_dead_code
from tilecc.transpiler.passes.settle import settle
from tilecc.transpiler.target import CompileTarget


def run_passes(kernel: Kernel, target: CompileTarget, made_descriptor_tma: bool = True,
               tma_stores: bool = True, prologue_reads: bool = True,
               deferred_products: bool = True) -> list[str]:
    """Annotate `kernel` in place; returns the layout conversions it needs, described.
    `made_descriptor_tma` False: descriptors the kernel makes are not copied by TMA;
    `tma_stores` False: no descriptor store is written by the copy engine;
    `prologue_reads` False: pipelines read ahead only the products' own operands;
    `deferred_products` False: every product of a pipelined body waits for itself."""
    ir.verify(kernel)
    eliminate_dead_code(kernel)
    fold_dot_adds(kernel)
    contract_products(kernel)
    fold_unit_dims(kernel)
    fold_transposed_loads(kernel)
    if target.async_copies and target.has_tma and made_descriptor_tma and \
            pipeline.any_pipelined(kernel) and pointer_tiles.mark(kernel):
        eliminate_dead_code(kernel)  # (the carried pointers the marked loads no longer read)
    if carry_offsets(kernel):
        eliminate_dead_code(kernel)  # (the blocks the offsets replace)
    dot.convert_unplanned_fp8(kernel, kernel.num_warps, target.matrix_units, target.arch)
    axis_info.analyze(kernel)
    if hoist_offsets(kernel):  # (it reads the analysis: which loads read vectors)
        eliminate_dead_code(kernel)
        axis_info.analyze(kernel)
    conversions = layouts.assign(kernel, target.warp_size, target.matrix_units, target.arch,
                                 target.packed_add_elements)
    # index arithmetic the layouts computed again in another layout leaves its first copy
    # unread, which would keep the pipeline from moving what it reads
    eliminate_dead_code(kernel)
    if target.async_copies:
        pipeline.plan(kernel, target.has_tma, made_descriptor_tma, prologue_reads)
    settle(kernel, target, made_descriptor_tma, tma_stores, deferred_products)
    pointer_tiles.unmark_unused(kernel)
    conversions += coalesce_stores(kernel, target.warp_size)
    if target.async_copies:  # (NVIDIA: measured there)
        conversions += coalesce_in_loops(kernel, target.warp_size, target.matrix_units,
                                         target.shared_memory_limit)
        conversions += coalesce_loads(kernel, target.warp_size, target.matrix_units,
                                      target.shared_memory_limit)
    ir.verify(kernel)
    return conversions
