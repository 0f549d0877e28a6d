"""Run Liger-Kernel's Triton ops, unedited, through tilecc's compatibility mode.

    python -m tilecc.compat scripts/run_liger.py --liger-src PATH/src [--device cuda|cpu]
                                                 [--only rms_norm,rope] [--libdevice-standin]

Liger-Kernel (github.com/linkedin/Liger-Kernel) is a library of Triton kernels for LLM
training: norms, activations, rotary embeddings, losses.  Its source is not part of tilecc;
this driver imports it from `--liger-src` (the directory holding the `liger_kernel`
package).  For every top-level op module of `liger_kernel/ops` it calls the op's
`torch.autograd.Function` forward and backward on small random inputs (several shapes,
non-powers of two among them; float32 and, where the op takes it, bfloat16) and compares
both with a plain-PyTorch reference written here from the op's definition.

Each op's forward and backward are one of
    ok          every case matched the reference
    mismatch    the largest error (and the case) where one did not
    refused     tilecc refused the kernel (its CompilationError, or the compatibility mode's
                ImportError for a part of Triton it lacks): the last line and the place
    error       anything else: the exception and where it was raised (a tilecc bug, unless
                it is this driver's)
    n/a         the op has no Triton kernel on this device (reason given)
One table and the totals are printed; the exit status is 0 whatever the outcomes.

`--device cpu` runs on CPU torch tensors (with TILECC_INTERPRET=1: tilecc's interpreter).
`--libdevice-standin` stands in for `triton.language.extra.libdevice` where tilecc lacks
it (the names Liger imports from it, written with `tl`), to see what lies behind that gap.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import time
import traceback
import types

from liger_cases import OPS, Case, NotApplicable  # noqa: F401 - the ops, inputs, references

# ------------------------------------------------------------------------------------------
# Outcomes


class Timeout(Exception):
    pass


def _where(tb, prefer: str = "") -> str:
    """The innermost frame of a traceback outside the standard library and torch (with
    `prefer`, the innermost one whose file path contains it, if any)."""
    frames = [f for f in traceback.extract_tb(tb)
              if "/torch/" not in f.filename and "/lib/python3" not in f.filename]
    if prefer and any(prefer in f.filename for f in frames):
        frames = [f for f in frames if prefer in f.filename]
    if not frames:
        return ""
    f = frames[-1]
    return f"{_short(f.filename)}:{f.lineno}"


def _short(path: str) -> str:
    for marker in ("liger_kernel/", "tilecc/", "scripts/"):
        i = path.rfind(marker)
        if i >= 0:
            return path[i:]
    return os.path.basename(path)


def _chain(e: BaseException):
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


TRACEBACKS = False  # --traceback: print the whole traceback of every `error`


def describe(e: BaseException) -> str:
    """`refused: ...`, `error: ...` or `n/a: ...` for an exception raised by a case."""
    from tilecc.errors import CompilationError

    for inner in _chain(e):
        if isinstance(inner, CompilationError):
            # the message without the place and caret (which `where` gives); its first
            # line is the headline where there are several (resource reports)
            head = str(inner.message).strip().splitlines()[0] if inner.message else ""
            where = (f" @ {_short(inner.loc.file)}:{inner.loc.line}"
                     if inner.loc is not None else "")
            return f"refused: {head}{where}"
    if isinstance(e, NotApplicable):
        return f"n/a: {e}"
    if isinstance(e, Timeout):
        return "error: timed out"
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    compat = any(words in text for words in ("compatibility mode", "is not part of tilecc",
                                             "is not provided by tilecc"))
    if isinstance(e, (ImportError, AttributeError)) and compat:
        text = text.split(": tilecc's compatibility mode provides")[0].split("; ")[0]
        return f"refused: {type(e).__name__}: {text} @ {_where(e.__traceback__, 'liger_kernel/')}"
    if TRACEBACKS:
        traceback.print_exception(e, file=sys.stderr)
    where = _where(e.__traceback__)
    user = _where(e.__traceback__, "liger_kernel/")
    return (f"error: {type(e).__name__}: {text[:300]} @ {where}"
            + (f" (from {user})" if user and user != where else ""))


# ------------------------------------------------------------------------------------------
# Running a case


def _tensors(out) -> list:
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


def _max_error(got, want, atol: float, rtol: float) -> tuple[bool, float]:
    import torch

    got, want = got.detach().float().cpu(), want.detach().float().cpu()
    if got.shape != want.shape:
        raise AssertionError(f"shape {tuple(got.shape)} != reference {tuple(want.shape)}")
    err = (got - want).abs()
    nan_same = torch.isnan(got) == torch.isnan(want)
    err = torch.where(torch.isnan(want) & torch.isnan(got), torch.zeros_like(err), err)
    ok = bool(nan_same.all()) and bool((err <= atol + rtol * want.abs()).all())
    worst = float(err.max()) if err.numel() else 0.0
    return ok, worst


def _compare(gots: list, wants: list, atol: float, rtol: float, what: str) -> str | None:
    """None if every pair matches, else `max err E (output i)`."""
    for i, (g, w) in enumerate(zip(gots, wants)):
        if g is None or w is None:
            continue
        ok, worst = _max_error(g, w, atol, rtol)
        if not ok:
            return f"{what} {i}: max err {worst:.3g} (atol {atol:g}, rtol {rtol:g})"
    return None


def run_case(case: Case) -> tuple[str, str]:
    """(forward outcome, backward outcome) of one case: 'ok' or a description."""
    import torch

    def copies(upcast: bool):
        out = []
        for i, x in enumerate(case.inputs):
            if isinstance(x, torch.Tensor):
                x = x.detach().clone()
                if upcast and x.is_floating_point():
                    x = x.float()
                if i in case.grad:
                    x.requires_grad_(True)
            out.append(x)
        return out

    mine, theirs = copies(False), copies(True)
    try:
        got = _tensors(case.liger(*mine))
    except Exception as e:  # noqa: BLE001 - every failure is an outcome
        return describe(e), "-"
    want = _tensors(case.ref(*theirs))
    if len([w for w in want if w is not None]) == 0:
        raise AssertionError("reference returned nothing")
    fwd = _compare(got, want, case.atol, case.rtol, "output") or "ok"
    if not case.backward or not case.grad:
        return fwd, "-"
    chosen = range(len(want)) if case.bwd_outputs is None else case.bwd_outputs
    pairs = [(got[i], want[i]) for i in chosen if i < len(got)]
    pairs = [(g, w) for g, w in pairs
             if isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor)
             and g.requires_grad and w.requires_grad and w.is_floating_point()]
    gen = torch.Generator().manual_seed(1)
    ups = [torch.randn(w.shape, generator=gen, dtype=torch.float32) for _, w in pairs]
    try:
        grads_mine = torch.autograd.grad([g for g, _ in pairs],
                                         [mine[i] for i in case.grad],
                                         # copies: Liger's backward may write into them
                                         [u.to(g.dtype).to(g.device).clone() for u, (g, _) in zip(ups, pairs)],
                                         allow_unused=True)
    except Exception as e:  # noqa: BLE001
        return fwd, describe(e)
    grads_ref = torch.autograd.grad([w for _, w in pairs], [theirs[i] for i in case.grad],
                                    [u.to(w.device) for u, (_, w) in zip(ups, pairs)],
                                    allow_unused=True)
    atol = case.atol if case.bwd_atol is None else case.bwd_atol
    rtol = case.rtol if case.bwd_rtol is None else case.bwd_rtol
    bwd = _compare(list(grads_mine), list(grads_ref), atol, rtol, "grad of input") or "ok"
    return fwd, bwd


def run_op(name: str, device: str, seconds: int) -> tuple[str, str, str]:
    """(forward, backward, detail) of an op over all its cases."""
    module, cases = OPS[name]

    def alarm(*_):
        raise Timeout()

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    fwd_bad = bwd_bad = None
    n = 0
    LAUNCHED.clear()
    COMPILED.clear()
    try:
        importlib.import_module(f"liger_kernel.ops.{module}")
        for case in cases(device):
            n += 1
            fwd, bwd = run_case(case)
            if fwd != "ok" and fwd_bad is None:
                fwd_bad = (case.label, fwd)
            if bwd not in ("ok", "-") and bwd_bad is None:
                bwd_bad = (case.label, bwd)
            if fwd_bad and fwd_bad[1].startswith(("refused", "error")):
                break  # the same refusal again for every shape
    except Exception as e:  # noqa: BLE001 - import failures and the cases' own setup
        d = describe(e)
        return d.split(":")[0], "-", d
    finally:
        signal.alarm(0)
    if n == 0:
        return "n/a", "-", "no case"
    fwd = _kind(fwd_bad)
    bwd = "-" if fwd_bad and fwd_bad[1].startswith(("refused", "error")) else _kind(bwd_bad)
    details = []
    if fwd_bad:
        details.append(f"fwd [{fwd_bad[0]}] {_after_kind(fwd_bad[1])}")
    if bwd_bad and bwd != "-":
        details.append(f"bwd [{bwd_bad[0]}] {_after_kind(bwd_bad[1])}")
    said = {_after_kind(bad[1]) for bad in (fwd_bad, bwd_bad) if bad}
    for target in sorted(COMPILED):  # what the interpreter did not already say
        why = compile_outcome(target)[1]
        if why and why.split("] ", 1)[-1] not in said:
            details.append(why)
    ran = f"{n} cases, kernels: {', '.join(sorted(LAUNCHED)) or 'none'}"
    return fwd, bwd, "; ".join(details) or ran


def _kind(bad) -> str:
    if bad is None:
        return "ok"
    return "mismatch" if bad[1].startswith("output") or bad[1].startswith("grad") else bad[1].split(":")[0]


def _after_kind(text: str) -> str:
    for kind in ("refused: ", "error: ", "n/a: "):
        if text.startswith(kind):
            return text[len(kind):]
    return text


# ------------------------------------------------------------------------------------------
# Setup: Liger imported module by module, CPU devices, the libdevice stand-in


def load_liger(src: str, device: str) -> None:
    """Make `liger_kernel.ops.<op>` importable one by one: the package's __init__ imports
    every op, so one op that fails to import would take all the others with it."""
    sys.path.insert(0, src)
    import liger_kernel  # noqa: F401 - an empty package
    import liger_kernel.utils as lu

    ops = types.ModuleType("liger_kernel.ops")
    ops.__path__ = [os.path.join(src, "liger_kernel", "ops")]
    ops.__file__ = os.path.join(ops.__path__[0], "__init__.py")
    sys.modules["liger_kernel.ops"] = ops
    liger_kernel.ops = ops
    lu.infer_device = lambda: device  # Liger picks per-device constants from this
    import torch.distributed.tensor  # noqa: F401 - Liger tests isinstance(x, DTensor)


LAUNCHED: set[str] = set()  # the kernels launched since the last op began
COMPILED: dict[str, dict] = {}  # target -> {specialization: None or the failure}, this op
_COMPILED_EVER: dict[tuple, str | None] = {}  # (target, specialization) -> failure


def count_launches(compile_for: list[str]) -> None:
    """Note each kernel launched through tilecc, so that an `ok` says which kernels ran
    (and an op that ran none shows it); with `compile_for` (on the interpreter), also
    compile each specialization the interpreter runs for those targets (NVRTC, hiprtc:
    no GPU needed), to show what the GPU path would refuse."""
    import tilecc.interpreter as interpreter
    import tilecc.runtime.jit as jit

    def counting(launch, compile_too: bool):
        def counted(jit_fn, *args, **kwargs):
            LAUNCHED.add(jit_fn.fn.__name__)
            if compile_too:
                grid, a, kw = args
                for target in compile_for:
                    compile_specialization(jit_fn, a, kw, target)
            return launch(jit_fn, *args, **kwargs)
        return counted

    jit._launch_run = counting(jit._launch_run, False)  # GPU launches
    interpreter.run_interpreted = counting(interpreter.run_interpreted, bool(compile_for))


def compile_specialization(jit_fn, args, kwargs, target: str) -> None:
    from tilecc.runtime import compiler

    try:
        values, options = jit_fn.bind(args, dict(kwargs))
        specs, _ = jit_fn.specs_for(values)
    except Exception:  # noqa: BLE001 - arguments the launch itself refuses, reported there
        return
    nw, ns = options.get("num_warps", 4), options.get("num_stages")
    key = (target, jit_fn.fn.__name__, repr(specs), nw, ns)
    if key not in _COMPILED_EVER:
        try:
            compiler.compile(jit_fn, specs, target, jit_fn.options(num_warps=nw, num_stages=ns))
            _COMPILED_EVER[key] = None
        except Exception as e:  # noqa: BLE001 - reported in the op's row
            _COMPILED_EVER[key] = describe(e)
    COMPILED.setdefault(target, {})[key] = _COMPILED_EVER[key]


def compile_outcome(target: str) -> tuple[str, str]:
    """(`ok N` / `refused` / `error` / `-`, the first failure) of this op's compiles."""
    done = COMPILED.get(target, {})
    if not done:
        return "-", ""
    bad = [(k, v) for k, v in done.items() if v is not None]
    if not bad:
        return f"ok {len(done)}", ""
    (_, name, *_), why = bad[0]
    return why.split(":")[0], f"{target} [{name}, {len(bad)} of {len(done)}] {_after_kind(why)}"


