"""Target data: what differs between CUDA and HIP, held as data rather than code.

The renderer and templates are shared; a `Target` supplies the spellings and numbers
that differ (warp size, file names, default architecture).  Element types and math
spellings are the same on both because the device header (`include/tilecc.h`) hides
the vendor differences.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.language import dtypes as D


@dataclass(frozen=True)
class Target:
    name: str  # "cuda" or "hip"
    warp_size: int
    default_arch: str
    source_suffix: str
    vendor: str
    # matrix instructions `tl.dot` uses: "mma.sync" (NVIDIA tensor cores, sm_80+), or ""
    # for the portable fused-multiply-add loop
    matrix_unit: str = ""

    def describe(self) -> str:
        return f"{self.vendor} ({self.name}, warp size {self.warp_size})"


CUDA = Target("cuda", 32, "sm_90", ".cu", "NVIDIA", "mma.sync")
HIP = Target("hip", 64, "gfx90a", ".hip", "AMD CDNA")

TARGETS = {"cuda": CUDA, "hip": HIP}


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
    "fp64": "double",
}
NARROW_INTS = {"i1", "i8", "i16", "u8", "u16"}


def c_type(d: D.dtype | D.pointer_type, const: bool = False) -> str:
    if d.is_ptr():
        return ("const " if const else "") + C_TYPES[d.element_ty.name] + "*"
    return C_TYPES[d.name]
