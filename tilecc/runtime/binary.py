"""`Binary`: a compiled kernel, as the native compiler produced it or the disk cache
returned it.  Apart from `native_compile`, so that a process whose kernels are all in the
disk cache never imports the compiler's module."""

from typing import NamedTuple


# A NamedTuple rather than a frozen dataclass: creating the class costs a quarter as much
# (~0.15 ms against ~0.6 ms), paid by every process's first kernel call.  No `from
# __future__ import annotations` here: NamedTuple would compile each annotation string.
class Binary(NamedTuple):
    target: str  # "cuda" or "hip"
    arch: str  # "sm_90", "sm_80", "gfx90a", ...
    data: bytes  # cubin, or HIP code object (ELF)
    log: str  # full compiler log (CUDA: includes ptxas -v report)
    shared_bytes: int = 0  # dynamic shared memory each launch must give the kernel
    # specs.TensorMap per tensor map the kernel takes after its parameters (TMA copies of
    # tensor descriptors), which each launch encodes
    tensor_maps: tuple = ()
    # a program's threads where more than num_warps' (a producer warpgroup's added,
    # passes.warp_roles); 0: num_warps x the warp size
    threads: int = 0

    def __repr__(self) -> str:  # without the binary and the log
        return (f"Binary(target={self.target!r}, arch={self.arch!r}, "
                f"shared_bytes={self.shared_bytes})")
