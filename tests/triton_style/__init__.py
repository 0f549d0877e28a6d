"""A small kernel library written as Triton code is written in the open-source LLM kernel
libraries (norms, activations, losses, rotary embeddings): `import triton`, `@triton.jit`,
`@triton.autotune`/`triton.Config`, `@triton.heuristics`, `triton.cdiv`,
`triton.next_power_of_2`, `tl.math.*`.  It is never edited for tilecc: tests run it under
`python -m tilecc.compat` (tests/test_compat.py)."""
