"""`tilecc export`: the command-line face of `tilecc.export.export`.

    tilecc export FILE.py:KERNEL [FILE.py:KERNEL ...] --target cuda|hip
                  --signature SIG [--signature SIG ...] [--grid EXPRS]
                  [--grid-arg NAME ...] [--name NAME] [compile options] -o DIR

The compile options are emit's and compile's (`cli_input.add_compile_options`), written
into the kernels' source.

With several kernels, `--signature KERNEL=SIG`, `--grid KERNEL=EXPRS` and
`--grid-arg KERNEL=NAME` address one of them; a plain one applies to every kernel given.
"""

from __future__ import annotations

import argparse
import re
from typing import Callable

from tilecc.cli_input import (UsageError, add_compile_options, check_output_folder,
                              check_signature, compile_options)

_ADDRESSED = re.compile(r"^\s*([A-Za-z_]\w*)\s*=(?!=)(.*)$")


EXAMPLES = """\
examples:
  tilecc export examples/vector_add.py:add_kernel -s '*fp32,*fp32,*fp32,i32,1024' -o gen
  tilecc export examples/vector_add.py:add_kernel -s '*fp32:16,*fp32:16,*fp32:16,i32:16,1024' \\
      -s '*fp32,*fp32,*fp32,i32,1024' --target hip -o gen
  tilecc export examples/softmax.py:softmax_kernel -s '*fp32,*fp32,i32,i32,i32,1024' \\
      --grid-arg n_rows --grid 'n_rows,1,1' --num-warps 8 -o gen
"""


def add_parser(sub) -> None:
    p = sub.add_parser(
        "export", help="write one self-contained C++ header with the kernels and typed "
        "host launchers (NAME.cuh / NAME.hip.hpp)",
        description="Write one header with every requested specialization of the kernels, "
        "the device library they use, a typed launcher per kernel (namespace tilecc::NAME) "
        "and extern \"C\" wrappers.  See docs/export.md.", epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kernels", nargs="+", metavar="FILE.py:KERNEL")
    p.add_argument("--signature", "-s", action="append", required=True,
                   help="AOT signature, e.g. '*fp32:16,*fp32:16,*fp32:16,i32,1024'; repeat "
                   "for more specializations (the launcher picks at run time); "
                   "KERNEL=SIG for one kernel of several")
    p.add_argument("--grid", action="append", default=[],
                   help="launch grid: up to three C expressions over the parameter names, "
                   "e.g. '(n + 1023) / 1024,1,1' (cdiv, min, max available); KERNEL=EXPRS "
                   "for one kernel of several.  Default: derived where the kernel is plain "
                   "one-dimensional (one program per block of its one size argument)")
    p.add_argument("--grid-arg", action="append", default=[], metavar="NAME",
                   help="an extra int argument of the launcher (after the kernel's own) "
                   "that only --grid reads, e.g. --grid-arg n_rows --grid 'n_rows,1,1' for "
                   "one program per row of a kernel without a row count; repeatable; "
                   "KERNEL=NAME for one kernel of several")
    p.add_argument("--name", help="header name (default: the first kernel's file name)")
    p.add_argument("-o", "--output-dir", required=True, help="directory to write the header to")
    add_compile_options(p, "sm_80 on CUDA, whose code runs on every GPU from Ampere on; "
                        "gfx90a on HIP")


def _split(values: list[str], names: list[str], what: str, many: bool) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {n: [] for n in names}
    for v in values:
        m = _ADDRESSED.match(v)
        if m and m.group(1) in out:
            out[m.group(1)].append(m.group(2).strip())
        elif m and not any(c in m.group(1) for c in "*:"):
            raise UsageError(f"{what} {v!r} names `{m.group(1)}`, which is not a kernel "
                             f"being exported ({', '.join(names)}): give KERNEL=... with one "
                             "of those")
        else:
            for n in names:
                out[n].append(v.strip())
    if not many:
        for n, vs in out.items():
            if len(vs) > 1:
                raise UsageError(f"more than one {what} for {n}: give one")
    return out


def run(args: argparse.Namespace, load_kernel: Callable) -> int:
    """Check the input (the output folder, the files, signatures and grids), then export.
    Errors are raised (UsageError, ExportError, CompilationError) for `cli.main` to print."""
    from tilecc.export import export
    from tilecc.export.grid import split_grid

    check_output_folder(args.output_dir)
    options = compile_options(args)
    kernels = [load_kernel(ref) for ref in args.kernels]
    names = [k.fn.__name__ for k in kernels]
    if len(set(names)) != len(names):
        raise UsageError(f"two kernels are named {[n for n in names if names.count(n) > 1][0]}: "
                         "export kernels of different names")
    signatures = _split(args.signature, names, "--signature", many=True)
    for k in kernels:
        for sig in signatures[k.fn.__name__]:
            check_signature(k, sig)
    grids = {n: (g[0] if g else None)
             for n, g in _split(args.grid, names, "--grid", many=False).items()}
    for grid in grids.values():
        if grid is not None:
            split_grid(grid)  # its syntax, before anything is built
    grid_args = _split(args.grid_arg, names, "--grid-arg", many=True)
    path = export(kernels, signatures, target=args.target, grid=grids, grid_args=grid_args,
                  name=args.name, out_dir=args.output_dir, **options)
    print(f"wrote {path}")
    return 0
