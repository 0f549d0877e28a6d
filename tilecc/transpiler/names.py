"""How a Python identifier becomes a C++ identifier in generated code.

Python allows names that C++ does not (`this`, `xor`, `αβ`) and names that the code around
the kernel already uses: CUDA / HIP built-ins (`threadIdx`, `printf`, `float4`), math
functions (`sinf`, `pow`: a clash for a kernel's `extern "C"` symbol), macros (`NULL`,
`INFINITY`), tilecc's own header (`tc`, `TC_*`) and the names tilecc generates in a kernel
(`r`, `acc`, `chunk`, `Blocked0`...).  The rule is one, for locals, parameters, kernel
symbols and exported launchers alike:

* an ordinary name is kept as it is (`x`, `offsets`, `mask`);
* a name in `reserved()` (or a generated look-alike such as `acc3`) gets a trailing `_`
  (`int` -> `int_`, `tc` -> `tc_`);
* characters C++ cannot take are spelled out: a non-ASCII character as `u` and its code
  point (`αβ` -> `u03b1_u03b2`, `xé` -> `x_u00e9`); a double underscore becomes one
  (reserved in C++); a leading `_` before an uppercase letter, and any leading `_` of a
  kernel symbol (reserved at global scope), moves behind the name (`_Tmp` -> `Tmp_`);
* `Names.unique` then makes every name of a kernel distinct (`x`, `x_1`...), so two
  Python names that spell alike in C++ (`int` and `int_`) never meet.

The Python spelling stays in the `//` comments above each statement, and the kernel's
header comment lists every name that changed.
"""

from __future__ import annotations

import os
import re
import unicodedata
from functools import lru_cache

# C++20 keywords and alternative tokens, and the C++23/TM/contextual ones a compiler may
# treat specially
CXX_KEYWORDS = frozenset("""
alignas alignof and and_eq asm atomic_cancel atomic_commit atomic_noexcept auto bitand bitor
bool break case catch char char8_t char16_t char32_t class co_await co_return co_yield compl
concept const consteval constexpr constinit const_cast continue decltype default delete do
double dynamic_cast else enum explicit export extern false final float for friend goto if
import inline int long module mutable namespace new noexcept not not_eq nullptr operator or
or_eq override private protected public reflexpr register reinterpret_cast requires return
short signed sizeof static static_assert static_cast struct switch synchronized template this
thread_local throw transaction_safe transaction_safe_dynamic true try typedef typeid typename
union unsigned using virtual void volatile wchar_t while xor xor_eq
""".split())

# CUDA / HIP names a kernel body or the launchers spell, and common host names, whether or
# not a given compiler version declares them (the measured list is in reserved_names.txt)
PLATFORM = frozenset("""
main std cuda hip nvcuda cooperative_groups cub thrust rocprim half half2 bfloat16 dim3 size_t
ptrdiff_t uint ushort ulong uchar int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t
uint64_t uintptr_t intptr_t NULL EOF INFINITY NAN HUGE_VAL HUGE_VALF M_PI M_E assert errno
printf malloc free memcpy memset abort exit threadIdx blockIdx blockDim gridDim warpSize
hipLaunchKernelGGL HIP_KERNEL_NAME HIP_DYNAMIC_SHARED linux unix i386
""".split())

# what tilecc's header declares: the namespace and the macro prefix
TILECC_HEADER = frozenset({"tc", "tilecc"})

# names generated code declares itself in scopes that read user values: loop indices over
# registers and vectors, shared-memory pools and views, reduction and scan temporaries
GENERATED = frozenset("""
r v k o j chunk acc lane_mask warp line step first buffer combine combine_in_order result smem
dynamic_smem acc_other lane_pos warp_pos lane_prev run_total run_carry run_prefix has_prefix
warp_totals warps_through warps_before runs_before before entry line_start place own_entry
earlier
""".split())

# names tl.dot's code declares in blocks where it also reads user values (pipelined copies,
# accumulators): reserved in kernels that have a tl.dot
DOT_GENERATED = frozenset("""
row col g q i h s t nc kr wm wn warpgroup packed kk mi ni a_frag b_frag a_base b_base a_desc
b_desc a_step b_step in_bounds a_row b_col a_k b_k kc box
""".split())

# generated names with a number or a role suffix: acc0, partial1, line0, out0, acc0_other,
# the layout structs Blocked0 / Sliced1, descriptors b_desc0, and the header's TC_ macros
# (which never end in `_`: TC_X_ is free)
GENERATED_PATTERN = re.compile(
    r"(acc|partial|line|out|lane_prev|run_total|run_carry|run_prefix|warp_totals|warps_through"
    r"|warps_before|runs_before|before|entry)\d+(_other)?"
    r"|[ab]_(desc|frag)\d+(_0)?|(Blocked|Sliced)\d+|(TC|TILECC)_\w*[A-Za-z0-9]")


@lru_cache(maxsize=None)
def reserved() -> frozenset[str]:
    """Every name a user identifier must not be emitted as (see the module docstring)."""
    path = os.path.join(os.path.dirname(__file__), "reserved_names.txt")
    with open(path, encoding="ascii") as f:
        measured = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    return frozenset(measured) | CXX_KEYWORDS | PLATFORM | TILECC_HEADER | GENERATED


def is_reserved(name: str) -> bool:
    return name in reserved() or GENERATED_PATTERN.fullmatch(name) is not None


def _spell_ascii(name: str) -> str:
    """ASCII letters, digits and `_` kept; anything else as `u` + code point, set off by
    `_` from its neighbours (`αβ` -> `u03b1_u03b2`)."""
    parts: list[str] = []
    run = ""
    for ch in name:
        if ch.isascii() and (ch.isalnum() or ch == "_"):
            run += ch
            continue
        if run:
            parts.append(run)
            run = ""
        parts.append(f"u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"U{ord(ch):08x}")
    if run:
        parts.append(run)
    return "_".join(parts)


def c_identifier(name: str, *, global_scope: bool = False) -> str:
    """The readable C++ spelling of Python identifier `name`: valid and never reserved,
    but not unique (see `Names.unique`).  `global_scope`: for a kernel's symbol, where any
    leading underscore is reserved."""
    text = _spell_ascii(unicodedata.normalize("NFKC", name)) if not name.isascii() else name
    text = re.sub(r"__+", "_", text)
    renamed = False
    if text.startswith("_") and (global_scope or len(text) == 1 or not
                                 (text[1].islower() or text[1].isdigit())):
        text, renamed = text.lstrip("_"), True
    if not text:  # `_` alone, or underscores only
        return "u_"
    if text[0].isdigit():
        text, renamed = "u" + text, True
    if (renamed and not text.endswith("_")) or is_reserved(text):
        text += "_" if not text.endswith("_") else "u"  # never a double underscore
    return text


def kernel_symbol(name: str) -> str:
    """The `extern "C"` symbol of kernel `name` (what cuModuleGetFunction and
    hipModuleGetFunction look up, and what an exported launcher is called)."""
    return c_identifier(name, global_scope=True)


def unique(base: str, taken: set[str], add: bool = True) -> str:
    """`base` (a valid C++ identifier, or one joined from such: a double underscore is
    made single), or `base_1`, `base_2`... where that is taken (or reserved); the result is
    added to `taken` unless `add` is false (a name for one block that re-declares it)."""
    base = re.sub(r"__+", "_", base)
    sep = "" if base.endswith("_") else "_"
    candidate, n = base, 0
    while candidate in taken or (n and is_reserved(candidate)):
        n += 1
        candidate = f"{base}{sep}{n}"
    if add:
        taken.add(candidate)
    return candidate
