"""The pass pipeline: `run_passes(kernel, target)` annotates the IR for rendering.

  0. dce        — drop pure values nothing reads; fp16 / bf16 `a * b + c` becomes one
                  fused multiply-add under fp fusion (passes.contract); a reshape
                  dropping unit dims of a load (adding them for a store) becomes the
                  load (store) of the reshaped block (passes.unit_dims); `load(...).T`
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


def __getattr__(name: str):
    """`run_passes`, from `passes.run`, on first use.  The package imports none of its
    passes itself: a thread importing one pass (the renderer imports `settle`) takes that
    module's import lock before this package's, and a package that imported its passes
    would take them in the other order on another thread; CPython breaks that deadlock by
    handing each thread the other's module half made ("cannot import name ... from
    partially initialized module"), which the autotuner's thread pool of first compiles
    met."""
    if name == "run_passes":
        from tilecc.transpiler.passes.run import run_passes
        return run_passes
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
