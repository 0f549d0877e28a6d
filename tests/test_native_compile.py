"""Tests for tilecc.runtime.native_compile (NVRTC / hiprtc, no GPU needed)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
except ImportError:  # tests/ imported as a package, or --import-mode=importlib
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler

from tilecc.runtime.native_compile import (
    Binary,
    NativeCompileError,
    compile_cuda,
    compile_hip,
    compiler_version,
)

# One kernel for both targets: __launch_bounds__, blockIdx/threadIdx, expf and a
# 16-byte vector load through an alignas(16) struct. No #include anywhere.
KERNEL = textwrap.dedent(
    """\
    struct alignas(16) F4 { float x, y, z, w; };
    extern "C" __global__ void __launch_bounds__(256)
    tile_kernel(const float* __restrict__ a, float* __restrict__ out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (4 * i + 3 < n) {
            F4 v = reinterpret_cast<const F4*>(a)[i];
            out[i] = expf(v.x) + v.y * v.z - v.w;
        }
    }
    """
)

SYNTAX_ERROR = textwrap.dedent(
    """\
    extern "C" __global__ void broken(float* out) {
        int i = threadIdx.x;

        out[i] = 1.0f
    }
    """
)  # the missing ';' is reported at line 4 or 5 depending on the front end

UNUSED_VARIABLE = (
    'extern "C" __global__ void w(float* o) { int unused = 3; o[threadIdx.x] = 1.0f; }\n'
)

NEEDS_DEFINE = 'extern "C" __global__ void d(float* o) { o[threadIdx.x] = SCALE; }\n'


@pytest.fixture
def nvrtc() -> None:
    require_cuda_compiler()


@pytest.fixture
def hiprtc() -> None:
    require_hip_compiler()


def _is_elf(data: bytes) -> bool:
    return data[:4] == b"\x7fELF"


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter that can import this checkout's tilecc."""
    import tilecc

    root = str(Path(tilecc.__path__[0]).parent)
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)


# ---------------------------------------------------------------------- no compiler


def test_import_needs_neither_cupy_nor_hip() -> None:
    code = (
        "import sys, tilecc.runtime.native_compile\n"
        "assert 'cupy' not in sys.modules and 'hip' not in sys.modules, sys.modules.keys()\n"
    )
    out = _run_python(code)
    assert out.returncode == 0, out.stderr


def test_binary_repr_omits_payload() -> None:
    b = Binary("cuda", "sm_90", b"\x00" * 10_000, "log " * 1000)
    assert repr(b) == "Binary(target='cuda', arch='sm_90', shared_bytes=0)"


def test_error_carries_fields() -> None:
    e = NativeCompileError("hip", "gfx90a", "the log", "the source")
    assert (e.target, e.arch, e.log, e.source) == ("hip", "gfx90a", "the log", "the source")
    assert "the log" in str(e) and "gfx90a" in str(e)


def test_compiler_version_rejects_unknown_target() -> None:
    with pytest.raises(ValueError):
        compiler_version("opencl")


def test_cuda_rejects_virtual_arch_before_compiling() -> None:
    with pytest.raises(NativeCompileError, match="sm_XX"):
        compile_cuda(KERNEL, arch="compute_90")


@pytest.mark.parametrize("arch", ["sm_90", "gfx90A", "gfx90a:foo+", "gfx90a::xnack+", ""])
def test_hip_rejects_malformed_target_id(arch: str) -> None:
    with pytest.raises(NativeCompileError, match="target ID"):
        compile_hip(KERNEL, arch=arch)


# --------------------------------------------------------------------------- CUDA


def test_cuda_compiles_kernel_to_cubin(nvrtc: None) -> None:
    b = compile_cuda(KERNEL)
    assert (b.target, b.arch) == ("cuda", "sm_90")
    assert _is_elf(b.data) and b"tile_kernel" in b.data
    assert "ptxas info" in b.log and "registers" in b.log
    assert "for 'sm_90'" in b.log
    assert "warning" not in b.log.lower()
    assert "\x00" not in b.log


