"""Target data: what differs between CUDA and HIP, held as data rather than code.

The renderer and templates are shared; a `Target` supplies the spellings and numbers
that differ (warp size, file names, default architecture).  Element types and math
spellings are the same on both because the device header (`include/tilecc.h`) hides
the vendor differences.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.language import dtypes as D
from tilecc.transpiler.matrix_units import MMA_SYNC, WGMMA, MatrixUnit


@dataclass(frozen=True)
class Target:
    name: str  # "cuda" or "hip"
    warp_size: int
    default_arch: str
    source_suffix: str
    vendor: str
    # the matrix units `tl.dot` may run on, in order of preference (matrix_units.py);
    # none: the portable fused-multiply-add loop
    matrix_units: tuple[MatrixUnit, ...] = ()
    # cp.async: copies from global to shared memory that bypass the registers, which the
    # pipelining of tl.dot's operands in loops issues ahead (passes.pipeline)
    async_copies: bool = False

    def describe(self) -> str:
        return f"{self.vendor} ({self.name}, warp size {self.warp_size})"


CUDA = Target("cuda", 32, "sm_90", ".cu", "NVIDIA", matrix_units=(WGMMA, MMA_SYNC),
              async_copies=True)
HIP = Target("hip", 64, "gfx90a", ".hip", "AMD CDNA")

TARGETS = {"cuda": CUDA, "hip": HIP}


# Shared memory one program (thread block) may use, static and dynamic together, in bytes:
# CUDA's opt-in maximum per block by compute capability (the CUDA C++ Programming Guide's
# table of technical specifications; what cuDeviceGetAttribute reports as
# MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), and the LDS of AMD's CDNA chips.  A launch on a real
# device checks the device's own number as well.
_CUDA_SHARED_PER_BLOCK = {
    (7, 0): 96 * 1024, (7, 2): 96 * 1024, (7, 5): 64 * 1024,
    (8, 0): 163 * 1024, (8, 6): 99 * 1024, (8, 7): 163 * 1024, (8, 9): 99 * 1024,
    (9, 0): 227 * 1024, (10, 0): 227 * 1024, (10, 1): 227 * 1024, (10, 3): 227 * 1024,
    (11, 0): 227 * 1024, (12, 0): 99 * 1024, (12, 1): 99 * 1024,
}
_HIP_SHARED_PER_BLOCK = {"gfx950": 160 * 1024}  # every other CDNA / RDNA chip: 64 KiB
# A kernel's static `__shared__` arrays alone may take at most 48 KiB on CUDA (ptxas rejects
# more); beyond that shared memory must be dynamic and allowed per kernel at launch.
CUDA_STATIC_SHARED_LIMIT = 48 * 1024


def shared_memory_limit(target: Target, arch: str) -> int:
    """Bytes of shared memory (LDS) one program may use on `arch`."""
    if target.name == "hip":
        return _HIP_SHARED_PER_BLOCK.get(arch.split(":")[0], 64 * 1024)
    digits = "".join(c for c in arch.removeprefix("sm_").removeprefix("compute_") if c.isdigit())
    if len(digits) < 2:
        raise ValueError(f"unknown CUDA architecture {arch!r} (expected e.g. sm_80, sm_90a)")
    cc = (int(digits[:-1]), int(digits[-1]))
    if cc in _CUDA_SHARED_PER_BLOCK:
        return _CUDA_SHARED_PER_BLOCK[cc]
    known = [k for k in _CUDA_SHARED_PER_BLOCK if k <= cc]  # a newer minor: its major's
    return _CUDA_SHARED_PER_BLOCK[max(known)] if known else 48 * 1024


def get_target(name: str | Target) -> Target:
    if isinstance(name, Target):
        return name
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; choose one of {sorted(TARGETS)}") from None


# C spelling of each element type, and whether arithmetic in C would widen it (C's
# integer promotions): results of narrow integer arithmetic are cast back.
C_TYPES = {
    "i1": "bool", "i8": "signed char", "i16": "short", "i32": "int", "i64": "long long",
    "u8": "unsigned char", "u16": "unsigned short", "u32": "unsigned int",
    "u64": "unsigned long long", "fp16": "tc::half", "bf16": "tc::bfloat16", "fp32": "float",
    "fp64": "double", "fp8e4nv": "tc::fp8e4nv", "fp8e5": "tc::fp8e5", "fp8e4b8": "tc::fp8e4b8",
    "fp8e5b16": "tc::fp8e5b16",
}
NARROW_INTS = {"i1", "i8", "i16", "u8", "u16"}


def c_type(d: D.dtype | D.pointer_type, const: bool = False) -> str:
    if d.is_ptr():
        return ("const " if const else "") + C_TYPES[d.element_ty.name] + "*"
    return C_TYPES[d.name]
