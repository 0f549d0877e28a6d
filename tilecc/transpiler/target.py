"""Target data: what differs between CUDA and HIP, held as data rather than code.

The renderer and templates are shared; a `Target` supplies the spellings and numbers
that differ (warp size, file names, default architecture).  Element types and math
spellings are the same on both because the device header (`include/tilecc.h`) hides
the vendor differences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from tilecc.language import dtypes as D
from tilecc.transpiler.matrix_units import MMA_SYNC, WGMMA, MatrixUnit
from tilecc.transpiler.matrix_units_amd import AMD_UNITS


@dataclass(frozen=True)
class Target:
    """A target's row: what differs between CUDA and HIP, as data.  A compile resolves its
    row and architecture once into a `CompileTarget` (`resolve_target`), which the stages
    below read; none of them compares target names or reads architecture text."""

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
    binary_suffix: str = ""  # the native compiler's output: ".cubin", ".hsaco"
    assembly_suffix: str | None = None  # its assembly, dumped with a build: ".ptx"
    # architectures (prefixes) whose copy engine (TMA) the pipelines of tl.dot may use
    tma_archs: tuple[str, ...] = ()
    # what an architecture of arch-specific instructions (wgmma) is suffixed with
    arch_specific_suffix: str = ""
    # the architecture `tilecc export` builds for: code that runs on every GPU of the
    # target from it on (None: the target's default)
    export_arch: str | None = None
    # the native compiler's flags: the runtime's line tables, no contraction of a * b + c
    # (enable_fp_fusion=False), a register limit (maxnreg; None: the compiler has none)
    line_info_flags: tuple[str, ...] = ()
    no_contract_flag: str = ""
    register_limit_flag: str | None = None
    # how the source itself keeps products uncontracted: rounding intrinsics
    # (__fmul_rn, which nvcc never contracts), or clang's `fp contract(off)` pragma
    rounded_products: bool = False
    no_contract_pragma: bool = False
    # the largest `__shared__` arrays a kernel may declare statically (None: no limit
    # beyond the program's)
    static_shared_limit: int | None = None
    # stores of elements under 32 bits predicated rather than branched around, and the
    # programs per SM asked of the compiler for memory-bound kernels (ptxas's occupancy)
    predicated_narrow_stores: bool = False
    occupancy_hints: bool = False
    # a loop that moves a block pointer carries its block of pointers (tl.advance adds to
    # them): from the offsets at each load, ptxas kept every copy's 64-bit address
    # arithmetic in the loop; AMD's compiler reads that form as one scalar base and a
    # 32-bit offset per element (global loads), which carried pointers lose (flat loads,
    # 176 VGPRs against 121 in a 128 x 128 x 32 block-pointer GEMM on gfx90a)
    carried_block_pointers: bool = False
    # what a launch takes besides the compile options: Triton's AMD tuning hints
    # (waves_per_eu, matrix_instr_nonkdim, kpack: accepted and ignored, as nothing is built
    # differently for them), a cooperative launch (every program resident at once)
    amd_tuning_hints: bool = False
    cooperative_launch: bool = False
    launch_call: str = ""  # the driver call a launch goes through, as messages name it
    # an architecture's facts: bytes of shared memory per program, fp8 types
    shared_per_block: Callable[[str], int] = lambda arch: 48 * 1024
    fp8_formats: Callable[[str], tuple[str, ...]] = lambda arch: ()
    # an architecture as Triton's `GPUTarget.arch` gives it: 90 for sm_90a, "gfx90a"
    arch_number: Callable[[str], int | str] = lambda arch: arch

    def describe(self) -> str:
        return f"{self.vendor} ({self.name}, warp size {self.warp_size})"

    def arch_spelled(self, arch):
        """`arch` in this target's spelling: Triton's `sm80` is `sm_80` here."""
        head, sep, _ = self.default_arch.partition("_")
        if sep and isinstance(arch, str) and re.fullmatch(rf"{head}\d{{2,3}}[a-z]?", arch):
            return f"{head}_{arch[len(head):]}"
        return arch


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


# fp8 types, Triton 3.6's `supported_fp8_dtypes`: AMD has the OCP and the fnuz formats
# (native on CDNA3 / CDNA4, converted in software elsewhere), NVIDIA fp8e5 everywhere and
# fp8e4nv from sm_89 on (tilecc has no fp8e4b15, Triton's own format, deprecated on
# Hopper).  The interpreter has the four ml_dtypes formats.
ALL_FP8 = ("fp8e4nv", "fp8e5", "fp8e4b8", "fp8e5b16")


def _digits(arch: str) -> str:
    """The digits of a CUDA architecture (sm_90a, compute_80 -> "90", "80"): the one
    place architecture text is read."""
    return "".join(c for c in arch.removeprefix("sm_").removeprefix("compute_") if c.isdigit())


def _cuda_shared_per_block(arch: str) -> int:
    digits = _digits(arch)
    if len(digits) < 2:
        raise ValueError(f"unknown CUDA architecture {arch!r} (expected e.g. sm_80, sm_90a)")
    cc = (int(digits[:-1]), int(digits[-1]))
    if cc in _CUDA_SHARED_PER_BLOCK:
        return _CUDA_SHARED_PER_BLOCK[cc]
    known = [k for k in _CUDA_SHARED_PER_BLOCK if k <= cc]  # a newer minor: its major's
    return _CUDA_SHARED_PER_BLOCK[max(known)] if known else 48 * 1024


def _hip_shared_per_block(arch: str) -> int:  # the chip, without its features (:xnack-)
    return _HIP_SHARED_PER_BLOCK.get(arch.split(":")[0], 64 * 1024)


def _cuda_fp8(arch: str) -> tuple[str, ...]:
    digits = _digits(arch)
    return ("fp8e4nv", "fp8e5") if (int(digits) if digits else 90) >= 89 else ("fp8e5",)


def shared_memory_limit(target: Target, arch: str) -> int:
    """Bytes of shared memory (LDS) one program may use on `arch`."""
    return target.shared_per_block(arch)


CUDA = Target("cuda", 32, "sm_90", ".cu", "NVIDIA", matrix_units=(WGMMA, MMA_SYNC),
              async_copies=True, binary_suffix=".cubin", assembly_suffix=".ptx",
              tma_archs=("sm_9",),
              arch_specific_suffix="a", export_arch="sm_80", line_info_flags=("-lineinfo",),
              no_contract_flag="--fmad=false", register_limit_flag="--maxrregcount={}",
              rounded_products=True, static_shared_limit=CUDA_STATIC_SHARED_LIMIT,
              predicated_narrow_stores=True, occupancy_hints=True, carried_block_pointers=True,
              cooperative_launch=True, launch_call="cuLaunchKernel",
              shared_per_block=_cuda_shared_per_block, fp8_formats=_cuda_fp8,
              arch_number=lambda arch: int(_digits(arch) or 0))
HIP = Target("hip", 64, "gfx90a", ".hip", "AMD CDNA", matrix_units=AMD_UNITS,
             binary_suffix=".hsaco",
             no_contract_flag="-ffp-contract=off", no_contract_pragma=True,
             amd_tuning_hints=True, launch_call="hipModuleLaunchKernel",
             shared_per_block=_hip_shared_per_block, fp8_formats=lambda arch: ALL_FP8)

TARGETS = {"cuda": CUDA, "hip": HIP}


def get_target(name: str | Target) -> Target:
    if isinstance(name, Target):
        return name
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; choose one of {sorted(TARGETS)}") from None


@dataclass(frozen=True)
class CompileTarget:
    """One compile's target: the row and the architecture, resolved once at the compile
    entry (`resolve_target`), and what follows from them.  The stages read these facts;
    they neither parse the architecture nor compare target names."""

    row: Target
    arch: str  # sm_90, gfx90a: the default filled in

    # the row's facts, read through
    name = property(lambda self: self.row.name)
    vendor = property(lambda self: self.row.vendor)
    warp_size = property(lambda self: self.row.warp_size)
    source_suffix = property(lambda self: self.row.source_suffix)
    binary_suffix = property(lambda self: self.row.binary_suffix)
    assembly_suffix = property(lambda self: self.row.assembly_suffix)
    matrix_units = property(lambda self: self.row.matrix_units)
    async_copies = property(lambda self: self.row.async_copies)
    line_info_flags = property(lambda self: self.row.line_info_flags)
    no_contract_flag = property(lambda self: self.row.no_contract_flag)
    register_limit_flag = property(lambda self: self.row.register_limit_flag)
    rounded_products = property(lambda self: self.row.rounded_products)
    no_contract_pragma = property(lambda self: self.row.no_contract_pragma)
    static_shared_limit = property(lambda self: self.row.static_shared_limit)
    predicated_narrow_stores = property(lambda self: self.row.predicated_narrow_stores)
    occupancy_hints = property(lambda self: self.row.occupancy_hints)
    carried_block_pointers = property(lambda self: self.row.carried_block_pointers)

    def describe(self) -> str:
        return self.row.describe()

    @property
    def arch_number(self) -> int | str:
        """The architecture as Triton's `GPUTarget.arch`: 90 for sm_90, the gfx name."""
        return self.row.arch_number(self.arch)

    @property
    def has_tma(self) -> bool:
        """The copy engine (TMA) can fill tl.dot's shared-memory tiles (Hopper)."""
        return bool(self.row.tma_archs) and self.arch.startswith(self.row.tma_archs)

    @property
    def has_wgmma(self) -> bool:
        """A matrix unit of arch-specific instructions (wgmma) runs here."""
        return any(u.arch_specific and u.available(self.arch) for u in self.matrix_units)

    @property
    def has_stmatrix(self) -> bool:
        """Warps store tensor-core accumulator fragments to shared memory as 8 x 8 matrices
        (`stmatrix`, sm_90 and later)."""
        number = self.arch_number
        return isinstance(number, int) and number >= 90

    @property
    def has_ldmatrix(self) -> bool:
        """Warps read tensor-core fragments from shared memory as 8 x 8 matrices
        (`ldmatrix`, NVIDIA sm_75 and later)."""
        number = self.arch_number
        return self.async_copies and isinstance(number, int) and number >= 75

    @property
    def packed_add_elements(self) -> int:
        """fp16 / bf16 elements one atomic add whose old values go unused may update: 16
        bytes as one vector reduction on sm_90 and later, else a packed pair."""
        number = self.arch_number
        return 8 if isinstance(number, int) and number >= 90 else 2

    @property
    def fp8_formats(self) -> tuple[str, ...]:
        """The fp8 types a kernel may use here (as Triton 3.6 accepts them)."""
        return self.row.fp8_formats(self.arch)

    @property
    def shared_memory_limit(self) -> int:
        """Bytes of shared memory (LDS) one program may use."""
        return shared_memory_limit(self.row, self.arch)  # (tests replace the function)

    def loads_on(self, device_arch: str) -> bool:
        """Whether a binary built for this architecture loads on a device of `device_arch`:
        a cubin for sm_XY runs on sm_XZ with Z >= Y (an arch-specific sm_XYa build on sm_XY
        alone); a code object on its own chip only (features such as :xnack- aside)."""
        want, have = self.arch_number, self.row.arch_number(device_arch)
        if isinstance(want, int) and isinstance(have, int):
            suffix = self.row.arch_specific_suffix
            specific = bool(suffix) and self.arch.endswith(suffix)
            return want // 10 == have // 10 and want <= have and (not specific or want == have)
        return self.arch.split(":")[0] == device_arch.split(":")[0]

    def binary_arch(self, arch_specific: bool) -> str:
        """The architecture the native compiler builds for: the arch-specific one (sm_90a)
        where the kernel uses such instructions."""
        suffix = self.row.arch_specific_suffix
        if arch_specific and suffix and not self.arch.endswith(suffix):
            return self.arch + suffix
        return self.arch


def resolve_target(target: str | Target | CompileTarget, arch: str | None = None) -> CompileTarget:
    """The compile target of (`target`, `arch`); `arch` None: the target's default.  A
    CompileTarget is taken as it is (an `arch` given must then be its own)."""
    if isinstance(target, CompileTarget):
        if arch is not None and arch != target.arch:
            raise ValueError(f"architecture {arch!r} given with a target resolved for "
                             f"{target.arch!r}")
        return target
    row = get_target(target)
    return CompileTarget(row, arch or row.default_arch)


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
        return ("const " if const else "") + C_TYPES[d.element_ty.short] + "*"
    return C_TYPES[d.short]