def test_cuda_exact_arch(nvrtc: None) -> None:
    b = compile_cuda(KERNEL, arch="sm_80")
    assert b.arch == "sm_80" and "for 'sm_80'" in b.log


def test_cuda_syntax_error_names_line(nvrtc: None) -> None:
    with pytest.raises(NativeCompileError) as info:
        compile_cuda(SYNTAX_ERROR, arch="sm_90")
    e = info.value
    assert (e.target, e.arch, e.source) == ("cuda", "sm_90", SYNTAX_ERROR)
    assert "error" in e.log
    assert "kernel.cu(4)" in e.log or "kernel.cu(5)" in e.log, e.log


def test_cuda_filename_appears_in_log(nvrtc: None) -> None:
    with pytest.raises(NativeCompileError, match=r"my_tile\.cu\(\d+\)"):
        compile_cuda(SYNTAX_ERROR, filename="my_tile.cu")


def test_cuda_warning_reaches_log(nvrtc: None) -> None:
    b = compile_cuda(UNUSED_VARIABLE)
    assert "warning" in b.log and "unused" in b.log


def test_cuda_caller_options_are_passed(nvrtc: None) -> None:
    with pytest.raises(NativeCompileError, match="SCALE"):
        compile_cuda(NEEDS_DEFINE)
    assert _is_elf(compile_cuda(NEEDS_DEFINE, options=["-DSCALE=2.0f"]).data)


def test_cuda_bad_option_raises(nvrtc: None) -> None:
    with pytest.raises(NativeCompileError, match="-Wall"):
        compile_cuda(KERNEL, options=["-Wall"])  # not an NVRTC option


def test_cuda_16bit_storage_struct_with_ptx_cvt(nvrtc: None) -> None:
    # The planned fp16/bf16 scheme: own storage structs + inline PTX, no cuda_fp16.h.
    src = textwrap.dedent(
        """\
        struct alignas(2) f16 { unsigned short bits; };
        struct alignas(2) bf16 { unsigned short bits; };
        extern "C" __global__ void cvt(const float* x, f16* h, bf16* b, float* back) {
            unsigned short r, s; float f;
            asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x[threadIdx.x]));
            asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(s) : "f"(x[threadIdx.x]));
            asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(r));
            h[threadIdx.x].bits = r; b[threadIdx.x].bits = s; back[threadIdx.x] = f;
        }
        """
    )
    b = compile_cuda(src)
    assert "warning" not in b.log.lower()


def test_cuda_compiler_version(nvrtc: None) -> None:
    v = compiler_version("cuda")
    assert v.startswith("nvrtc ") and v.split()[1][0].isdigit()


