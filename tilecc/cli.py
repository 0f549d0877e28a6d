"""`tilecc` command line.

    tilecc emit FILE.py:KERNEL --signature SIG [compile options] [--line-directives] [-o OUT]
    tilecc compile FILE.py:KERNEL --signature SIG [compile options] -o OUT
    tilecc export FILE.py:KERNEL [...] --signature SIG [...] [--grid EXPRS] [compile options]
                  -o DIR     (a C++ header; see docs/export.md)
    tilecc cache list|clear [--kind kernels|autotune|templates]
                  ($TILECC_CACHE_DIR, default ~/.cache/tilecc)
    tilecc --version | --include-dir   (the folder of tilecc.h, for `nvcc -I`: get_include())

The compile options are the same on emit, compile and export (`cli_input.
add_compile_options`): --target, --arch, --num-warps, --num-stages, --maxnreg,
--no-fp-fusion, --debug.  Every help ends in examples that run from a checkout.

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

from tilecc.cli_input import (UsageError, add_compile_options, check_output_file,
                              check_signature, compile_options, load_kernel, write_output)
from tilecc.errors import CompilationError

__all__ = ["main", "load_kernel"]


def _add_cache_parser(sub) -> None:
    from tilecc.runtime.cache import KINDS

    cache = sub.add_parser("cache", help="list or clear the disk cache",
                           description="List or clear the disk cache of compiled kernels, "
                           "autotuning results and templates ($TILECC_CACHE_DIR, default "
                           "~/.cache/tilecc).", epilog=CACHE_EXAMPLES,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
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


# --help's examples: commands that run from a checkout as written (tests run each)
EXAMPLES = """\
examples:
  tilecc emit examples/vector_add.py:add_kernel -s '*fp32:16,*fp32:16,*fp32:16,i32:16,1024'
  tilecc compile examples/vector_add.py:add_kernel -s '*fp32,*fp32,*fp32,i32,1024' \\
      -o add.cubin
  tilecc export examples/vector_add.py:add_kernel -s '*fp32,*fp32,*fp32,i32,1024' -o gen
  tilecc cache list

A signature gives each parameter in order: *fp32 (a pointer), *fp32:16 (16-byte
aligned), i32 / i64 / fp32 (scalars), i32:16 (a multiple of 16), i32:8 (a multiple of
8, not of 16), 1024 (a constexpr's value).  `tilecc COMMAND --help` shows each command's
options and examples; the environment variables tilecc reads are in docs/environment.md.
"""

EMIT_EXAMPLES = """\
examples:
  tilecc emit examples/vector_add.py:add_kernel -s '*fp32:16,*fp32:16,*fp32:16,i32:16,1024'
  tilecc emit examples/vector_add.py:add_kernel -s '*fp32,*fp32,*fp32,i32,1024' \\
      --target hip -o add.hip
  tilecc emit examples/softmax.py:softmax_kernel -s '*fp32,*fp32,i32,i32,i32,1024' \\
      --num-warps 8 --line-directives
"""

COMPILE_EXAMPLES = """\
examples:
  tilecc compile examples/vector_add.py:add_kernel -s '*fp32,*fp32,*fp32,i32,1024' \\
      -o add.cubin
  tilecc compile examples/vector_add.py:add_kernel -s '*fp32,*fp32,*fp32,i32,1024' \\
      --arch sm_80 --maxnreg 64 -o add_sm80.cubin
  tilecc compile examples/vector_add.py:add_kernel -s '*fp32,*fp32,*fp32,i32,1024' \\
      --target hip -o add.hsaco
"""

CACHE_EXAMPLES = """\
examples:
  tilecc cache list
  tilecc cache list --kind autotune
  tilecc cache clear --kind templates
"""


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _ArgumentParser(prog="tilecc", description=__doc__.split("\n\n")[0],
                             epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    add_compile_options(common, "the target's: sm_90, gfx90a")
    emit = sub.add_parser("emit", parents=[common], help="print the generated source",
                          description="Print (or write) one kernel's CUDA or HIP source for "
                          "one signature; no GPU needed.", epilog=EMIT_EXAMPLES,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    emit.add_argument("--line-directives", action="store_true",
                      help="add #line directives pointing back at the .py file")
    emit.add_argument("-o", "--output", help="write to this file instead of stdout (the "
                      "file starts with the command that regenerates it)")
    comp = sub.add_parser("compile", parents=[common],
                          help="compile to a cubin / HIP code object (no GPU needed)",
                          description="Compile one kernel for one signature to a cubin "
                          "(NVRTC) or a HIP code object (hiprtc); no GPU needed.",
                          epilog=COMPILE_EXAMPLES,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    comp.add_argument("-o", "--output", required=True)
    from tilecc.export import command as export_command

    export_command.add_parser(sub)
    _add_cache_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "cache":
        return _cache_command(args)
    if args.command == "export":
        return export_command.run(args, load_kernel)

    if args.output:
        from tilecc.transpiler.target import get_target

        row = get_target(args.target)
        suffix = row.source_suffix if args.command == "emit" else row.binary_suffix
        check_output_file(args.output, example=f"kernel{suffix}")
    options = compile_options(args)
    kernel = load_kernel(args.kernel)
    check_signature(kernel, args.signature)
    if args.command == "emit":
        text = kernel.source(args.signature, target=args.target,
                             line_directives=args.line_directives, **options)
        if args.output:
            write_output(args.output, _with_command(text, regenerate_comment(argv)))
        else:
            sys.stdout.write(_with_command(text, regenerate_comment(argv)))
    else:
        binary = kernel.compile(args.signature, target=args.target, **options)
        write_output(args.output, binary.data)
        print(f"wrote {args.output} ({len(binary.data)} bytes, {binary.target} {binary.arch})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
