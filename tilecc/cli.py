"""`tilecc` command line.

    tilecc emit FILE.py:KERNEL --signature SIG [--target cuda|hip] [--num-warps N]
                [--line-directives] [-o OUT]
    tilecc compile FILE.py:KERNEL --signature SIG [--target cuda|hip] [--arch ARCH] -o OUT
    tilecc cache list|clear [--kind kernels|autotune|templates]   ($TILECC_CACHE_DIR, ~/.cache/tilecc)
    tilecc export FILE.py:KERNEL [...] --signature SIG [...] [--target cuda|hip] [--grid EXPRS]
                  [--num-warps N] -o DIR     (a C++ header; see docs/export.md)

Kernel files written against `triton.language` load even where Triton is not installed:
`triton`, `triton.language` and `triton.language.math` then resolve to tilecc's own.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.util
import os
import sys
import types
from typing import Sequence

from tilecc.errors import CompilationError


class _TritonAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `import triton[.language[.math]]` from tilecc when Triton is absent."""

    NAMES = {"triton": "tilecc", "triton.language": "tilecc.language",
             "triton.language.math": "tilecc.language.math"}

    def find_spec(self, fullname, path, target=None):
        if fullname in self.NAMES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        real = importlib.import_module(self.NAMES[spec.name])
        module = types.ModuleType(spec.name)
        module.__dict__.update({k: v for k, v in real.__dict__.items() if not k.startswith("__")})
        if spec.name == "triton":
            module.__path__ = []
        return module

    def exec_module(self, module):
        if module.__name__ == "triton.language":
            module.__path__ = []


def load_kernel(ref: str):
    """`path/to/file.py:kernel_name` → the JITFunction defined there."""
    from tilecc.runtime.jit import JITFunction

    path, sep, name = ref.rpartition(":")
    if not sep or not path.endswith(".py"):
        raise SystemExit(f"tilecc: expected FILE.py:KERNEL, got {ref!r}")
    if not os.path.exists(path):
        raise SystemExit(f"tilecc: no such file: {path}")
    if importlib.util.find_spec("triton") is None:
        sys.meta_path.insert(0, _TritonAlias())
    module_name = "_tilecc_cli_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    obj = getattr(module, name, None)
    if obj is None:
        raise SystemExit(f"tilecc: {path} defines no `{name}`")
    if not isinstance(obj, JITFunction):
        if type(obj).__name__ == "JITFunction" and hasattr(obj, "fn"):  # an installed Triton's
            obj = JITFunction(obj.fn)
        else:
            raise SystemExit(f"tilecc: `{name}` in {path} is not a @jit kernel")
    return obj


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
    parser = argparse.ArgumentParser(prog="tilecc", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("kernel", help="FILE.py:KERNEL")
    common.add_argument("--signature", "-s", required=True,
                        help="comma-separated parameter types, e.g. '*fp32:16,*fp32:16,i32,1024'")
    common.add_argument("--target", choices=("cuda", "hip"), default="cuda")
    common.add_argument("--num-warps", type=int, default=4)
    common.add_argument("--debug", action="store_true", help="keep tl.device_assert checks")
    emit = sub.add_parser("emit", parents=[common], help="print the generated source")
    emit.add_argument("--line-directives", action="store_true",
                      help="add #line directives pointing back at the .py file")
    emit.add_argument("-o", "--output", help="write to this file instead of stdout")
    comp = sub.add_parser("compile", parents=[common],
                          help="compile to a cubin / HIP code object (no GPU needed)")
    comp.add_argument("--arch", help="sm_80, sm_90, gfx90a, ... (default: the target's)")
    comp.add_argument("-o", "--output", required=True)
    from tilecc.export import command as export_command

    export_command.add_parser(sub)
    _add_cache_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "cache":
        return _cache_command(args)
    if args.command == "export":
        return export_command.run(args, load_kernel)

    kernel = load_kernel(args.kernel)
    try:
        if args.command == "emit":
            text = kernel.source(args.signature, target=args.target, num_warps=args.num_warps,
                                 line_directives=args.line_directives, debug=args.debug)
            if args.output:
                with open(args.output, "w") as f:
                    f.write(text)
            else:
                sys.stdout.write(text)
        else:
            binary = kernel.compile(args.signature, target=args.target, arch=args.arch,
                                    num_warps=args.num_warps, debug=args.debug)
            with open(args.output, "wb") as f:
                f.write(binary.data)
            print(f"wrote {args.output} ({len(binary.data)} bytes, {binary.target} {binary.arch})")
    except CompilationError as e:
        print(f"tilecc: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