def test_cuda_binding_is_tilecc_s_own_and_agrees_with_cupy_s(nvrtc: None) -> None:
    """NVRTC is called through ctypes on the library file the cache stamps (no CuPy import
    before a first compile); CuPy's binding, the fallback, sees the same NVRTC and builds
    the same cubin."""
    from tilecc.runtime import native_compile, nvrtc as own

    assert native_compile._nvrtc() is own
    code = textwrap.dedent("""
        import sys
        from tilecc.runtime.native_compile import compile_cuda
        compile_cuda('extern "C" __global__ void k(float* x) { x[0] = 1.0f; }')
        print("cupy" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
    pytest.importorskip("cupy")
    from cupy.cuda import nvrtc as cupy_nvrtc  # an attribute: `import cupy.cuda.nvrtc` fails
    assert own.getVersion() == tuple(cupy_nvrtc.getVersion())
    prog = cupy_nvrtc.createProgram(KERNEL, "kernel.cu", [], [])
    try:
        cupy_nvrtc.compileProgram(prog, ["--gpu-architecture=sm_90", "--std=c++17",
                                         "--ptxas-options=-v"])  # as compile_cuda does
        theirs = bytes(cupy_nvrtc.getCUBIN(prog))
    finally:
        cupy_nvrtc.destroyProgram(prog)
    # CuPy's getCUBIN drops the last byte (it strips a "trailing NUL", as for PTX)
    assert compile_cuda(KERNEL).data in (theirs, theirs + b"\0")


def test_cuda_falls_back_to_cupy_s_binding(nvrtc: None, monkeypatch) -> None:
    """Where tilecc's own binding finds no library file, CuPy's binding compiles."""
    pytest.importorskip("cupy")
    from tilecc.runtime import native_compile, nvrtc as own

    def no_library():
        raise OSError("libnvrtc.so: cannot open shared object file")

    monkeypatch.setattr(own, "getVersion", no_library)
    native_compile._nvrtc.cache_clear()
    try:
        assert native_compile._nvrtc() is not own
        assert _is_elf(compile_cuda(KERNEL).data)
    finally:
        native_compile._nvrtc.cache_clear()


def test_nvrtc_builtins_load_first_from_libnvrtc_s_folder(tmp_path, monkeypatch) -> None:
    """NVRTC 13.0 dlopens libnvrtc-builtins.so.13.0 by bare name, which a libnvrtc loaded by
    path does not find beside it ("failed to open libnvrtc-builtins.so.13.0" unless
    something, torch, loaded it before): the versioned builtins of the same folder are
    loaded first, globally, then libnvrtc."""
    import ctypes

    from tilecc.runtime import nvrtc

    chosen, other = tmp_path / "wheel" / "lib", tmp_path / "toolkit" / "lib64"
    for folder, version in ((chosen, "13.0"), (other, "12.8")):
        folder.mkdir(parents=True)
        for name in ("libnvrtc.so", "libnvrtc.so.13", f"libnvrtc-builtins.so.{version}",
                     "libnvrtc-builtins.alt.so.13.0", "libnvrtc.alt.so.13"):
            (folder / name).touch()
    monkeypatch.setattr(nvrtc, "nvrtc_files", lambda: sorted(
        str(chosen / n) for n in os.listdir(chosen)))
    loaded = []

    class Library:
        def __init__(self, path, mode=ctypes.DEFAULT_MODE):
            loaded.append((path, mode))

        def __getattr__(self, name):  # the calls _lib() declares argument types for
            value = type("Function", (), {})()
            setattr(self, name, value)
            return value

    monkeypatch.setattr(ctypes, "CDLL", Library)
    nvrtc._lib.__wrapped__()
    assert loaded == [(str(chosen / "libnvrtc-builtins.so.13.0"), ctypes.RTLD_GLOBAL),
                      (str(chosen / "libnvrtc.so.13"), ctypes.DEFAULT_MODE)]


_CLI_KERNEL = textwrap.dedent("""\
    import tilecc
    import tilecc.language as tl

    @tilecc.jit
    def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs))
    """)


def _cli_compile(tmp_path, first_on_path: str = "") -> subprocess.CompletedProcess:
    """`python -m tilecc compile` in a fresh process that imports no torch, with an empty
    cache (so NVRTC runs), `first_on_path` (a site-packages) ahead of everything."""
    (tmp_path / "k.py").write_text(_CLI_KERNEL)
    root = str(Path(__file__).resolve().parent.parent)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [first_on_path, root]))
    env["TILECC_CACHE_DIR"] = str(tmp_path / "cache")
    return subprocess.run([sys.executable, "-m", "tilecc", "compile", "k.py:copy", "-s",
                           "*fp32,*fp32,16", "-o", "k.cubin"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_compiles_in_a_fresh_process_without_torch(nvrtc: None, tmp_path) -> None:
    r = _cli_compile(tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("wrote k.cubin (") and (tmp_path / "k.cubin").stat().st_size


@pytest.mark.skipif(not os.environ.get("TILECC_TEST_NVRTC_SITES"),
                    reason="set TILECC_TEST_NVRTC_SITES to site-packages folders, each with "
                    "an nvidia-cuda-nvrtc wheel (13.0, the newest 13.x)")
def test_cli_compiles_with_other_nvrtc_wheels(tmp_path) -> None:
    """Each NVRTC wheel named (a throwaway `pip install --target DIR
    nvidia-cuda-nvrtc==13.0.*`), first on the path, compiles from a fresh process."""
    for i, site in enumerate(os.environ["TILECC_TEST_NVRTC_SITES"].split(os.pathsep)):
        work = tmp_path / str(i)
        work.mkdir()
        r = _cli_compile(work, site)
        assert r.returncode == 0, f"{site}: {r.stderr}"


# ---------------------------------------------------------------------------- HIP


def test_hip_compiles_kernel_without_includes(hiprtc: None) -> None:
    b = compile_hip(KERNEL)
    assert (b.target, b.arch) == ("hip", "gfx90a")
    assert _is_elf(b.data)
    assert b"amdgcn-amd-amdhsa--gfx90a" in b.data
    assert "warning" not in b.log.lower()


def test_hip_extern_c_name_survives(hiprtc: None) -> None:
    b = compile_hip(KERNEL)
    assert b"tile_kernel.kd" in b.data
    mangled = compile_hip(KERNEL.replace('extern "C" ', ""))
    assert b"tile_kernel.kd" not in mangled.data and b"_Z11tile_kernel" in mangled.data


def test_hip_other_arch(hiprtc: None) -> None:
    b = compile_hip(KERNEL, arch="gfx908")
    assert b"amdgcn-amd-amdhsa--gfx908" in b.data
    b = compile_hip(KERNEL, arch="gfx90a:sramecc+:xnack-")
    assert b"gfx90a:sramecc+:xnack-" in b.data


def test_hip_syntax_error_names_line(hiprtc: None) -> None:
    with pytest.raises(NativeCompileError) as info:
        compile_hip(SYNTAX_ERROR)
    e = info.value
    assert (e.target, e.arch, e.source) == ("hip", "gfx90a", SYNTAX_ERROR)
    assert "kernel.hip:4:" in e.log or "kernel.hip:5:" in e.log, e.log
    assert "comgr-" not in e.log  # hiprtc's temp path was rewritten to the filename


def test_hip_filename_appears_in_log(hiprtc: None) -> None:
    with pytest.raises(NativeCompileError, match=r"my_tile\.hip:\d+:\d+: error"):
        compile_hip(SYNTAX_ERROR, filename="my_tile.hip")


def test_hip_warning_reaches_log(hiprtc: None) -> None:
    b = compile_hip(UNUSED_VARIABLE, options=["-Wall"])
    assert "warning" in b.log and "unused" in b.log
    assert "warning" not in compile_hip(KERNEL, options=["-Wall", "-Wextra"]).log


def test_hip_caller_options_are_passed(hiprtc: None) -> None:
    with pytest.raises(NativeCompileError, match="SCALE"):
        compile_hip(NEEDS_DEFINE)
    assert _is_elf(compile_hip(NEEDS_DEFINE, options=["-DSCALE=2.0f"]).data)


def test_hip_bad_option_raises(hiprtc: None) -> None:
    with pytest.raises(NativeCompileError, match="bogus"):
        compile_hip(KERNEL, options=["--bogus-option"])


def test_hip_builtin_16bit_types_without_includes(hiprtc: None) -> None:
    src = (
        'extern "C" __global__ void h(const float* x, _Float16* a, __half* b) {\n'
        "    a[threadIdx.x] = (_Float16)x[threadIdx.x];\n"
        "    b[threadIdx.x] = __float2half(x[threadIdx.x]);\n"
        "}\n"
    )
    compile_hip(src)


def test_hip_unsupported_arch_raises_instead_of_aborting(hiprtc: None) -> None:
    # hiprtc 5.2 abort()s the process on an unknown target; check in a child process.
    code = (
        "from tilecc.runtime.native_compile import compile_hip, NativeCompileError\n"
        "for arch in ('gfx942', 'gfx1030:xnack+', 'gfx900:sramecc+'):\n"
        "    try:\n"
        "        compile_hip('extern \"C\" __global__ void k() {}', arch=arch)\n"
        "    except NativeCompileError as e:\n"
        "        assert 'not supported' in e.log or 'error' in e.log, e.log\n"
        "print('ok')\n"
    )
    out = _run_python(code)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_hip_compiler_version(hiprtc: None) -> None:
    v = compiler_version("hip")
    assert v.startswith("hiprtc ") and "comgr" in v
