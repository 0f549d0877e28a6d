"""The command line, signature parsing, launch-argument checks and compile-error mapping —
everything on the way to a launch that needs no GPU."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import prewarmed
import pytest

import tilecc
import tilecc.language as tl
from conftest_compilers import require_cuda_compiler, require_hip_compiler
from tilecc.transpiler import specialize as SP
from tilecc.runtime.compiler import Artifact, compile_source
from tilecc.runtime.options import CompileOptions
from tilecc.transpiler.target import resolve_target

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "vector_add.py")
TRITON_FILE = os.path.join(os.path.dirname(__file__), "triton_kernels.py")


def _cli(*args):
    """`python -m tilecc ARGS` (forked from a process that has imported tilecc)."""
    return prewarmed.run([sys.executable, "-m", "tilecc", *args], env=dict(os.environ),
                         cwd=os.getcwd(), timeout=120)


def test_emit_prints_cuda_and_hip():
    for target, marker in (("cuda", "warp size 32"), ("hip", "warp size 64")):
        r = _cli("emit", f"{EXAMPLE}:add_kernel", "--target", target, "-s",
                 "*fp32:16,*fp32:16,*fp32:16,i32:16,1024")
        assert r.returncode == 0, r.stderr
        assert marker in r.stdout and "add_kernel(" in r.stdout
        assert "// L22: x = tl.load(x_ptr + offsets, mask=mask)" in r.stdout


def test_emit_line_directives_and_output_file(tmp_path):
    out = tmp_path / "k.cu"
    r = _cli("emit", f"{EXAMPLE}:add_kernel", "-s", "*fp32,*fp32,*fp32,i32,256",
             "--line-directives", "-o", str(out), "--num-warps", "2")
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert '#line 22 "' in text and "vector_add.py" in text
    assert "__launch_bounds__(64)" in text


def test_version_and_include_dir():
    r = _cli("--version")
    assert r.returncode == 0 and r.stdout == f"tilecc {tilecc.__version__}\n", r.stderr
    folder = tilecc.get_include()
    assert os.path.isfile(os.path.join(folder, "tilecc.h"))
    emitted = _cli("emit", f"{EXAMPLE}:add_kernel", "-s", "*fp32,*fp32,*fp32,i32,256").stdout
    assert '#include "tilecc.h"' in emitted  # what the folder is for
    r = _cli("--include-dir")
    assert r.returncode == 0 and r.stdout == folder + "\n", r.stderr


def test_emit_takes_every_option_that_changes_the_code():
    """--arch, --num-stages, --num-warps and --target reach the generated code, as the
    Python API's arguments of the same names do."""
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "matmul.py")
    sig = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1," \
          "i32:16,i32:1,128,128,32,8,''"
    import importlib.util

    spec = importlib.util.spec_from_file_location("_matmul_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = module.matmul_kernel
    for cli_args, api in ((["--arch", "sm_80"], dict(arch="sm_80")),
                          (["--num-stages", "2"], dict(num_stages=2)),
                          (["--num-warps", "8"], dict(num_warps=8)),
                          (["--target", "hip"], dict(target="hip"))):
        r = _cli("emit", f"{path}:matmul_kernel", "-s", sig, *cli_args)
        assert r.returncode == 0, r.stderr
        expected = kernel.source(sig, **api)
        assert expected != kernel.source(sig), cli_args  # the option changes the code
        lines = r.stdout.splitlines(keepends=True)
        assert lines[2].startswith("// Regenerate: ")
        assert "".join(lines[:2] + lines[3:]) == expected, cli_args


def test_compile_takes_the_same_options(tmp_path, monkeypatch, capsys):
    from tilecc.cli import main
    from tilecc.runtime.binary import Binary
    from tilecc.runtime.jit import JITFunction

    given = {}

    def compile(self, signature, **options):
        given.update(options)
        return Binary(options["target"], options["arch"], b"cubin", "")

    monkeypatch.setattr(JITFunction, "compile", compile)
    assert main(["compile", f"{EXAMPLE}:add_kernel", "-s", "*fp32,*fp32,*fp32,i32,256",
                 "--arch", "sm_80", "--num-warps", "8", "--num-stages", "2",
                 "-o", str(tmp_path / "k.cubin")]) == 0, capsys.readouterr().err
    assert given == dict(target="cuda", arch="sm_80", num_warps=8, num_stages=2, debug=False)


def test_an_emitted_file_says_how_to_regenerate_it(tmp_path):
    """The command on its third line, run again from the folder it names, writes the file
    anew; the Python API's source() has no such line."""
    import shlex

    work = tmp_path / "a folder"
    work.mkdir()
    out = work / "k.cu"
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(__file__))}
    args = ["emit", os.path.abspath(EXAMPLE) + ":add_kernel", "-s", "*fp32,*fp32,*fp32,i32,256",
            "--num-warps", "2", "-o", "k.cu"]
    r = subprocess.run([sys.executable, "-m", "tilecc", *args], cwd=work, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    first = out.read_text()
    line = first.splitlines()[2]
    assert line == f"// Regenerate: cd {shlex.quote(str(work))} && python -m tilecc " \
        f"{shlex.join(args)}"
    out.unlink()
    command = line[len("// Regenerate: "):].replace("python -m", f"{sys.executable} -m")
    r = subprocess.run(command, shell=True, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert out.read_text() == first
    from tilecc.cli_input import load_kernel

    assert "Regenerate" not in load_kernel(f"{EXAMPLE}:add_kernel").source(
        "*fp32,*fp32,*fp32,i32,256")


_WITHOUT_TRITON = """
import importlib.util, sys
if importlib.util.find_spec("triton") is not None:
    sys.exit(3)  # Triton is installed here: nothing to show
import tilecc
from tilecc.cli import main
rc = main(["emit", sys.argv[1] + ":leaky_relu_kernel", "-s", "*fp32:16,*fp32:16,i32,fp32,1024"])
# the file's `import triton` / `triton.language` were served by tilecc's own
assert sys.modules["triton"].jit is sys.modules["tilecc.compat.triton.runtime.jit"].jit
assert sys.modules["triton.language"].program_id is tilecc.language.program_id
sys.exit(rc)
"""


def test_emit_loads_a_triton_file_without_triton():
    assert "import triton.language as tl" in open(TRITON_FILE).read()
    r = subprocess.run([sys.executable, "-c", _WITHOUT_TRITON, TRITON_FILE],
                       capture_output=True, text=True, timeout=120)
    if r.returncode == 3:
        pytest.skip("Triton is installed in this Python")
    assert r.returncode == 0, r.stderr
    assert "leaky_relu_kernel(" in r.stdout
    assert "// L19: y = tl.where(x > 0, x, x * slope)" in r.stdout, r.stdout


def test_emit_reports_bad_signature():
    r = _cli("emit", f"{EXAMPLE}:add_kernel", "-s", "*fp32,*fp32")
    assert r.returncode == 1
    assert "vector_add.py:15: kernel `add_kernel` has 5 parameters (x_ptr, y_ptr, out_ptr, " \
        "n_elements, BLOCK_SIZE), the signature gives 2" in r.stderr


def test_compile_writes_a_cubin(tmp_path):
    require_cuda_compiler()
    out = tmp_path / "k.cubin"
    r = _cli("compile", f"{EXAMPLE}:add_kernel", "-s", "*fp32:16,*fp32:16,*fp32:16,i32,1024",
             "--arch", "sm_80", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:4] == b"\x7fELF"


@pytest.mark.parametrize("entry,expect", [
    ("*fp16:16", (tl.pointer_type(tl.float16), True, False)),
    ("*bf16", (tl.pointer_type(tl.bfloat16), False, False)),
    ("i64:16", (tl.int64, True, False)),
    ("i32:1", (tl.int32, False, True)),
    ("fp32", (tl.float32, False, False)),
])
def test_signature_entries(entry, expect):
    spec = SP._spec_from_entry("p", entry)
    assert (spec.type, spec.divisible_by_16, spec.equals_one) == expect


@pytest.mark.parametrize("entry", ["*fp33", "fp32:16", "*i32:1", "i32:4", "*fp16:8", "fp32:8"])
def test_bad_signature_entries(entry):
    with pytest.raises(ValueError):
        SP._spec_from_entry("p", entry)


@pytest.mark.parametrize("value,dtype", [(3, tl.int32), (2**31, tl.int64), (-2**40, tl.int64),
                                         (3_000_000_000, tl.int64), (1e300, tl.float32),
                                         (2**63, tl.uint64), (1.5, tl.float32), (True, tl.int1),
                                         (np.int16(3), tl.int16), (np.float64(2), tl.float64)])
def test_scalar_arguments_are_typed_as_triton_types_them(value, dtype):
    assert SP.scalar_type(value) == dtype


@tilecc.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def test_specialization_on_launch_arguments():
    x = np.zeros(64, np.float32)
    specs, passed = _copy.specs_for({"src": x, "dst": x[1:], "n": 32, "BLOCK": 64})
    assert specs[0].divisible_by_16 and not specs[1].divisible_by_16
    assert specs[2].divisible_by_16 and not specs[2].equals_one
    one, passed_one = _copy.specs_for({"src": x, "dst": x, "n": 1, "BLOCK": 64})
    assert one[2].equals_one and len(passed_one) == 2  # n == 1 becomes a constant


def test_wrong_argument_count_and_type():
    x = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        _copy.bind((x, x, 8, 8, 8), {})
    with pytest.raises(TypeError, match="missing argument `n`"):
        _copy.bind((x, x), {"BLOCK": 8})
    with pytest.raises(TypeError, match="argument `n` has type str"):
        _copy.specs_for({"src": x, "dst": x, "n": "8", "BLOCK": 8})
    with pytest.raises(TypeError, match="`BLOCK` is a tl.constexpr"):
        _copy.specs_for({"src": x, "dst": x, "n": 8, "BLOCK": x})


@tilecc.jit
def _store_num_warps(out, num_warps: tl.constexpr):
    tl.store(out + tl.arange(0, 2), tl.full((2,), num_warps, tl.int32))


def test_a_parameter_named_like_a_launch_option_receives_its_value():
    """As in Triton, `kernel[grid](..., num_warps=8)` of a kernel with a `num_warps`
    parameter both sets the option and passes the value to the parameter."""
    values, options = _store_num_warps.bind((np.zeros(2, np.int32),), {"num_warps": 8})
    assert values["num_warps"] == 8 and options == {"num_warps": 8}
    out = np.zeros(2, np.int32)
    _store_num_warps.interpret[(1,)](out, num_warps=8)
    assert out.tolist() == [8, 8]
    # the GPU launch's quick binding hands such a launch to `bind`, not dropping the option
    from tilecc.runtime.launch.args import bind_fast

    assert bind_fast(("out", "num_warps"), (out,), {"num_warps": 8}) == (None, None)


def test_calling_a_kernel_directly_is_an_error():
    with pytest.raises(TypeError, match=r"launch it with _copy\[grid\]"):
        _copy(1, 2, 3, 4)


def test_empty_grid_runs_nothing_in_the_interpreter():
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    _copy.interpret[(0,)](x, y, 8, BLOCK=8)
    assert not y.any()


def test_native_compile_errors_point_at_the_python_line(tmp_path):
    require_cuda_compiler()
    py = tmp_path / "user_kernel.py"
    py.write_text("line one\nline two\n    x = broken(y)\n")
    kernel = _copy.ir("*fp32,*fp32,i32,64")
    source = textwrap.dedent(f"""\
        extern "C" __global__ void k() {{
        #line 3 "{py}"
          int x = undefined_thing;
        }}
        """)
    with pytest.raises(tilecc.CompilationError) as e:
        compile_source(Artifact("k", source, (), "cuda", "sm_90", CompileOptions(),
                                kernel=kernel), resolve_target("cuda", "sm_90"))
    msg = str(e.value)
    assert f"{py}:3:1" in msg and "x = broken(y)" in msg
    assert "undefined_thing" in msg


@pytest.mark.parametrize("target,arch", [("cuda", "sm_90"), ("hip", "gfx90a")])
def test_a_compile_error_a_few_lines_below_a_directive_names_its_statement(tmp_path, target,
                                                                          arch):
    # a statement's C++ takes several lines under its one #line directive, and the
    # compiler counts on from it: an error on the third line is at the statement's line,
    # not two lines further down (where another statement's directive may stand)
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    py = tmp_path / "user_kernel.py"
    py.write_text("".join(f"statement{i}()\n" for i in range(1, 8)))
    kernel = _copy.ir("*fp32,*fp32,i32,64")
    source = textwrap.dedent(f"""\
        extern "C" __global__ void k(const float* p) {{
        #line 3 "{py}"
          float a = 1.0f;
          float b = 2.0f;
          *p = a + b;
        #line 5 "{py}"
          float c = a;
        }}
        """)
    with pytest.raises(tilecc.CompilationError) as e:
        compile_source(Artifact("k", source, (), target, arch, CompileOptions(),
                                kernel=kernel), resolve_target(target, arch))
    assert f"{py}:3:1" in str(e.value) and "statement3()" in str(e.value)


def test_unsupported_array_dtype_names_the_parameter():
    x = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="argument `dst` has dtype complex64"):
        _copy.specs_for({"src": x, "dst": np.zeros(8, np.complex64), "n": 8, "BLOCK": 8})


# --- install hints --------------------------------------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_install_hints_name_what_pip_can_install():
    """No package index serves tilecc: a hint names the packages, or `pip install
    '.[extra]'` for a checkout, never `tilecc[extra]`; the packages are pyproject's."""
    import glob
    import re
    import tomllib

    from tilecc.errors import EXTRAS, install_hint

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    for name, packages in EXTRAS.items():
        assert list(packages) == extras[name], name
    assert install_hint("testing") == ("pip install 'hypothesis>=6.90' 'pytest>=7' (in a "
                                       "checkout of tilecc: pip install '.[testing]')")
    files = [os.path.join(ROOT, "README.md"), *glob.glob(os.path.join(ROOT, "docs", "*.md"))]
    for folder in ("tilecc", "examples", "scripts", "benchmarks"):
        files += glob.glob(os.path.join(ROOT, folder, "**", "*.*"), recursive=True)
    unservable = re.compile(r"tilecc\[\w+\]")
    found = [f"{os.path.relpath(path, ROOT)}:{n}: {line.strip()}"
             for path in files if path.endswith((".py", ".md", ".sh", ".txt", ".cmake"))
             for n, line in enumerate(open(path, encoding="utf-8"), 1)
             if unservable.search(line)]
    assert not found, "\n".join(found)


# --- help that teaches: examples that run, the same compile flags everywhere -----------------

COMMANDS = ([], ["emit"], ["compile"], ["export"], ["cache"])


def _help(args, capsys) -> str:
    from tilecc.cli import main

    with pytest.raises(SystemExit) as e:
        main([*args, "--help"])
    assert e.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0] if c else "tilecc")
