"""Side-by-side SASS counts of one kernel compiled by tilecc and by Triton, without a GPU.

    python scripts/sass_compare.py benchmarks/untuned_kernels.py:l2norm_rows \
        -s '*fp32:16,*fp32:16,i32,fp32,128,16' -w 4 [--arch 90] [--dump DIR]
    python scripts/sass_compare.py --untuned [ARCH]   # every kernel of untuned_kernels.py

The kernel is a tilecc kernel (`@tilecc.jit`, `tl` = tilecc.language); Triton compiles the
same source with `tl` bound to `triton.language` (benchmarks/triton_clone.py), ahead of
time for the target given.  Needs triton (3.x) importable next to tilecc, and cuobjdump
(found on PATH or inside the Triton package).  The signature is tilecc's (`tilecc emit
--help`): `:16` on a pointer or integer becomes Triton's divisibility-by-16 attribute.

Counted per kernel: global loads and stores by width, shared-memory loads and stores,
shuffles, barriers, local-memory traffic (spills), math and tensor-core instructions,
branches, all instructions, the registers per thread and how many programs an SM holds
by them (and by threads), the shared memory a program takes (its `__shared__` arrays and
what the launch gives) and how many programs an SM holds by it; then the same over the
hot loop alone, static counts (both arms of a branch inside it counted).  The hot loop is, of the
address ranges that a backward branch closes, the shortest of those that hold the most
tensor-core instructions (else FFMAs): a K loop, attention's loop over keys.  `--dump DIR`
writes both SASS listings (and tilecc's CUDA source) for reading."""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "benchmarks"))
sys.path.insert(0, os.path.join(HERE, ".."))

# (row label, regex over an instruction's opcode with its modifiers)
ROWS = [
    ("LDG 128-bit", r"^LDG\..*\b128\b"), ("LDG 64-bit", r"^LDG\..*\b64\b"),
    ("LDG 32/16/8-bit", r"^LDG(?!.*\b(128|64)\b)"),
    ("STG 128-bit", r"^STG\..*\b128\b"), ("STG 64-bit", r"^STG\..*\b64\b"),
    ("STG 32/16/8-bit", r"^STG(?!.*\b(128|64)\b)"),
    ("LDS", r"^LDS"), ("STS", r"^STS"), ("LDSM (ldmatrix)", r"^LDSM"),
    ("SHFL", r"^SHFL"), ("BAR", r"^BAR"), ("LDL/STL (spills)", r"^(LDL|STL)"),
    ("FFMA", r"^FFMA"), ("FMUL/FADD", r"^(FMUL|FADD)"), ("MUFU", r"^MUFU"),
    ("HMMA/HGMMA", r"^(HMMA|HGMMA|IMMA)"), ("IMAD/IADD3/LEA (int)", r"^(IMAD|IADD3|LEA|SHF)"),
    ("ISETP/FSETP", r"^(ISETP|FSETP)"), ("BRA", r"^BRA"), ("all instructions", r"."),
]


def find_tool(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    import triton
    path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)
    if os.path.exists(path):
        return path
    raise SystemExit(f"{name} not found (on PATH or in the triton package)")


def opcodes(sass: str) -> list[str]:
    """Each instruction's opcode with its modifiers (predicates dropped)."""
    out = []
    for line in sass.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
        if not m:
            continue
        text = re.sub(r"^@!?U?P\w+\s+", "", m.group(1).strip())
        out.append(text.split()[0] if text else "")
    return [op for op in out if op and op != "NOP"]


def counts(sass: str) -> dict[str, int]:
    ops = opcodes(sass)
    return {label: sum(1 for op in ops if re.search(rx, op)) for label, rx in ROWS}


_LINE = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);")
_TENSOR = re.compile(r"^(HMMA|HGMMA|QGMMA|IMMA|IGMMA)")


