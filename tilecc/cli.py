"""`tilecc` command line.

    tilecc emit FILE.py:KERNEL --signature SIG [--target cuda|hip] [--arch ARCH]
                [--num-warps N] [--num-stages N] [--debug] [--line-directives] [-o OUT]
    tilecc compile FILE.py:KERNEL --signature SIG [same options as emit] -o OUT
    tilecc cache list|clear [--kind kernels|autotune|templates]   ($TILECC_CACHE_DIR, ~/.cache/tilecc)
    tilecc export FILE.py:KERNEL [...] --signature SIG [...] [--target cuda|hip] [--grid EXPRS]
                  [--num-warps N] -o DIR     (a C++ header; see docs/export.md)
    tilecc --version | --include-dir   (the folder of tilecc.h, for `nvcc -I`: get_include())

Kernel files written against `triton.language` load even where Triton is not installed:
`triton`, `triton.language` and `triton.language.math` then resolve to tilecc's own.

A failure is one line on stderr, `tilecc: error: ...`, naming the file and what to do (a
kernel's compile error also shows its line with a caret), and exit status 1; the input is
checked (`cli_input`) before anything is compiled; options are checked by the options
table (`runtime/options.py`), so their messages are the Python API's.  A file that `emit`
writes starts with the command that regenerates it.  An internal error says so in one line
too; `TILECC_TRACEBACK=1` shows its traceback.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Sequence

from tilecc.cli_input import (UsageError, check_arch, check_output_file, check_signature,
                              load_kernel, write_output)
from tilecc.errors import CompilationError

__all__ = ["main", "load_kernel"]


def _add_cache_parser(sub) -> None:
    from tilecc.runtime.cache import KINDS

    cache = sub.add_parser("cache", help="list or clear the disk cache")
    cache.add_argument("action", choices=("list", "clear"))
    cache.add_argument("--kind", choices=KINDS, help="only these entries")


def _cache_command(args) -> int:
    from tilecc.runtime import cache

    if args.action == "clear":
        print(f"removed {cache.clear(args.kind)} entries from {cache.cache_dir()}")
        return 0
    rows = cache.entries(args.kind)
    for kind, path, size, meta in rows:
        if meta is None:
            print(f"{kind:<9} {os.path.basename(path)[:16]}  {size:>8} B  "
                  f"({cache.problem(path) or 'replaced while listing'}: rebuilt on use)")
        elif kind == "kernels":
            print(f"{kind:<9} {os.path.basename(path)[:16]}  {size:>8} B  {meta['target']} "
                  f"{meta['arch']:<7} {meta['kernel']} num_warps={meta['num_warps']} "
                  f"[{'; '.join(meta['specialization'])}]")
        elif kind == "templates":
            print(f"{kind:<9} {os.path.basename(path)[:16]}  {size:>8} B  {meta['template']}")
        else:
            print(f"{kind:<9} {os.path.basename(path)[:16]}  {size:>8} B  {meta['config']}")
    print(f"{len(rows)} entries, {sum(r[2] for r in rows)} bytes in {cache.cache_dir()}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; every failure is one `tilecc: error: ...` line on stderr (a kernel's
    CompilationError also shows its line and a caret) and a nonzero exit status."""
    try:
        return _main(argv)
    except (UsageError, CompilationError) as e:
        print(f"tilecc: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tilecc: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `tilecc emit ... | head`: the reader has all it wanted
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # a stdout without a descriptor (a test's capture)
            pass
        return 1
    except Exception as e:
        from tilecc.export.variants import ExportError  # imported by now if it was raised

        if isinstance(e, ExportError):
            print(f"tilecc: error: {e}", file=sys.stderr)
            return 1
        if os.environ.get("TILECC_TRACEBACK") == "1":
            raise
        message = (str(e).strip().splitlines() or [""])[0]
        print(f"tilecc: internal error: {type(e).__name__}: {message} (a bug in tilecc: rerun "
              "with TILECC_TRACEBACK=1 for the traceback and report it)", file=sys.stderr)
        return 70


class _ArgumentParser(argparse.ArgumentParser):
    """argparse's, with its errors in tilecc's one-line form (the usage is --help's)."""

    def error(self, message: str):
        self.exit(2, f"tilecc: error: {message} (`{self.prog} --help` shows the usage)\n")


def _given(**options) -> dict:
    """The options given on the command line (those left at their defaults: none)."""
    from tilecc.runtime.options import OPTIONS

    return {k: v for k, v in options.items() if v != OPTIONS[k].default}


def _option(name: str, convert=int):
    """An argparse type that checks a value as the options table does (its message)."""
    from tilecc.runtime.options import OPTIONS

    def check(text: str):
        try:
            value = convert(text)
        except ValueError:
            value = text
        try:
            return OPTIONS[name].check(value)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    check.__name__ = name  # argparse names the type in its messages
    return check


_num_warps = _option("num_warps")


class _PrintAndExit(argparse.Action):
    """`--version` and `--include-dir`: print one line, exit (no command needed)."""

    def __init__(self, option_strings, dest, text, help=None):
        super().__init__(option_strings, dest, nargs=0, help=help)
        self.text = text

    def __call__(self, parser, namespace, values, option_string=None):
        print(self.text())
        parser.exit()


def _include_dir() -> str:
    import tilecc

    return tilecc.get_include()


def _version() -> str:
    from tilecc.version import __version__

    return f"tilecc {__version__}"


def regenerate_comment(argv: Sequence[str]) -> str:
    """The header line of a file `tilecc emit` wrote: the command that writes it again, from
    the folder it was run in (shell-quoted, so that it can be pasted)."""
    prog = "tilecc" if os.path.basename(sys.argv[0]) == "tilecc" else "python -m tilecc"
    command = f"cd {shlex.quote(os.getcwd())} && {prog} {shlex.join(argv)}"
    if "\n" in command or "\r" in command:  # would end the comment: C++ after it
        return "// Regenerate: the command has a line break; run it again as it was given\n"
    return f"// Regenerate: {command}\n"


def _with_command(text: str, comment: str) -> str:
    """The comment after the first lines that say what generated the file."""
    mark = "// Edit the Python, not this file.\n"
    at = text.find(mark)
    at = at + len(mark) if at >= 0 else 0
    return text[:at] + comment + text[at:]


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _ArgumentParser(prog="tilecc", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action=_PrintAndExit, text=_version,
                        help="print tilecc's version")
    parser.add_argument("--include-dir", action=_PrintAndExit, text=_include_dir,
                        help="print the folder of tilecc.h, the header emitted sources "
                        "include (for the device compiler's -I)")
    sub = parser.add_subparsers(dest="command", required=True)
    common = _ArgumentParser(add_help=False)
    common.add_argument("kernel", help="FILE.py:KERNEL")
    common.add_argument("--signature", "-s", required=True,
                        help="comma-separated parameter types, e.g. '*fp32:16,*fp32:16,i32,1024'")
    common.add_argument("--target", type=_option("target", str), default="cuda",
                        metavar="{cuda,hip}", help="default: cuda")
    common.add_argument("--arch", help="sm_80, sm_90, sm_90a, gfx90a, ... (default: the "
                        "target's: sm_90, gfx90a)")
    common.add_argument("--num-warps", type=_num_warps, default=4,
                        help="warps per program (default: 4)")
    common.add_argument("--num-stages", type=_option("num_stages"), default=None,
                        help="shared-memory stages of tl.dot's pipelined operands (default: 3)")
    common.add_argument("--debug", action="store_true", help="keep tl.device_assert checks")
    common.add_argument("--maxnreg", type=_option("maxnreg"), default=None,
                        help="at most this many registers per thread (CUDA)")
    common.add_argument("--no-fp-fusion", dest="enable_fp_fusion", action="store_false",
                        help="do not contract a * b + c into fma (enable_fp_fusion=False)")
    emit = sub.add_parser("emit", parents=[common], help="print the generated source")
    emit.add_argument("--line-directives", action="store_true",
                      help="add #line directives pointing back at the .py file")
    emit.add_argument("-o", "--output", help="write to this file instead of stdout (the "
                      "file starts with the command that regenerates it)")
    comp = sub.add_parser("compile", parents=[common],
                          help="compile to a cubin / HIP code object (no GPU needed)")
    comp.add_argument("-o", "--output", required=True)
    from tilecc.export import command as export_command

    export_command.add_parser(sub, _num_warps)
    _add_cache_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "cache":
        return _cache_command(args)
    if args.command == "export":
        return export_command.run(args, load_kernel)

    suffix = ("cu" if args.target == "cuda" else "hip") if args.command == "emit" else \
        ("cubin" if args.target == "cuda" else "hsaco")
    if args.output:
        check_output_file(args.output, example=f"kernel.{suffix}")
    check_arch(args.target, args.arch)
    kernel = load_kernel(args.kernel)
    check_signature(kernel, args.signature)
    if args.command == "emit":
        text = kernel.source(args.signature, target=args.target, arch=args.arch,
                             num_warps=args.num_warps, num_stages=args.num_stages,
                             line_directives=args.line_directives, debug=args.debug,
                             **_given(maxnreg=args.maxnreg))
        if args.output:
            write_output(args.output, _with_command(text, regenerate_comment(argv)))
        else:
            sys.stdout.write(_with_command(text, regenerate_comment(argv)))
    else:
        binary = kernel.compile(args.signature, target=args.target, arch=args.arch,
                                num_warps=args.num_warps, num_stages=args.num_stages,
                                debug=args.debug, **_given(
                                    maxnreg=args.maxnreg,
                                    enable_fp_fusion=args.enable_fp_fusion))
        write_output(args.output, binary.data)
        print(f"wrote {args.output} ({len(binary.data)} bytes, {binary.target} {binary.arch})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
