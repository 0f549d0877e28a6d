"""Compile options: the one table of what a kernel is compiled with.

Each `Option` says its default, how a value is checked (with the message every entry —
the Python API, the launch, the command line, export, the autotuner — reports), whether a
launch takes it as a keyword argument (`kernel[grid](..., num_warps=8)`), and whether it
enters the kernel's cache key.  A new option is one row here, plus what reads it.

    OPTIONS["num_warps"].check(8)          # the value, or OptionError (a ValueError) saying why
    CompileOptions(num_warps=8, ...)       # one compile's options (`compiler.resolve_options`)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable

from tilecc.errors import OptionError

DEFAULT_NUM_WARPS = 4
DEFAULT_NUM_STAGES = 3  # Triton's: operands of tl.dot in a loop are loaded 2 iterations ahead


def _num_warps_problem(n: Any) -> str | None:
    if type(n) is not int or n < 1 or n & (n - 1) or n > 32:
        return f"num_warps must be a power of 2 between 1 and 32 (an int), got {n!r}"
    return None


def _num_stages_problem(n: Any) -> str | None:
    # As Triton takes it: any depth (0 and 1: no pipelining; a depth whose stages outgrow
    # the program's shared memory is refused when compiled, OutOfResources, as Triton's)
    if type(n) is not int or n < 0:
        return (f"num_stages must be a non-negative integer (0 or 1: tl.dot's operands "
                f"not pipelined), got {n!r}")
    return None


# The registers per thread ptxas can be held to, sm_75 to sm_120: it raises a smaller limit
# to 24 and ignores one above 255, with a warning each.
PTXAS_REGISTERS = (24, 255)


def _maxnreg_problem(n: Any) -> str | None:
    if type(n) is not int or n < 1:
        return f"maxnreg must be a positive integer (registers per thread), got {n!r}"
    return None


def legal_maxnreg(n: int | None) -> int | None:
    """The register limit passed to the compiler for a `maxnreg` a user gave: any positive
    integer is taken, as Triton takes it, and the nearest value ptxas keeps is passed
    (`maxnreg=256` → 255, `maxnreg=16` → 24), so that the compile stays warning-free."""
    if n is None:
        return None
    low, high = PTXAS_REGISTERS
    return min(max(n, low), high)


def _fp_fusion_problem(v: Any) -> str | None:
    if not isinstance(v, bool):
        return f"enable_fp_fusion must be True or False, got {v!r}"
    return None


def _reflect_ftz_problem(v: Any) -> str | None:
    if not isinstance(v, bool):
        return f"enable_reflect_ftz must be True or False, got {v!r}"
    return None


def _num_ctas_problem(n: Any) -> str | None:
    if n != 1 or isinstance(n, bool):
        return (f"num_ctas={n!r} is not supported by tilecc: a program is one thread block "
                "(thread-block clusters are not generated); use num_ctas=1")
    return None


def _bool_problem(name: str) -> Callable[[Any], str | None]:
    return lambda v: None if isinstance(v, bool) else f"{name} must be True or False, got {v!r}"


def _hip_hint_problem(name: str) -> Callable[[Any], str | None]:
    def problem(v: Any) -> str | None:
        if type(v) is not int or v < 0:
            return f"{name} must be a non-negative integer (an AMD tuning hint), got {v!r}"
        return None
    return problem


def _target_problem(t: Any) -> str | None:
    from tilecc.transpiler.target import TARGETS, Target

    if not isinstance(t, Target) and t not in TARGETS:
        return f"unknown target {t!r}; choose one of {sorted(TARGETS)}"  # get_target's
    return None


@dataclass(frozen=True)
class Option:
    name: str
    default: Any  # None: decided later (debug: the kernel's or TILECC_DEBUG; arch: the target's)
    problem: Callable[[Any], str | None]  # what is wrong with a value (None: nothing)
    launch: bool  # a launch takes it as a keyword argument, next to the kernel's own
    in_key: bool  # it enters the kernel's cache key (memory and disk)
    doc: str
    none_is_default: bool = True  # an explicit None means the default (else it is checked)
    # Triton's AMD tuning hints: a launch takes them (HIP only) by the careful path, and
    # they are not in the warm key (nothing is built differently for them)
    hip_hint: bool = False

    def check(self, value: Any) -> Any:
        """`value` (the default for None where that is allowed), or OptionError (a
        ValueError, and an AssertionError as Triton's checks are) with the option's
        message."""
        if value is None and self.none_is_default:
            return self.default
        problem = self.problem(value)
        if problem:
            raise OptionError(problem)
        return value


OPTIONS: dict[str, Option] = {o.name: o for o in (
    Option("num_warps", DEFAULT_NUM_WARPS, _num_warps_problem, launch=True, in_key=True,
           doc="warps per program: a program is num_warps x warp_size threads",
           none_is_default=False),
    Option("num_stages", DEFAULT_NUM_STAGES, _num_stages_problem, launch=True, in_key=True,
           doc="shared-memory stages of tl.dot's pipelined operands"),
    Option("debug", None, lambda v: None, launch=True, in_key=True,
           doc="keep tl.device_assert checks (None: @jit(debug=...), else TILECC_DEBUG=1)"),
    Option("maxnreg", None, _maxnreg_problem, launch=True, in_key=True,
           doc="at most this many registers per thread (CUDA: ptxas -maxrregcount, the "
               "nearest value from 24 to 255; refused on HIP)"),
    Option("enable_fp_fusion", True, _fp_fusion_problem, launch=True, in_key=True,
           doc="let the compiler contract a * b + c into one fma (False: NVRTC --fmad=false, "
               "hiprtc -ffp-contract=off; tl.fma stays fused); default: "
               "TILECC_DEFAULT_FP_FUSION, else True"),
    # Triton's libdevice flushes subnormals with True (its default); tilecc's libdevice
    # functions (the CUDA math library, ocml) keep them either way, as Triton's with False
    Option("enable_reflect_ftz", True, _reflect_ftz_problem, launch=True, in_key=False,
           doc="accepted, True or False: libdevice functions keep subnormals either way "
               "(Triton's with enable_reflect_ftz=False)"),
    Option("num_ctas", 1, _num_ctas_problem, launch=True, in_key=False,
           doc="thread blocks per program: 1 (Triton's clusters are not supported)"),
    Option("arch", None, lambda v: None, launch=True, in_key=True,
           doc="sm_80, sm_90, gfx90a, ... (None: the device's, or the target's default); "
               "checked against the target by arch_problem; a launch takes Triton's "
               "spelling too (sm90) and an arch whose binary loads on the device "
               "(`launch_arch`)"),
    Option("launch_cooperative_grid", False, _bool_problem("launch_cooperative_grid"),
           launch=True, in_key=False,
           doc="CUDA: launch with cuLaunchCooperativeKernel (every program resident at "
               "once; the driver refuses a larger grid); refused on HIP"),
    Option("waves_per_eu", 0, _hip_hint_problem("waves_per_eu"), launch=True, in_key=False,
           hip_hint=True, doc="AMD tuning hint: accepted on HIP launches and ignored "
                              "(hiprtc chooses occupancy); refused on CUDA, as Triton's "
                              "CUDA backend refuses it"),
    Option("matrix_instr_nonkdim", 0, _hip_hint_problem("matrix_instr_nonkdim"), launch=True,
           in_key=False, hip_hint=True,
           doc="AMD tuning hint (MFMA shape): accepted on HIP and ignored; refused on CUDA"),
    Option("kpack", 1, _hip_hint_problem("kpack"), launch=True, in_key=False, hip_hint=True,
           doc="AMD tuning hint (MFMA k packing): accepted on HIP and ignored; refused on "
               "CUDA"),
    Option("target", "cuda", _target_problem, launch=False, in_key=True,
           doc="'cuda' or 'hip' (a launch takes the arrays' device's)"),
    Option("line_directives", False, lambda v: None, launch=False, in_key=True,
           doc="#line directives back to the .py file (the runtime always compiles with "
               "them, so compiler errors and profilers point at the user's lines)"),
)}

# --- defaults from the environment -----------------------------------------------------------

# The environment variables that give an option its default where a compile does not name
# the option, read at each compile (so that a program may set one between launches), the
# first one set deciding: tilecc's own spelling, then those the compatibility mode adds
# (Triton's TRITON_DEFAULT_FP_FUSION, `compat.install()`).
ENVIRONMENT_DEFAULTS: dict[str, list[str]] = {"enable_fp_fusion": ["TILECC_DEFAULT_FP_FUSION"]}

# the values Triton's environment switches read as true (its `getenv_bool`: compared
# lower-cased, unstripped); any other value set, the empty one included, is false
ENV_TRUE = ("1", "true", "on", "y", "yes")


def env_switch(name: str) -> bool | None:
    """An on/off environment variable read as Triton reads its own; None where unset."""
    value = os.environ.get(name)
    return None if value is None else value.lower() in ENV_TRUE


def default_of(name: str) -> Any:
    """The default of option `name`: its first environment variable that is set
    (`ENVIRONMENT_DEFAULTS`), else the table's."""
    for variable in ENVIRONMENT_DEFAULTS.get(name, ()):
        value = env_switch(variable)
        if value is not None:
            return value
    return OPTIONS[name].default


@dataclass(frozen=True)
class CompileOptions:
    """The options of one compile, checked and resolved: `compiler.resolve_options` makes
    them from what a caller gives (the kernel's own `debug` included)."""

    num_warps: int = DEFAULT_NUM_WARPS
    num_stages: int = DEFAULT_NUM_STAGES
    debug: bool = False
    arch: str | None = None  # None: the target's default (a launch gives the device's)
    line_directives: bool = False
    maxnreg: int | None = None  # registers per thread (None: the compiler's choice)
    enable_fp_fusion: bool = True
    # TMA copies of descriptors the kernel makes from its arguments, whose strides the
    # launch checks (no user option: a launch whose strides fail builds without them)
    made_descriptor_tma: bool = True
    # descriptor stores written by the copy engine through a tile of their own (sm_90); a
    # build whose shared memory would not fit with that tile is made without (no user
    # option: the same inputs always decide it alike, so it is not in cache keys)
    tma_stores: bool = True
    # the loads a product's operands are computed from, read ahead by its loop's pipeline
    # (passes.pipeline.prologue_loads); a build whose shared memory would not fit with
    # their stages is made without (decided alike every time: not in cache keys)
    prologue_reads: bool = True
    # products of a pipelined body whose wait a later product's does (passes.settle.
    # _deferred); a build where ptxas serializes the warpgroup products for it is made
    # without (decided alike every time: not in cache keys)
    deferred_products: bool = True

    def native_flags(self, target) -> list[str]:
        """The native compiler's flags these options ask for (beyond the runtime's own) on
        `target` (a CompileTarget, a target row or its name)."""
        row = _row(target)
        flags = []
        if self.maxnreg is not None:
            if row.register_limit_flag is None:
                raise ValueError("maxnreg is not supported by tilecc on HIP: hiprtc has no "
                                 "per-kernel register limit option (it is a CUDA option)")
            flags.append(row.register_limit_flag.format(legal_maxnreg(self.maxnreg)))
        if not self.enable_fp_fusion:
            flags.append(row.no_contract_flag)
        return flags


def _row(target):
    """The target's facts: a CompileTarget or a row as it is, a name looked up."""
    from tilecc.transpiler.target import CompileTarget, Target, get_target

    return target if isinstance(target, (CompileTarget, Target)) else get_target(target)


# Triton's compile and launch options that tilecc does not take: naming one at a launch
# is a "not supported by tilecc" error rather than an unknown argument.
TRITON_ONLY_OPTIONS = frozenset({
    "cluster_dims", "ptx_version", "ptx_options", "ir_override",
    "launch_pdl", "sanitize_overflow", "max_num_imprecise_acc_default",
    "default_dot_input_precision", "allowed_dot_input_precisions", "supported_fp8_dtypes",
    "deprecated_fp8_dot_operand_dtypes", "backend_name", "instrumentation_mode", "warp_size",
    "schedule_hint",
})


# `extern_libs` (Triton links these bitcode files into the kernel): the device libraries
# behind `tl.extra.libdevice`, which tilecc's source reaches through the target's own math
# library instead; a launch that names only these is accepted, their paths unread.
STANDARD_EXTERN_LIBS = frozenset({"libdevice", "ocml", "ockl"})


# What a launch takes besides the kernel's arguments, in the order of the warm keys
# (`launch/args.launch_key`) and of the generated warm launch's parameters; and the AMD
# hints it takes besides (`hip_hint`: the careful path, no warm key).
LAUNCH_OPTIONS = tuple(name for name, o in OPTIONS.items() if o.launch and not o.hip_hint)
HIP_HINTS = frozenset(name for name, o in OPTIONS.items() if o.hip_hint)


def off_target_problem(given, backend: str) -> str | None:
    """Why launch options among `given` are refused on `backend` (None: none is), as its
    target row says: AMD's tuning hints where the target takes none (Triton's CUDA backend
    refuses them too), a cooperative launch where the target has none."""
    row = _row(backend)
    named = sorted(HIP_HINTS.intersection(given))
    if named and not row.amd_tuning_hints:
        return (f"{', '.join(named)}: AMD (HIP) tuning hints, not taken by a {row.name} "
                f"launch (Triton's CUDA backend refuses them too); leave them out on "
                f"{row.vendor} GPUs")
    if given.get("launch_cooperative_grid") and not row.cooperative_launch:
        with_it = ", ".join(t.name.upper() for t in _rows() if t.cooperative_launch)
        return (f"launch_cooperative_grid=True is not supported by tilecc on "
                f"{row.name.upper()} (it launches through {row.launch_call}); a cooperative "
                f"launch is tilecc's on {with_it} only")
    return None


def _rows():
    from tilecc.transpiler.target import TARGETS

    return TARGETS.values()


def compile_key_options(num_warps: int, num_stages: int | None, debug: bool,
                        target, native_flags: list[str] = (),
                        made_descriptor_tma: bool = True) -> dict[str, Any]:
    """The options part of a compiled kernel's cache key (`cache.kernel_key`): the options
    that enter keys, as the runtime compiles (with #line directives; -lineinfo on CUDA),
    the native flags `CompileOptions.native_flags` adds (maxnreg, enable_fp_fusion), and
    a build without TMA copies of made descriptors (only then: other keys stay as were)."""
    out = {"num_warps": num_warps, "num_stages": num_stages, "debug": debug,
           "line_directives": True,
           "options": list(_row(target).line_info_flags) + list(native_flags)}
    if not made_descriptor_tma:
        out["made_descriptor_tma"] = False
    return out


# --- architectures --------------------------------------------------------------------------

_ARCH = {"cuda": (re.compile(r"sm_\d{2,3}[af]?"), "sm_80, sm_90, sm_90a, sm_100, ..."),
         "hip": (re.compile(r"gfx[0-9a-f]{3,4}(:[a-z0-9-]+[+-])*"), "gfx90a, gfx942, gfx1100, ...")}


def arch_problem(target: str, arch: str | None, flag: str = "--arch",
                 use_target: str = "--target {}") -> str | None:
    """What is wrong with `arch` for `target` (None: nothing), as one line that lists valid
    ones.  `flag` and `use_target` spell the option as the caller takes it (the command
    line's `--arch`, the Python API's `arch`)."""
    if arch is None:
        return None
    pattern, examples = _ARCH[target]
    if not isinstance(arch, str) or not pattern.fullmatch(arch):
        other = [t for t, (p, _) in _ARCH.items()
                 if t != target and isinstance(arch, str) and p.fullmatch(arch)]
        hint = (f" ({arch} is a {other[0]} architecture: use {use_target.format(other[0])})"
                if other else "")
        return (f"{flag} {arch!r} is not a {target} architecture{hint}; give one such as "
                f"{examples}")
    compiled_for = _COMPILED_FOR.get(target)
    supported = compiled_for() if compiled_for else []
    if supported and _row(target).arch_number(arch) not in supported:
        return (f"{flag} {arch}: this NVRTC does not compile for it; it compiles for "
                f"{', '.join(f'sm_{n}' for n in supported)}")
    return None


def launch_arch(backend: str, arch: str, device_arch: str | None) -> str:
    """The architecture a launch's `arch=` compiles for, on a device of `device_arch`
    (None: no device, as a warm-up without a GPU): Triton's CUDA spelling taken too (sm80
    → sm_80).  A ValueError where the binary would not load on the device
    (`CompileTarget.loads_on`)."""
    from tilecc.transpiler.target import resolve_target

    row = _row(backend)
    arch = row.arch_spelled(arch)
    problem = arch_problem(backend, arch, "arch", "a {} device")
    if problem:
        raise ValueError(problem)
    if device_arch is None or resolve_target(row, arch).loads_on(device_arch):
        return arch
    instead = "or an earlier one of its family (same major version), " \
        if row.arch_specific_suffix else ""
    raise ValueError(f"arch={arch}: its binary does not load on this device ({device_arch}); "
                     f"give the device's architecture {instead}or leave arch out")


def _nvrtc_archs() -> list[int]:
    """The architectures (numbers: 90 for sm_90) the NVRTC tilecc uses compiles for ([]
    where it cannot say)."""
    try:
        from tilecc.runtime.native_compile import _nvrtc

        return [int(n) for n in _nvrtc().getSupportedArchs()]
    except Exception:  # no NVRTC, or one without the call: the compile will tell
        return []


# the architectures a target's compiler says it compiles for (hiprtc cannot say)
_COMPILED_FOR = {"cuda": lambda: _nvrtc_archs()}