def test_every_help_ends_in_examples_that_run(command, capsys, tmp_path, monkeypatch):
    """Each example of `tilecc [COMMAND] --help`, run from a checkout as written (in an
    empty folder, the example files found where the checkout has them)."""
    import re
    import shlex

    from conftest_compilers import require_hip_compiler
    from tilecc.cli import main

    text = _help(command, capsys)
    assert "\nexamples:\n" in text
    examples = re.findall(r"(?m)^  (tilecc (?:.*\\\n)*.*)$", text.split("\nexamples:\n")[1])
    examples = [e.replace("\\\n", " ") for e in examples]  # continued lines joined
    assert examples and all(shlex.split(e)[1] == (command or [shlex.split(e)[1]])[0]
                            for e in examples), examples
    monkeypatch.chdir(tmp_path)
    for example in examples:
        args = [os.path.join(ROOT, a) if a.startswith("examples/") else a
                for a in shlex.split(example)[1:]]
        if args[0] == "compile":
            (require_hip_compiler if "hip" in args else require_cuda_compiler)()
        assert main(args) == 0, example
        capsys.readouterr()


@pytest.mark.parametrize("command", ["emit", "compile", "export"])
def test_emit_compile_and_export_take_the_same_compile_flags(command, capsys):
    flags = ("--target", "--arch", "--num-warps", "--num-stages", "--maxnreg",
             "--no-fp-fusion", "--debug")
    text = _help([command], capsys)
    assert all(f" {flag}" in text for flag in flags), text