def hot_loop(sass: str) -> str | None:
    """The listing's lines of its hot loop (see the module's docstring), or None where no
    branch goes backward."""
    lines = [(int(m.group(1), 16), m.group(2).strip(), line)
             for line in sass.splitlines() if (m := _LINE.match(line))]
    ranges = []
    for addr, text, _ in lines:
        op = re.sub(r"^@!?U?P\w+\s+", "", text)
        jump = re.match(r"BRA(?:\.\S+)?\s+(?:`\()?0x([0-9a-f]+)", op)
        if jump and int(jump.group(1), 16) <= addr:
            ranges.append((int(jump.group(1), 16), addr))
    if not ranges:
        return None

    def weight(r):  # (a retry's branch back into a loop spans more than the loop)
        ops = opcodes("\n".join(line for a, _, line in lines if r[0] <= a <= r[1]))
        tensor = sum(1 for op in ops if _TENSOR.match(op))
        ffma = sum(1 for op in ops if op.startswith("FFMA"))
        return (tensor, 0 if tensor else ffma, -(r[1] - r[0]))
    start, end = max(ranges, key=weight)
    return "\n".join(line for a, _, line in lines if start <= a <= end)


def registers(cubin: bytes) -> int | None:
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    try:
        out = subprocess.run([find_tool("cuobjdump"), "-res-usage", f.name],
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    m = re.search(r"REG:(\d+)", out)
    return int(m.group(1)) if m else None


def static_shared(ptxas_log: str) -> int:
    """A kernel's `__shared__` bytes, as ptxas reports them ("N bytes smem"; cuobjdump's
    SHARED adds the kilobyte the driver reserves for each program)."""
    m = re.search(r"(\d+) bytes smem", ptxas_log)
    return int(m.group(1)) if m else 0


# an SM of sm_80 / sm_90: registers, the unit a warp's registers are given in, threads
_SM_REGISTERS, _REGISTER_UNIT, _SM_THREADS, _SM_PROGRAMS = 65536, 256, 2048, 32


def programs_by_registers(regs: int | None, num_warps: int) -> int | None:
    """How many programs of `num_warps` warps an SM holds at once as far as registers and
    threads allow (shared memory, given at launch, can allow fewer): a kernel a few
    registers past a line runs half its programs, which static counts alone do not show
    (at 1024 threads a program, 32 registers hold two, 33 one)."""
    if regs is None:
        return None
    per_warp = -(-regs * 32 // _REGISTER_UNIT) * _REGISTER_UNIT
    return min(_SM_REGISTERS // (per_warp * num_warps), _SM_THREADS // (32 * num_warps),
               _SM_PROGRAMS)


# shared memory an SM gives its programs, by architecture (sm_90: 228 KiB; sm_80: 164;
# sm_86 / sm_89: 100), and what the driver reserves for each program
_SM_SHARED = {90: 233472, 80: 167936, 86: 102400, 89: 102400}
_PROGRAM_RESERVED = 1024


def programs_by_shared(nbytes: int | None, arch: int = 90) -> int | None:
    """How many programs an SM holds at once as far as shared memory allows (each also
    takes the driver's reserved kilobyte): the cause of a gap that registers and
    instruction counts do not show (int8 weights at 64 x 128 x 64, 4 stages: 80 KiB
    holds two programs where Triton's 72 hold three)."""
    if nbytes is None:
        return None
    if nbytes == 0:
        return _SM_PROGRAMS
    return min(_SM_SHARED.get(arch, _SM_SHARED[90]) // (nbytes + _PROGRAM_RESERVED),
               _SM_PROGRAMS)


def sass_of(cubin: bytes) -> str:
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    try:
        return subprocess.run([find_tool("cuobjdump"), "-sass", f.name], capture_output=True,
                              text=True, check=True).stdout
    finally:
        os.unlink(f.name)


def load_kernel(spec: str):
    path, name = spec.rsplit(":", 1)
    mod_name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    module = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(module)
    sys.modules[mod_name] = mod
    module.loader.exec_module(mod)
    return getattr(mod, name)


def triton_compile(kernel, signature: list[str], num_warps: int, num_stages: int, arch: int):
    """The same source through Triton ahead of time: (cubin, sass, shared bytes)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton_clone import as_triton

    fn = as_triton(kernel)
    sig, consts, attrs = {}, {}, {}
    for i, (name, entry) in enumerate(zip(fn.arg_names, signature)):
        entry = entry.strip()
        ty, _, div = entry.partition(":")
        literal = re.fullmatch(r"-?\d+|True|False|None|-?\d*\.\d*(e-?\d+)?|'[^']*'|\"[^\"]*\"",
                               entry)
        if literal or div == "1":  # a constexpr's value; an integer equal to 1 is one too
            consts[name] = eval(entry) if literal else 1
            sig[name] = "constexpr"
            continue
        sig[name] = ty
        if div == "16":
            attrs[(i,)] = [["tt.divisibility", 16]]
    src = triton.compiler.ASTSource(fn, signature=sig, constexprs=consts, attrs=attrs)
    compiled = triton.compile(src, target=GPUTarget("cuda", arch, 32),
                              options={"num_warps": num_warps, "num_stages": num_stages})
    return (compiled.asm["cubin"], compiled.asm.get("sass") or sass_of(compiled.asm["cubin"]),
            compiled.metadata.shared)


def tilecc_compile(kernel, signature: list[str], num_warps: int, num_stages: int, arch: int):
    """(cubin, sass, CUDA source, shared bytes: the cubin's and what a launch gives)."""
    suffix = "a" if arch >= 90 else ""
    binary = kernel.compile(signature, arch=f"sm_{arch}{suffix}", num_warps=num_warps,
                            num_stages=num_stages)
    source = kernel.source(signature, arch=f"sm_{arch}{suffix}", num_warps=num_warps,
                           num_stages=num_stages)
    return (binary.data, sass_of(binary.data), source,
            static_shared(binary.log or "") + binary.shared_bytes)


def compare(kernel, signature: list[str], num_warps: int = 4, num_stages: int = 3,
            arch: int = 90, dump: str | None = None) -> dict[str, dict[str, int | None]]:
    """{"tilecc": {row: count}, "triton": {...}} (rows of ROWS plus "registers" and the
    programs an SM holds by them)."""
    out = {}
    tc_cubin, tc_sass, tc_src, tc_shared = tilecc_compile(kernel, signature, num_warps,
                                                          num_stages, arch)
    out["tilecc"] = counts(tc_sass) | _occupancy(registers(tc_cubin), num_warps, tc_shared,
                                                 arch)
    try:
        tr_cubin, tr_sass, tr_shared = triton_compile(kernel, signature, num_warps, num_stages,
                                                      arch)
        out["triton"] = counts(tr_sass) | _occupancy(registers(tr_cubin), num_warps, tr_shared,
                                                     arch)
    except ImportError:
        tr_sass = None
    for tool, sass in (("tilecc", tc_sass), ("triton", tr_sass)):
        loop = hot_loop(sass) if sass else None
        if loop is not None:
            out[f"{tool} loop"] = counts(loop)
    if dump:
        os.makedirs(dump, exist_ok=True)
        name = kernel.fn.__name__
        with open(os.path.join(dump, f"{name}.tilecc.sass"), "w") as f:
            f.write(tc_sass)
        with open(os.path.join(dump, f"{name}.tilecc.cu"), "w") as f:
            f.write(tc_src)
        if tr_sass:
            with open(os.path.join(dump, f"{name}.triton.sass"), "w") as f:
                f.write(tr_sass)
    return out


def _occupancy(regs: int | None, num_warps: int, shared: int | None,
               arch: int) -> dict[str, int | None]:
    return {"registers": regs, "programs/SM (regs)": programs_by_registers(regs, num_warps),
            "shared bytes": shared, "programs/SM (shared)": programs_by_shared(shared, arch)}


def table(result: dict, with_registers: bool = True) -> str:
    tools = list(result)
    labels = [label for label, _ in ROWS] + (
        ["registers", "programs/SM (regs)", "shared bytes", "programs/SM (shared)"]
        if with_registers else [])
    lines = [f"{'':<22}" + "".join(f"{t:>10}" for t in tools)]
    for label in labels:
        vals = [result[t].get(label) for t in tools]
        lines.append(f"{label:<22}" + "".join(f"{'-' if v is None else v:>10}" for v in vals))
    return "\n".join(lines)


# benchmarks/untuned_kernels.py at the configurations bench_untuned.py times (bf16
# activations): kernel -> (signature, num_warps)
UNTUNED = {
    "l2norm_rows": ("*bf16:16,*bf16:16,i32,fp32,128,16", 4),
    "rmsnorm_rows": ("*bf16:16,*bf16:16,*bf16:16,*fp32:16,i32,fp32,128,16", 4),
    "gated_rmsnorm": ("*bf16:16,*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,fp32,4096", 8),
    "swiglu_fwd": ("*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,16384", 32),
    "geglu_tanh_fwd": ("*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,16384", 32),
    "sparsemax_rows": ("*fp32:16,*fp32:16,*fp32:16,i32,1024", 4),
    "chunk_local_cumsum": ("*fp32:16,*fp32:16,i32:16,16,64", 4),
    "cross_entropy_fwd_bwd": ("*bf16:16,i32:16,*i64:16,*fp32:16,i32:16,fp32,32768", 32),
    "rope_fwd": ("*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,32,64", 4),
    "taylor_linear_attn": ("*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32,fp32,16,64,64,32",
                           4),
    "gated_rnn_fwd": ("*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,128", 4),
    "group_norm_fwd": ("*bf16:16,*bf16:16,*bf16:16,*bf16:16,i32:16,i32:16,fp32,64,4096", 8),
}
SHORT = ["LDG 128-bit", "LDG 32/16/8-bit", "STG 128-bit", "STG 32/16/8-bit", "LDS", "STS",
         "SHFL", "BAR", "LDL/STL (spills)", "all instructions", "registers",
         "programs/SM (regs)"]


def untuned_table(arch: int) -> str:
    """One line per kernel of benchmarks/untuned_kernels.py: tilecc/Triton counts."""
    import untuned_kernels as U

    heads = ["LDG128", "LDG<=32", "STG128", "STG<=32", "LDS", "STS", "SHFL", "BAR", "spill",
             "instr", "regs", "prog/SM"]
    lines = [f"{'kernel (tilecc/triton)':<24}" + "".join(f"{h:>10}" for h in heads)]
    for name, (sig, warps) in UNTUNED.items():
        try:
            r = compare(getattr(U, name), sig.split(","), warps, 3, arch)
            cells = [f"{r['tilecc'][k]}/{r.get('triton', {}).get(k, '-')}" for k in SHORT]
        except Exception as e:  # noqa: BLE001 - one kernel's failure is a line of the table
            cells = [f"failed: {type(e).__name__}: {str(e).splitlines()[-1][:100]}"]
        lines.append(f"{name:<24}" + "".join(f"{c:>10}" for c in cells))
    return "\n".join(lines)


def main() -> None:
    if sys.argv[1:2] == ["--untuned"]:  # every kernel of benchmarks/untuned_kernels.py
        print(untuned_table(int(sys.argv[2]) if len(sys.argv) > 2 else 90))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernel", help="FILE.py:KERNEL (a @tilecc.jit function)")
    ap.add_argument("-s", "--signature", required=True)
    ap.add_argument("-w", "--num-warps", type=int, default=4)
    ap.add_argument("--num-stages", type=int, default=3)
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--dump", help="write both SASS listings and the CUDA source here")
    args = ap.parse_args()
    kernel = load_kernel(args.kernel)
    sig = [s for s in re.split(r",(?![^\[]*\])", args.signature) if s]
    result = compare(kernel, sig, args.num_warps, args.num_stages, args.arch, args.dump)
    print(f"{kernel.fn.__name__}  num_warps={args.num_warps}  sm_{args.arch}")
    print(table({t: c for t, c in result.items() if not t.endswith(" loop")}))
    loops = {t.removesuffix(" loop"): c for t, c in result.items() if t.endswith(" loop")}
    if loops:
        print("\nthe hot loop (static counts: both arms of a branch in it)")
        print(table(loops, with_registers=False))


if __name__ == "__main__":
    main()
