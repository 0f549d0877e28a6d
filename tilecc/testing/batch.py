"""Compile many generated kernels in one native compiler run, for test suites that check
that hundreds of kernels compile: NVRTC's and hiprtc's start and the device header's
parse cost more than a small kernel's own code, so a batch of dozens costs little more
than one kernel.

    compile_batch(sources, "hip", "gfx90a")        # one translation unit; raises if any fails
    failures(named_sources, "cuda", "sm_90")       # {} if they compile, else which fail

Each source sits in a namespace of its own, its kernel given C++ linkage there (helpers and
specializations of one kernel do not collide), and the device header is included once.
"""

from __future__ import annotations

from typing import Hashable, Mapping, Sequence

from tilecc.runtime.binary import Binary
from tilecc.transpiler.target import resolve_target

_INCLUDE = '#include "tilecc.h"'
_C_LINKAGE = 'extern "C" '


def compile_batch(texts: Sequence[str], target: str, arch: str,
                  options: Sequence[str] = ()) -> Binary:
    """The sources of generated kernels compiled together, as one translation unit.
    Raises NativeCompileError (with the compiler's log) if any of them fails."""
    from tilecc.runtime import native_compile as NC
    from tilecc.transpiler.render import INCLUDE_DIR

    # C++ linkage: the same kernel in several specializations has one `extern "C"` name
    parts = [_INCLUDE] + [f"namespace program{i} {{\n"
                          f"{t.replace(_INCLUDE, '').replace(_C_LINKAGE, '')}\n}}"
                          for i, t in enumerate(texts)]
    source = "\n".join(parts)
    suffix = resolve_target(target, arch).source_suffix
    return NC.compile_for(target, source, arch=arch, options=[f"-I{INCLUDE_DIR}", *options],
                          filename=f"batch{suffix}")


def native_arch(text: str, target: str, arch: str) -> str:
    """The architecture a generated source is compiled for: the arch-specific one (sm_90a)
    where the source uses wgmma, as the runtime compiles it."""
    return resolve_target(target, arch).binary_arch("tc::wgmma_" in text)


def failures(texts: Mapping[Hashable, str], target: str, arch: str,
             options: Sequence[str] = ()) -> dict[Hashable, Exception]:
    """{} when the sources compile together (one run per architecture, see `native_arch`);
    else each one that fails on its own, with its error.  A failing batch is halved until
    the culprits stand alone: a few runs per culprit, not one per source."""
    batches: dict[str, dict[Hashable, str]] = {}
    for key, text in texts.items():
        batches.setdefault(native_arch(text, target, arch), {})[key] = text
    failed: dict[Hashable, Exception] = {}
    for native, batch in batches.items():
        _find_failing(list(batch.items()), target, native, options, failed, known_bad=False)
    return failed


def _find_failing(batch: list[tuple[Hashable, str]], target: str, arch: str,
                  options: Sequence[str], failed: dict, known_bad: bool) -> None:
    """Adds to `failed` the sources of `batch` that fail alone; `known_bad`: the batch is
    known to fail together (its compile is skipped)."""
    if not known_bad or len(batch) == 1:
        try:
            compile_batch([text for _, text in batch], target, arch, options)
            return
        except Exception as e:
            if len(batch) == 1:
                failed[batch[0][0]] = e
                return
    half = len(batch) // 2
    first, second = batch[:half], batch[half:]
    before = len(failed)
    _find_failing(first, target, arch, options, failed, known_bad=False)
    # the second half fails for certain only if the first compiled and the whole did not
    _find_failing(second, target, arch, options, failed,
                  known_bad=len(failed) == before)
