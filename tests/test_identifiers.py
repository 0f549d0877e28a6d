"""Identifier hygiene: Python names that C++ cannot take as they are (keywords, CUDA / HIP
built-ins and macros, math functions, tilecc's own names, reserved underscore forms,
non-ASCII names; tests/identifier_names.py) as block and scalar locals, loop variables,
helpers, parameters and kernel names — compiled by NVRTC and hiprtc, run on the
interpreter, exported as a C++ header.  The GPU runs are in tests/test_gpu.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

try:
    import identifier_names as I
    from conftest_compilers import compilers_required, require_cuda_compiler, \
        require_hip_compiler
except ImportError:  # tests/ imported as a package
    from tests import identifier_names as I
    from tests.conftest_compilers import compilers_required, require_cuda_compiler, \
        require_hip_compiler

from tilecc.runtime import native_compile as NC
from tilecc.transpiler import names as N
from tilecc.transpiler.render import INCLUDE_DIR

TARGETS = [("cuda", "sm_80"), ("hip", "gfx90a")]
LOCALS_SIG = "*fp32,*fp32,i32,128"


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return I.load_module(tmp_path_factory.mktemp("identifiers"))


def _require(target: str) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()


def _compile(source: str, target: str, arch: str):
    opts = [f"-I{INCLUDE_DIR}"]
    if target == "cuda":
        return NC.compile_cuda(source, arch=arch, options=opts)
    return NC.compile_hip(source, arch=arch, options=opts)


# --- the rule ----------------------------------------------------------------------------------

def test_the_list_is_long_and_legal_python():
    assert len(I.ALL) >= 200 and len(set(I.ALL)) == len(I.ALL)
    assert all(n.isidentifier() for n in I.ALL)


@pytest.mark.parametrize("name", I.ALL)
def test_c_spelling_is_valid_ascii_and_never_reserved(name):
    for c in (N.c_identifier(name), N.kernel_symbol(name)):
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c), c
        assert "__" not in c and not re.match(r"_[A-Z]", c) and not N.is_reserved(c), c
    assert not N.kernel_symbol(name).startswith("_")


@pytest.mark.parametrize("name", ["x", "offsets", "mask", "row", "BLOCK_SIZE", "x_ptr", "_x",
                                  "n_elements", "softmax_kernel"])
def test_ordinary_names_are_kept(name):
    assert N.c_identifier(name) == name
    if not name.startswith("_"):
        assert N.kernel_symbol(name) == name


def test_readable_spellings():
    assert N.c_identifier("int") == "int_" and N.c_identifier("tc") == "tc_"
    assert N.c_identifier("αβ") == "u03b1_u03b2" and N.c_identifier("xé") == "x_u00e9"
    assert N.c_identifier("_Foo") == "Foo_" and N.c_identifier("x__y") == "x_y"
    assert N.kernel_symbol("_helper") == "helper_" and N.c_identifier("acc3") == "acc3_"


def test_allocator_keeps_names_apart():
    taken: set[str] = set()
    got = [N.unique(N.c_identifier(n), taken) for n in ("int", "int_", "int_1", "int")]
    assert len(set(got)) == 4 and all(not N.is_reserved(g) for g in got)


# --- NVRTC and hiprtc --------------------------------------------------------------------------

@pytest.mark.parametrize("target,arch", TARGETS)
def test_every_name_as_a_block_local(mod, target, arch):
    _require(target)
    source = mod.locals_kernel.source(LOCALS_SIG, target=target)
    _compile(source, target, arch)
    assert "// Names (Python -> C++" in source and "//   αβ -> u03b1_u03b2" in source
    mod.locals_kernel.compile(LOCALS_SIG, target=target, arch=arch)  # the runtime's path too


@pytest.mark.parametrize("target,arch", TARGETS)
def test_names_as_scalars_loops_reductions_and_helpers(mod, target, arch):
    _require(target)
    mod.roles_kernel.compile(LOCALS_SIG, target=target, arch=arch)


@pytest.mark.parametrize("target,arch", TARGETS)
def test_every_name_as_a_parameter(mod, target, arch):
    _require(target)
    for c, names in enumerate(I.param_chunks()):
        kernel = getattr(mod, f"params_{c}")
        sig = ",".join(["*i32"] + ["i32"] * len(names))
        source = kernel.source(sig, target=target)
        _compile(source, target, arch)
        assert "/* αβ */" in source or "αβ" not in names


@pytest.mark.parametrize("target,arch", TARGETS)
def test_every_name_as_a_kernel_name(mod, target, arch):
    """All the kernels in one translation unit per batch (their symbols distinct in it): each
    symbol is declared once, and the compilers take them beside each other and beside the
    names NVRTC and hiprtc declare."""
    _require(target)
    batches: list[dict[str, str]] = []
    for name, kernel in mod.KERNELS.items():
        source = kernel.source("*fp32", target=target)
        symbol = N.kernel_symbol(name)
        assert re.search(rf'extern "C" __global__ void __launch_bounds__\(\d+\) {symbol}\(',
                         source), name
        for batch in batches:
            if symbol not in batch:
                batch[symbol] = source
                break
        else:
            batches.append({symbol: source})
    for batch in batches:
        _compile("\n".join(batch.values()), target, arch)


@pytest.mark.parametrize("target,arch", TARGETS)
def test_runtime_compiles_under_the_symbol(mod, target, arch):
    _require(target)
    for name in ("this", "sinf", "αβ", "A7", "_", "tc"):
        binary = mod.KERNELS[name].compile("*fp32", target=target, arch=arch)
        assert binary.data


# --- the interpreter -----------------------------------------------------------------------------

def test_interpreter_runs_the_names(mod):
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    mod.locals_kernel.interpret[(1,)](x, out, 100, 128)
    np.testing.assert_allclose(out, len(I.ALL) * x + sum(range(len(I.ALL))), rtol=1e-6)
    mod.roles_kernel.interpret[(1,)](x, out, 100, 128)
    expected = 6 * x + 1 + 3 * x.sum() + x.max() + np.cumsum(x)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    names = I.param_chunks()[0]
    res = np.zeros(1, np.int32)
    args = [i % 7 + 1 for i in range(len(names))]
    getattr(mod, "params_0").interpret[(1,)](res, *args)
    assert res[0] == sum((i + 1) * a for i, a in enumerate(args))
    for i, name in enumerate(I.ALL[:20] + I.NON_ASCII):
        one = np.zeros(1, np.float32)
        mod.KERNELS[name].interpret[(1,)](one)
        assert one[0] == I.ALL.index(name)


# --- generated names never collide with user names -----------------------------------------------

def test_generated_names_step_aside(mod):
    """A user's `row`, `q`, `acc_sum` in a kernel with tl.dot, where the product's code
    declares `row` and `q` in blocks that read user values."""
    import tilecc
    import tilecc.language as tl

    src = mod.roles_kernel.source(LOCALS_SIG, target="cuda")
    assert re.search(r"\bfloat r_\[1\]", src) and "float acc_;" in src

    @tilecc.jit
    def dot_kernel(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
        row = tl.arange(0, BLOCK)
        q = tl.load(a_ptr + row[:, None] * BLOCK + row[None, :])
        g = tl.load(b_ptr + row[:, None] * BLOCK + row[None, :])
        acc_sum = tl.dot(q, g)
        tl.store(c_ptr + row[:, None] * BLOCK + row[None, :], acc_sum)

    text = dot_kernel.source("*fp16,*fp16,*fp32,32", target="cuda")
    for user in ("q", "g"):
        assert re.search(rf"\b{user}_\[", text), user
    assert "__" not in re.sub(r"__(syncthreads|shared__|global__|launch_bounds__|align__|"
                              r"attribute__|restrict__)", "", text.split("#include")[1])


# --- the exported header -------------------------------------------------------------------------

def _require_tool(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        if compilers_required():
            pytest.fail(f"{tool} is unavailable but TILECC_REQUIRE_COMPILERS=1", pytrace=False)
        pytest.skip(f"{tool} is unavailable")
    return path


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_exported_header_with_such_names_compiles(mod, target, tmp_path):
    from tilecc.export import export

    kernels = [mod.roles_kernel, mod.params_0, mod.KERNELS["this"], mod.KERNELS["αβ"]]
    sigs = {mod.roles_kernel: [LOCALS_SIG, "*fp32:16,*fp32:16,i32,128"],
            mod.params_0: [",".join(["*i32"] + ["i32"] * len(I.param_chunks()[0]))],
            mod.KERNELS["this"]: ["*fp32"], mod.KERNELS["αβ"]: ["*fp32"]}
    grids = {"roles_kernel": "(n + 127) / 128,1,1", "params_0": "1,1,1", "this": "1,1,1",
             "αβ": "1,1,1"}
    path = export(kernels, {k.fn.__name__: v for k, v in sigs.items()}, target=target,
                  grid=grids, name="ids", out_dir=str(tmp_path))
    text = open(path, encoding="utf-8").read()
    assert "tilecc::ids::this_(" in text and "tilecc::ids::u03b1_u03b2(" in text
    assert "launcher is u03b1_u03b2" in text
    main = tmp_path / ("main.cu" if target == "cuda" else "main.hip.cpp")
    main.write_text(f'#include "{os.path.basename(path)}"\nint main() {{ return 0; }}\n')
    if target == "cuda":
        cmd = [_require_tool("nvcc"), "-std=c++17", "-arch=sm_80", "-c", str(main), "-o",
               str(tmp_path / "main.o"), "-I", str(tmp_path)]
        env = None
    else:
        cmd = [_require_tool("hipcc"), "-std=c++17", "--offload-arch=gfx90a", "-c", str(main),
               "-o", str(tmp_path / "main.o"), "-I", str(tmp_path)]
        env = {**os.environ, "HIP_PLATFORM": "amd"}
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout + p.stderr


# --- every name in generated code is known: a user's, or one the rule keeps users from -------

# what generated code spells besides user names and tilecc's generated locals: C++ keywords
# and types, CUDA / HIP built-ins, preprocessor words, tilecc's header (tc::, TC_ macros)
_SPELLED = set(N.CXX_KEYWORDS) | {
    "include", "pragma", "unroll", "line", "aligned", "threadIdx", "blockIdx", "gridDim",
    "blockDim", "tc",
    "kRegs", "owner"}  # members of the layout structs (and coord0, coord1, ...: _MEMBER)
_MEMBER = re.compile(r"coord\d+")


def _code_identifiers(source: str) -> set[str]:
    code = source.split('#include "tilecc.h"', 1)[1]
    code = re.sub(r"//[^\n]*|/\*.*?\*/", " ", code, flags=re.S)
    code = re.sub(r'"(?:\\.|[^"\\])*"', '""', code)
    # qualified members (tc::load, Blocked0::coord0, v.x) belong to their scope, not ours
    code = re.sub(r"(::|\.)\s*[A-Za-z_]\w*", " ", code)
    return set(re.findall(r"\b[A-Za-z_]\w*\b", code))


def _kernels_to_scan():
    """The test cases' kernels, and the examples' (their checked-in signatures)."""
    try:
        import kernels as K
        import kernels_dot as KD
        from test_blocks import load_example
        from test_golden import GOLDEN
    except ImportError:
        from tests import kernels as K
        from tests import kernels_dot as KD
        from tests.test_blocks import load_example
        from tests.test_golden import GOLDEN
    seen = set()
    for case in list(K.CASES) + list(KD.CASES_DOT):
        if id(case.kernel) not in seen:
            seen.add(id(case.kernel))
            yield pytest.param(case.kernel, case.signatures[0], id=case.name)
    for name, (module, kernel, signature, _) in GOLDEN.items():
        yield pytest.param(getattr(load_example(module), kernel), signature, id=name)


def _build(kernel, signature: str, target: str):
    return kernel.build(kernel._specs(signature, {}), target, 4,
                        arch="sm_90" if target == "cuda" else None)


def _unknown_names(built) -> set[str]:
    """The identifiers of `built`'s source that are neither names given to user values
    (or derived from them) nor names user names are kept from (those of tl.dot's code
    only in kernels with a tl.dot, where they are kept from them)."""
    dots = any(op.kind == "dot" for op in built.kernel.walk())
    return {w for w in _code_identifiers(built.source) - built.products.c_names - _SPELLED
            if not (N.is_reserved(w) or dots and w in N.DOT_GENERATED or w.startswith("__")
                    or w == built.kernel.symbol or _MEMBER.fullmatch(w))}


@pytest.mark.parametrize("target", ["cuda", "hip"])
@pytest.mark.parametrize("kernel,signature", list(_kernels_to_scan()))
def test_generated_code_spells_only_known_names(kernel, signature, target):
    """Each identifier of a rendered kernel is a name the renderer gave out (to a user value
    or derived from one, Rendered.c_names), or one that user names are kept from
    (names.is_reserved, names.DOT_GENERATED, `__` built-ins).  A new name in generated code
    that is neither fails here: add it to names.GENERATED (or DOT_GENERATED)."""
    built = _build(kernel, signature, target)
    assert not _unknown_names(built), \
        f"generated names users are not kept from: {sorted(_unknown_names(built))}"
    assert not {w for w in built.products.c_names if N.is_reserved(w)}


@pytest.fixture
def user_names_apart(monkeypatch):
    """Every user name spelled with `uu_` before it while the test renders, so that no
    name generated code gives out can coincide with one."""
    from tilecc.transpiler import render_names

    spell = render_names.c_identifier
    monkeypatch.setattr(render_names, "c_identifier", lambda name: "uu_" + spell(name))


@pytest.mark.parametrize("target", ["cuda", "hip"])
@pytest.mark.parametrize("kernel,signature", list(_kernels_to_scan()))
def test_generated_names_are_known_whatever_the_user_names(kernel, signature, target,
                                                           user_names_apart):
    """As above, with every user name spelled apart (`uu_` before it): a name generated
    code declares that happens to be a user name of the kernel scanned (a loop index `b`
    beside a parameter `b`) is then caught too; left unreserved, it could hide a user
    value of that name in another kernel."""
    built = _build(kernel, signature, target)
    assert any(w.startswith("uu_") for w in built.products.c_names)  # (the spelling took)
    unknown = {w for w in _unknown_names(built) if not w.startswith("uu_")}
    assert not unknown, f"generated names users are not kept from: {sorted(unknown)}"


# random programs whose scans exchange run totals between warps (seeds 33, 35, 58: a
# cumsum's `before`, `entry` and `line_start` once went unreserved), and libraries' constructs
RANDOM_SEEDS = [33, 35, 58, *range(12)]
WILD_SEEDS = range(100000, 100016)


@pytest.mark.parametrize("wild", [False, True])
def test_random_programs_generated_names_are_known(wild, user_names_apart, tmp_path) -> None:
    """test_generated_names_are_known_whatever_the_user_names over random programs, whose
    constructs reach more of the renderer than the cases above."""
    from tilecc.testing import random_kernels as RK

    unknown = {}
    for seed in WILD_SEEDS if wild else RANDOM_SEEDS:
        prog = RK.generate(seed, RK.WILD_FEATURES if wild else RK.FEATURES)
        kernel = prog.load(str(tmp_path))
        for target in ("cuda", "hip"):
            built = kernel.build(kernel._specs(prog.signature(), {}), target, prog.num_warps,
                                 arch="sm_90" if target == "cuda" else None)
            for w in _unknown_names(built):
                if not w.startswith("uu_"):
                    unknown.setdefault(w, seed)
    assert not unknown, f"generated names users are not kept from (and a seed): {unknown}"


# a declaration in a template: a C type (or a type the renderer fills in) and a literal name
_DECLARED = re.compile(r"(?:\b(?:int|unsigned|float|double|bool|auto|long|char|short)\b|\}\})"
                       r"[\s*&]*(?:const\s+)?([A-Za-z]\w*)\s*(?==|\[|;|,(?!\s*\w+\s*\)))")


def test_templates_declare_locals_only_under_reserved_names() -> None:
    """A local a template declares under a name of its own (a loop index, a scratch
    pointer) sits where the renderer's expressions read user values too: unless user
    names are kept from it, a user value of that name is hidden there (the loop over a
    TMA store's boxes, indexed `c`, once stored a block at `c + c` for a user's column
    `c`).  Names the renderer passes in (`{{ ... }}`) are its own business."""
    import glob

    declared = {}
    for path in glob.glob(os.path.join(os.path.dirname(INCLUDE_DIR), "c_like", "*.j2")):
        with open(path) as f:
            text = f.read()
        text = re.sub(r"\{#.*?#\}|\{% filter comment %\}.*?\{% endfilter %\}", "", text,
                      flags=re.S)
        for name in _DECLARED.findall(re.sub(r"//[^\n]*", "", text)):
            declared.setdefault(name, os.path.basename(path))
    assert len(declared) > 40  # (the pattern finds them)
    unkept = {n: p for n, p in declared.items()
              if not (N.is_reserved(n) or n in N.DOT_GENERATED or n in N.CXX_KEYWORDS)}
    assert not unkept, f"declared under names users are not kept from: {unkept}"


def test_exported_parameter_types_ignore_the_python_names_in_comments(mod):
    from tilecc.export.variants import build_variant

    v = build_variant(mod.params_0, ",".join(["*i32"] + ["i32"] * len(I.param_chunks()[0])),
                      "cuda", 4)
    assert set(v.kernel_ctypes.values()) == {"int*", "int"}, v.kernel_ctypes


def test_grid_reads_a_non_ascii_parameter(tmp_path):
    """`--grid` names parameters as Python spells them, non-ASCII ones included."""
    import importlib.util

    from tilecc.export import export_header

    path = tmp_path / "grid_names.py"
    path.write_text("import tilecc\nimport tilecc.language as tl\n\n@tilecc.jit\n"
                    "def fill(out, 长度, B: tl.constexpr):\n"
                    "    offs = tl.program_id(0) * B + tl.arange(0, B)\n"
                    "    tl.store(out + offs, 1.0, mask=offs < 长度)\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("grid_names", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _, text = export_header([module.fill], {"fill": ["*fp32,i32,128"]}, target="cuda",
                            grid={"fill": "cdiv(长度, B),1,1"}, name="g")
    assert "grid (cdiv(u957f_u5ea6, B), 1, 1)" in text