def libdevice_standin() -> None:
    """`triton.language.extra[.cuda].libdevice` with the functions Liger imports, written
    with tl, where tilecc has no libdevice module yet."""
    try:
        importlib.import_module("triton.language.extra.libdevice")
        return
    except ImportError:
        pass
    import triton
    import triton.language as tl

    @triton.jit
    def tanh(x):
        return 2 * tl.sigmoid(2 * x) - 1

    lib = types.ModuleType("triton.language.extra.libdevice")
    lib.tanh, lib.rsqrt = tanh, tl.rsqrt
    extra = types.ModuleType("triton.language.extra")
    extra.__path__ = []
    extra.libdevice = lib
    cuda = types.ModuleType("triton.language.extra.cuda")
    cuda.__path__ = []
    cuda.libdevice = lib
    for name, mod in [("triton.language.extra", extra), ("triton.language.extra.libdevice", lib),
                      ("triton.language.extra.cuda", cuda),
                      ("triton.language.extra.cuda.libdevice", lib)]:
        sys.modules[name] = mod


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--liger-src", required=True,
                        help="the directory that holds the liger_kernel package")
    parser.add_argument("--device", default=None, choices=["cuda", "cpu"])
    parser.add_argument("--only", default="", help="comma-separated op names")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per op")
    parser.add_argument("--libdevice-standin", action="store_true",
                        help="stand in for triton.language.extra.libdevice if tilecc lacks it")
    parser.add_argument("--compile", default="",
                        help="on the interpreter, also compile each kernel it runs for these "
                             "targets (comma-separated: cuda, hip)")
    parser.add_argument("--traceback", action="store_true",
                        help="print the whole traceback of each `error` (to stderr)")
    args = parser.parse_args(argv)
    global TRACEBACKS
    TRACEBACKS = args.traceback

    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu" and os.environ.get("TILECC_INTERPRET") != "1":
        print("note: --device cpu runs kernels on tilecc's interpreter only with "
              "TILECC_INTERPRET=1", file=sys.stderr)
    if device == "cpu":  # one config per fused-MoE kernel: the interpreter would run them all
        os.environ.setdefault("LIGER_FUSED_MOE_AUTOTUNE", "0")
    load_liger(os.path.abspath(args.liger_src), device)
    targets = [t for t in args.compile.split(",") if t]
    count_launches(targets)
    if args.libdevice_standin:
        libdevice_standin()
    names = [n for n in args.only.split(",") if n] or sorted(OPS)
    unknown = [n for n in names if n not in OPS]
    if unknown:
        print(f"unknown ops: {', '.join(unknown)} (known: {', '.join(sorted(OPS))})")
        return 2
    found = sorted(f[:-3] for f in os.listdir(os.path.join(args.liger_src, "liger_kernel", "ops"))
                   if f.endswith(".py") and f not in ("__init__.py", "utils.py"))
    helpers = {"fused_moe_kernels"}  # fused_moe's kernels, run by its case
    missing = sorted(set(found) - {m for m, _ in OPS.values()} - helpers)
    rows = []
    for name in names:
        t0 = time.time()
        torch.manual_seed(0)
        fwd, bwd, detail = run_op(name, device, args.timeout)
        compiled = [compile_outcome(t)[0] for t in targets]
        rows.append((name, fwd, bwd, *compiled, detail))
        print(f"# {name}: {fwd} / {bwd} ({time.time() - t0:.1f}s)", file=sys.stderr, flush=True)
    print_table(rows, ["forward", "backward"] + [f"{t} compile" for t in targets], device)
    if missing and not args.only:
        print(f"modules without a case: {', '.join(missing)}")
    return 0


def print_table(rows, columns: list[str], device: str) -> None:
    w = max(len(r[0]) for r in rows)
    widths = [max(9, len(c)) for c in columns]
    print(f"Liger-Kernel ops through tilecc ({device}"
          f"{', interpreter' if os.environ.get('TILECC_INTERPRET') == '1' else ''})")
    print(f"{'op':<{w}}  " + " ".join(f"{c:<{cw}}" for c, cw in zip(columns, widths)) + " detail")
    for row in rows:
        cells = row[1:1 + len(columns)]
        print(f"{row[0]:<{w}}  " + " ".join(f"{c:<{cw}}" for c, cw in zip(cells, widths))
              + f" {row[-1]}")
    for i, what in enumerate(columns, start=1):
        counts: dict[str, int] = {}
        for r in rows:
            kind = r[i].split(" ")[0]
            counts[kind] = counts.get(kind, 0) + 1
        print(f"{what}: " + ", ".join(f"{counts[k]} {k}" for k in
                                      ("ok", "mismatch", "refused", "error", "n/a", "-")
                                      if k in counts) + f" (of {len(rows)})")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
