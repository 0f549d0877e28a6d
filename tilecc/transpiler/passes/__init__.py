"""The pass pipeline: `run_passes(kernel, target)` annotates the IR for rendering.

  0. dce        — drop pure values nothing reads; fp16 / bf16 `a * b + c` becomes one
                  fused multiply-add under fp fusion (passes.contract); `load(...).T`
                  becomes the load of the transposed block (passes.transpose); on sm_90,
                  loads of pointer blocks that are boxes of a strided tensor are marked
                  for TMA, those the loop advanced read from its index instead
                  (passes.pointer_tiles), and the others a K loop advances by a scalar
                  become the block before the loop plus a carried offset
                  (passes.carried_offsets);
                  fp8 products no matrix unit of the target multiplies get fp16 operands
                  (passes.dot)
  1. axis_info  — contiguity / divisibility / constancy of every integer and pointer value
                  (then the blocks of pointers a K loop computes from its index, read in
                  vectors, become a block before the loop plus an offset:
                  passes.carried_offsets.hoist_offsets)
  2. layouts    — a placement (blocked or sliced layout) for every block value, shared-
                  memory conversions where layouts disagree (before a loop where what they
                  convert was made before it), and a plan (vector width, mask
                  checking) for every load and store, and a dot plan (passes.dot) for every
                  tl.dot
                  (then dce again: index arithmetic recomputed in another layout)
  3. pipeline   — (NVIDIA) tl.dot operands loaded in a loop become cp.async copies (TMA
                  copies of host descriptors on sm_90) into shared-memory stages, issued
                  num_stages - 1 iterations ahead
  4. settle     — what the renderer would otherwise decide while writing: which pipelines
                  are kept, how far ahead they copy, which products a later one's wait
                  retires, each dot's final plan, where tl.dot's tiles lie in dynamic
                  shared memory; the loads a pipeline does not copy move ahead of the
                  products (passes.early_loads)
                  (and which descriptor stores the copy engine writes, sm_90; and
                  whether a producer warpgroup issues a persistent loop's copies,
                  passes.warp_roles)
  5. coalesce   — a product's result stored from a blocked layout (16-byte vectors), through
                  the tl.dot tiles' shared memory once the loops are done; blocks loaded
                  into a product's layout read in 16-byte vectors and converted; rendering
                  then only reads the IR
The interpreter runs the IR these passes leave, so what the GPU code computes and what CI
checks on NumPy cannot drift apart.
"""

from __future__ import annotations

from tilecc.transpiler import ir
from tilecc.transpiler.ir import Kernel
from tilecc.transpiler.passes import axis_info, dot, layouts, pipeline, pointer_tiles
from tilecc.transpiler.passes.carried_offsets import carry_offsets, hoist_offsets
from tilecc.transpiler.passes.coalesce import coalesce_in_loops, coalesce_loads, coalesce_stores
from tilecc.transpiler.passes.contract import contract_products, fold_dot_adds
from tilecc.transpiler.passes.transpose import fold_transposed_loads
from tilecc.transpiler.passes.dce import eliminate_dead_code
from tilecc.transpiler.passes.settle import settle
from tilecc.transpiler.target import CompileTarget


def run_passes(kernel: Kernel, target: CompileTarget, made_descriptor_tma: bool = True,
               tma_stores: bool = True, prologue_reads: bool = True) -> list[str]:
    """Annotate `kernel` in place; returns the layout conversions it needs, described.
    `made_descriptor_tma` False: descriptors the kernel makes are not copied by TMA;
    `tma_stores` False: no descriptor store is written by the copy engine;
    `prologue_reads` False: pipelines read ahead only the products' own operands."""
    ir.verify(kernel)
    eliminate_dead_code(kernel)
    fold_dot_adds(kernel)
    contract_products(kernel)
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
    settle(kernel, target, made_descriptor_tma, tma_stores)
    pointer_tiles.unmark_unused(kernel)
    conversions += coalesce_stores(kernel, target.warp_size)
    if target.async_copies:  # (NVIDIA: measured there)
        conversions += coalesce_in_loops(kernel, target.warp_size, target.matrix_units,
                                         target.shared_memory_limit)
        conversions += coalesce_loads(kernel, target.warp_size, target.matrix_units,
                                      target.shared_memory_limit)
    ir.verify(kernel)
    return conversions