def test_export_honours_the_compile_flags(tmp_path):
    """Each compile flag changes the exported header's kernel as the same option changes
    kernel.source(), and the header's Regenerate line repeats it."""
    import importlib.util

    from tilecc.cli import main

    path = os.path.join(ROOT, "examples", "matmul.py")
    spec = importlib.util.spec_from_file_location("_matmul_for_export", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sig = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1," \
          "i32:16,i32:1,128,128,32,8,''"

    def lines(text: str) -> set[str]:  # the code, as a header holds it
        return {line.strip().replace('extern "C" __global__', "__global__")
                for line in text.splitlines()
                if line.strip() and not line.strip().startswith("//")}

    for flags, api in ((["--arch", "sm_90a"], dict(arch="sm_90a")),
                       (["--num-stages", "2"], dict(num_stages=2)),
                       (["--maxnreg", "96"], dict(maxnreg=96)),
                       (["--num-warps", "8"], dict(num_warps=8)),
                       (["--no-fp-fusion", "--target", "hip"],
                        dict(enable_fp_fusion=False, target="hip"))):
        target = api.get("target", "cuda")
        plain = dict(target=target, arch="sm_80" if target == "cuda" else None)
        changed = lines(module.matmul_kernel.source(sig, **{**plain, **api})) - \
            lines(module.matmul_kernel.source(sig, **plain))
        assert changed, flags  # the option changes the code
        out = tmp_path / "_".join(flags)
        assert main(["export", f"{path}:matmul_kernel", "-s", sig, "--grid", "1,1,1",
                     *flags, "-o", str(out)]) == 0
        header = next(out.iterdir()).read_text()
        assert changed <= lines(header), (flags, changed - lines(header))
        regenerate = header.splitlines()[1]
        assert all(f" {flag}" in regenerate for flag in flags), (flags, regenerate)


@pytest.mark.parametrize("target,mark", [("cuda", "__fmul_rn("),
                                         ("hip", "#pragma clang fp contract(off)")])
def test_no_fp_fusion_is_written_into_the_emitted_source(target, mark, capsys):
    """An emitted file is built with flags tilecc does not choose: under --no-fp-fusion
    its products are never contracted into an fma (CUDA: __fmul_rn, which nvcc never
    contracts; HIP: clang's contraction turned off in the kernel)."""
    from tilecc.cli import main

    kernel = os.path.join(ROOT, "examples", "fused_elementwise.py") + ":silu_mul_kernel"
    sig = "*fp32:16,*fp32:16,*fp32:16,i32:16,1024"
    assert main(["emit", kernel, "-s", sig, "--target", target]) == 0
    assert mark not in capsys.readouterr().out
    assert main(["emit", kernel, "-s", sig, "--target", target, "--no-fp-fusion"]) == 0
    assert mark in capsys.readouterr().out


# --- docs/environment.md -----------------------------------------------------------------------

def test_every_environment_variable_read_is_documented():
    """Each name the package and scripts/ read from the environment (os.environ[...],
    .get, getenv, the launch's encoded key, a shell script's ${NAME:-...}) is on
    docs/environment.md, which README links."""
    import glob
    import re

    read = re.compile(r"""(?:environ(?:\.get)?\s*[\[(]|getenv\(|encodekey\()\s*['"]([A-Z][A-Z0-9_]+)['"]"""
                      r"""|\$\{([A-Z][A-Z0-9_]+):-""")
    names = {}
    for path in glob.glob(os.path.join(ROOT, "tilecc", "**", "*.py"), recursive=True) + \
            glob.glob(os.path.join(ROOT, "scripts", "**", "*.*"), recursive=True):
        if path.endswith((".py", ".sh")) and os.path.basename(path) != "test.sh":
            text = open(path, encoding="utf-8").read()
            for m in read.finditer(text):
                name = m.group(1) or m.group(2)
                own = re.search(rf"(?m)^\s*{name}=(.*)$", text)  # a script's own variable
                if not (own and f"${{{name}" not in own.group(1)):
                    names.setdefault(name, os.path.relpath(path, ROOT))
    names.pop("PYTHONPATH", None)  # set for child processes, never read
    assert {"TILECC_INTERPRET", "TILECC_CACHE_DIR", "ROCM_PATH", "OUT"} <= set(names)
    page = open(os.path.join(ROOT, "docs", "environment.md"), encoding="utf-8").read()
    missing = {n: where for n, where in names.items() if f"`{n}" not in page}
    assert not missing, f"read but not on docs/environment.md: {missing}"
    assert "docs/environment.md" in open(os.path.join(ROOT, "README.md")).read()


def test_tilecc_traceback_shows_a_loading_error_in_full(tmp_path):
    """The one-line error for a kernel file that raises says TILECC_TRACEBACK=1 shows the
    traceback: it does."""
    script = tmp_path / "raises.py"
    script.write_text("import tilecc\n\n\nraise RuntimeError('boom')\n")
    env = {**os.environ, "PYTHONPATH": ROOT}
    args = [sys.executable, "-m", "tilecc", "emit", f"{script}:k", "-s", "i32"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 1 and "TILECC_TRACEBACK=1 shows the traceback" in r.stderr
    r = subprocess.run(args, capture_output=True, text=True, timeout=120,
                       env={**env, "TILECC_TRACEBACK": "1"})
    assert "Traceback (most recent call last)" in r.stderr, r.stderr
    assert f'{script}", line 4, in <module>' in r.stderr and "RuntimeError: boom" in r.stderr
