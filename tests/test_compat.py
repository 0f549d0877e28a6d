"""The compatibility mode (`tilecc.compat`): Triton code runs through tilecc unedited.

Each test runs in a fresh Python (a subprocess), since installing the mode replaces
`triton` in `sys.modules` for the life of the process."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "tests" / "triton_style"


def _python(*args, env=None, cwd=None, timeout=300):
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    full_env = {**os.environ, "PYTHONPATH": path, **(env or {})}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=timeout)


def _in_compat(code: str, **kwargs):
    """Run `code` with the mode installed first (as `python -m tilecc.compat -c`)."""
    return _python("-m", "tilecc.compat", "-c", textwrap.dedent(code), **kwargs)


def test_a_triton_style_library_runs_unedited_on_the_interpreter():
    r = _python("-m", "tilecc.compat", "check.py", cwd=LIBRARY,
                env={"TILECC_INTERPRET": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == "17 of 17 ok", r.stdout
    assert not any(line.startswith("MISMATCH") for line in lines)


@pytest.mark.gpu
def test_a_triton_style_library_runs_unedited_on_the_gpu():
    pytest.importorskip("torch")
    r = _python("-m", "tilecc.compat", "check.py", "cuda", cwd=LIBRARY)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "17 of 17 ok", r.stdout


def test_triton_names_are_tilecc_names():
    r = _in_compat("""
        import tilecc, tilecc.language
        import triton
        import triton.language as tl
        from triton.language import math, random
        from triton.runtime.jit import JITFunction
        from triton.runtime.autotuner import Autotuner, Config
        from triton.runtime.driver import driver
        from triton.runtime.errors import OutOfResources
        from triton.testing import do_bench, assert_close, perf_report, Benchmark
        # triton.jit: tilecc's, reading TRITON_INTERPRET first (tilecc.compat.triton.runtime.jit)
        assert triton.jit is tilecc.compat.triton.runtime.jit.jit and triton.autotune is tilecc.autotune
        assert triton.Config is tilecc.Config is Config and triton.heuristics is tilecc.heuristics
        assert triton.cdiv is tilecc.cdiv and triton.next_power_of_2(33) == 64
        assert tl is tilecc.language and tl.program_id is tilecc.language.program_id
        assert math is tilecc.language.math and random is tilecc.language.random
        assert JITFunction is tilecc.JITFunction and OutOfResources is tilecc.errors.OutOfResources
        assert triton.runtime.driver is driver and driver.active is driver.default
        assert triton.__version__ == "3.6.0"
        print("names ok")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "names ok"


def test_compiler_internals_are_refused_with_what_to_use_instead():
    r = _in_compat("""
        import triton
        for name in ["triton.compiler", "triton.backends.nvidia.compiler",
                     "triton._C.libtriton.ir",
                     "triton.tools.disasm", "triton.runtime.build"]:
            try:
                __import__(name)
            except ImportError as e:
                print(name, "->", e)
            else:
                print(name, "imported")
        try:
            triton.compile
        except AttributeError as e:
            print("triton.compile ->", e)
    """)
    assert r.returncode == 0, r.stderr
    out = dict(line.split(" -> ", 1) for line in r.stdout.splitlines())
    assert "kernel.source()" in out["triton.compiler"]
    assert "NVRTC or hiprtc" in out["triton.backends.nvidia.compiler"]
    assert "not part of tilecc" in out["triton._C.libtriton.ir"]
    assert "tilecc export" in out["triton.tools.disasm"]
    assert "C extensions of Triton's launchers" in out["triton.runtime.build"]
    assert "kernel.compile()" in out["triton.compile"]


def test_the_blas_baselines_of_tritons_tutorials_are_there_and_nothing_else_of_its_extension():
    r = _in_compat("""
        from triton._C.libtriton import amd, nvidia
        print(nvidia.cublas.CublasLt.__name__, amd.hipblas.HipblasLt.__name__)
        try:
            nvidia.passes
        except AttributeError as e:
            print(e)
    """)
    assert r.returncode == 0, r.stderr
    names, refused = r.stdout.splitlines()
    assert names == "CublasLt HipblasLt"
    assert "not part of tilecc" in refused and "CublasLt" in refused


def test_the_blas_baseline_multiplies_by_the_transposed_b():
    pytest.importorskip("torch")
    r = _in_compat("""
        import torch
        from triton._C.libtriton import nvidia
        blas = nvidia.cublas.CublasLt(torch.empty(1024, dtype=torch.uint8))
        a, b = torch.randn(8, 16), torch.randn(4, 16)
        c, d = torch.empty(8, 4), torch.empty(8, 4)
        blas.matmul(a, b, c)
        blas.gemm(a, b, c, d, 2.0, 0.5)
        print(torch.allclose(c, a @ b.T, atol=1e-5), torch.allclose(d, 2.5 * (a @ b.T), atol=1e-5))
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True"]


def test_install_refuses_once_triton_is_imported():
    r = _python("-c", textwrap.dedent("""
        import sys, types
        sys.modules["triton"] = types.ModuleType("triton")  # stands for a real Triton
        import tilecc.compat
        try:
            tilecc.compat.install()
        except RuntimeError as e:
            print(e)
        assert not tilecc.compat.installed()
    """))
    assert r.returncode == 0, r.stderr
    assert "Triton is already imported (triton)" in r.stdout
    assert "python -m tilecc.compat script.py" in r.stdout


def test_uninstall_gives_triton_back():
    r = _python("-c", textwrap.dedent("""
        import sys
        import tilecc.compat
        tilecc.compat.install()
        tilecc.compat.install()  # idempotent
        import triton.language
        assert sys.modules["triton.language"].__name__ == "tilecc.language"
        tilecc.compat.uninstall()
        assert not tilecc.compat.installed()
        assert not any(n == "triton" or n.startswith("triton.") for n in sys.modules)
        print("ok")
    """))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_torch_sees_no_triton_while_installed():
    """torch._dynamo (loaded by transformers) imports Triton's compiler internals when its
    probe finds Triton; under the mode the probe says no, and uninstall() restores it.
    A stand-in torch.utils._triton keeps the test free of PyTorch."""
    r = _python("-c", textwrap.dedent("""
        import sys, types
        for name in ("torch", "torch.utils", "torch.utils._triton"):
            sys.modules[name] = types.ModuleType(name)
        probes = sys.modules["torch.utils._triton"]
        probes.has_triton_package = lambda: True
        probes.has_triton = lambda: True
        import tilecc.compat
        tilecc.compat.install()
        assert probes.has_triton_package() is False and probes.has_triton() is False
        tilecc.compat.uninstall()
        assert probes.has_triton_package() is True and probes.has_triton() is True
        print("ok")
    """))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_torch_probes_are_patched_when_imported_not_at_install(tmp_path):
    """install() does not import PyTorch: the probes are patched when the program imports
    them (a stand-in torch package on the path)."""
    probes = tmp_path / "torch" / "utils"
    probes.mkdir(parents=True)
    (tmp_path / "torch" / "__init__.py").write_text("")
    (probes / "__init__.py").write_text("")
    (probes / "_triton.py").write_text("def has_triton_package():\n    return True\n"
                                       "def has_triton():\n    return True\n")
    r = _python("-c", textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import tilecc.compat
        tilecc.compat.install()
        assert "torch" not in sys.modules
        from torch.utils import _triton as probes
        assert probes.has_triton_package() is False and probes.has_triton() is False
        tilecc.compat.uninstall()
        assert probes.has_triton_package() is True and probes.has_triton() is True
        print("ok")
    """))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_host_side_tensor_descriptors_under_the_mode(tmp_path):
    """Libraries import `TensorDescriptor` at module level (Liger's mlp) and launch kernels
    with them: both work, as do descriptors made in the kernel."""
    script = tmp_path / "descriptors.py"  # kernels need a file to read their source from
    script.write_text(textwrap.dedent("""
        import numpy as np
        import triton
        import triton.language as tl
        from triton.tools.tensor_descriptor import TensorDescriptor

        class Tensor:  # the torch.Tensor methods from_tensor reads
            shape = (64, 32)
            def stride(self):
                return (32, 1)

        d = TensorDescriptor.from_tensor(Tensor(), block_shape=[16, 32])
        assert (d.shape, d.strides, d.block_shape, d.padding) == ([64, 32], [32, 1], [16, 32], "zero")
        try:
            TensorDescriptor(None, [4, 4], [1, 4], [2, 2])
        except ValueError as e:
            print("strides ->", e)

        @triton.jit
        def k(desc, out):  # a host-side descriptor as an argument
            tl.store(out + tl.arange(0, 32), tl.sum(desc.load([16, 0]), axis=0))

        a = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
        out = np.zeros(32, np.float32)
        k.interpret[(1,)](TensorDescriptor.from_tensor(a, block_shape=[16, 32]), out)
        print("launch ->", out.tolist() == a[16:32].sum(axis=0).tolist())
        try:
            k.interpret[(1,)](d, out)  # its base is no array
        except TypeError as e:
            print("no array ->", e)

        @triton.jit
        def doubled(x_ptr, n, BLOCK: tl.constexpr):  # a descriptor made in the kernel
            d = tl.make_tensor_descriptor(x_ptr, [n], [1], [BLOCK])
            d.store([0], d.load([0]) * 2)

        triton.set_allocator(lambda size, alignment, stream: None)  # accepted, not needed
        x = np.arange(8, dtype=np.float32)
        doubled.interpret[(1,)](x, 5, BLOCK=8)
        print("kernel ->", x.tolist())
    """))
    r = _python("-m", "tilecc.compat", str(script))
    assert r.returncode == 0, r.stderr
    out = dict(line.split(" -> ", 1) for line in r.stdout.splitlines())
    assert "must be contiguous" in out["strides"]
    assert out["kernel"] == str([0.0, 2.0, 4.0, 6.0, 8.0, 5.0, 6.0, 7.0])
    assert out["launch"] == "True"
    assert "its base must be an array" in out["no array"]


def test_runner_forms_and_usage():
    r = _python("-m", "tilecc.compat")
    assert r.returncode == 2 and "usage: python -m tilecc.compat script.py" in r.stderr
    r = _python("-m", "tilecc.compat", "no_such_script.py")
    assert r.returncode == 2 and "no_such_script.py: no such file" in r.stderr
    r = _python("-m", "tilecc.compat", "-c", "import sys, triton; print(triton.__version__, "
                "sys.argv[1:])", "a", "b")
    assert r.returncode == 0 and r.stdout.strip() == "3.6.0 ['a', 'b']", r.stderr
    r = _python("-m", "tilecc.compat", "-m", "triton_style.check", cwd=ROOT / "tests",
                env={"TILECC_INTERPRET": "1",
                     "PYTHONPATH": os.pathsep.join([str(ROOT), str(LIBRARY),
                                                    os.environ.get("PYTHONPATH", "")])})
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "17 of 17 ok", r.stdout + r.stderr


# A Triton program as Triton's interpreter runs it (TRITON_INTERPRET=1): `{arrays}` makes
# the arrays, `{check}` compares; a heuristic and a callable grid on the way
_INTERPRETED = """
{preamble}
import triton
import triton.language as tl
{arrays_import}

@triton.heuristics({{"EVEN": lambda a: a["n"] % a["BLOCK"] == 0}})
@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = None if EVEN else offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + tl.load(y_ptr + offs, mask=mask), mask=mask)

x, y, out = {arrays}
axpy[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, y, out, 2.0, 100, BLOCK=32)
{check}
print("interpreted", type(out).__module__.split(".")[0])
"""


@pytest.mark.parametrize("where", ["environment", "program"])
def test_triton_interpret_runs_launches_on_the_interpreter(where, tmp_path):
    """TRITON_INTERPRET=1 set for the program, or by it before `import triton` (read when
    triton.jit decorates, as Triton reads it): NumPy arrays in, the results in them."""
    script = tmp_path / "axpy.py"
    script.write_text(_INTERPRETED.format(
        preamble='import os\nos.environ["TRITON_INTERPRET"] = "1"' if where == "program" else "",
        arrays_import="import numpy as np",
        arrays="np.arange(100, dtype=np.float32), np.ones(100, np.float32), "
               "np.zeros(100, np.float32)",
        check="assert (out == 2 * x + y).all(), out"))
    env = {"TRITON_INTERPRET": "1"} if where == "environment" else {}
    r = _python("-m", "tilecc.compat", str(script), env={**env, "TILECC_INTERPRET": ""})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "interpreted numpy"


def test_triton_interpret_takes_cpu_torch_tensors(tmp_path):
    """As Triton's interpreter: CPU torch tensors in, the results written into them."""
    pytest.importorskip("torch")
    script = tmp_path / "axpy_torch.py"
    script.write_text(_INTERPRETED.format(
        preamble="", arrays_import="import torch",
        arrays="torch.arange(100, dtype=torch.float32), torch.ones(100), torch.zeros(100)",
        check="assert torch.equal(out, 2 * x + y), out"))
    r = _python("-m", "tilecc.compat", str(script),
                env={"TRITON_INTERPRET": "true", "TILECC_INTERPRET": ""})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "interpreted torch"


@pytest.mark.parametrize("value,interprets", [("y", True), ("On", True), ("1", True),
                                              (" 1", False), ("", False), ("0", False)])
def test_triton_interpret_is_read_with_tritons_true_words(monkeypatch, value, interprets):
    """Triton's switches are true for 1 / true / on / y / yes in any case, unstripped."""
    from tilecc.compat.triton.runtime.jit import follow_triton_interpret

    monkeypatch.delenv("TILECC_INTERPRET", raising=False)
    monkeypatch.setenv("TRITON_INTERPRET", value)
    follow_triton_interpret()
    assert (os.environ.get("TILECC_INTERPRET") == "1") is interprets


def test_tritons_default_fp_fusion_is_read_at_each_compile(tmp_path):
    """TRITON_DEFAULT_FP_FUSION is the default of enable_fp_fusion under the mode, read when
    a kernel compiles (Triton's test_enable_fp_fusion sets it after `@triton.jit`);
    tilecc's own TILECC_DEFAULT_FP_FUSION wins where both are set; once the mode is
    uninstalled, Triton's spelling is no longer read."""
    script = tmp_path / "fusion.py"
    script.write_text(textwrap.dedent("""
        import os
        import tilecc.compat
        import triton
        import triton.language as tl

        for name in ("TRITON_DEFAULT_FP_FUSION", "TILECC_DEFAULT_FP_FUSION"):
            os.environ.pop(name, None)

        @triton.jit
        def mul_add(data):
            ptrs = data + tl.arange(0, 128)
            tl.store(ptrs, tl.load(ptrs) * 1.5 + 1.0)

        def fused():
            source = mul_add.source("*fp32")
            assert ("__fmul_rn" not in source) is mul_add.options().enable_fp_fusion
            return mul_add.options().enable_fp_fusion

        seen = [fused()]
        os.environ["TRITON_DEFAULT_FP_FUSION"] = "0"
        seen.append(fused())
        os.environ["TRITON_DEFAULT_FP_FUSION"] = "yes"
        seen.append(fused())
        os.environ["TILECC_DEFAULT_FP_FUSION"] = "0"
        seen.append(fused())
        del os.environ["TILECC_DEFAULT_FP_FUSION"]
        os.environ["TRITON_DEFAULT_FP_FUSION"] = "0"
        tilecc.compat.uninstall()
        seen.append(fused())
        print(seen)
    """))
    r = _python("-m", "tilecc.compat", str(script))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[True, False, True, False, True]"


def test_do_bench_without_a_gpu_says_so_in_one_message(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text("from triton.testing import do_bench\n\ndo_bench(lambda: None)\n")
    r = _python("-m", "tilecc.compat", str(script), env={"CUDA_VISIBLE_DEVICES": ""})
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("tilecc.errors.NoDeviceError: triton.testing.do_bench times "
                           "kernels with GPU events, and no usable GPU was found"), r.stderr
    assert "perf_counter" in last and "cupy" not in last.split("(")[0]
    # the program's frames, not the runner's (as `python bench.py` shows them)
    assert 'bench.py", line 3, in <module>' in r.stderr and "runpy" not in r.stderr


def test_perf_report_and_assert_close():
    r = _in_compat("""
        import numpy as np
        import triton.testing as tt

        @tt.perf_report(tt.Benchmark(x_names=["N"], x_vals=[1, 2, 4], line_arg="provider",
                                     line_vals=["a", "b"], line_names=["A", "B"],
                                     plot_name="demo", args={"scale": 10}))
        def bench(N, provider, scale):
            return N * scale + (1 if provider == "b" else 0), 0.0, 0.0

        bench.run(print_data=True)

        # several x names: a column each (Triton's table), line columns "<name> (<ylabel>)"
        @tt.perf_report(tt.Benchmark(x_names=["M", "K"], x_vals=[(1, 2), (3, 4)],
                                     line_arg="p", line_vals=[1, 2], line_names=["one", "two"],
                                     ylabel="ms", plot_name="grid", args={}))
        def bench2(M, K, p):
            return M * K * p

        bench2.run(print_data=True, diff_col=True)  # (Triton's: a Diff of 2 columns only)
        tt.assert_close(np.array([1.0, np.nan]), np.array([1.005, np.nan]))
        try:
            tt.assert_close(np.array([1.0]), np.array([1.1]))
        except AssertionError:
            print("refused")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["demo:", "N  A ()  B ()", "1    10    11", "2    20    21",
                                     "4    40    41",
                                     "grid:", "M  K  one (ms)  two (ms)",
                                     "1  2         2         4",
                                     "3  4        12        24", "refused"]


def test_emit_turns_a_library_kernel_into_cuda():
    r = _python("-m", "tilecc", "emit", f"{LIBRARY / 'ops.py'}:_rms_norm_forward_kernel",
                "-s", "*fp32,i32,*fp32,i32,*fp32,*fp32,i32,fp32,fp32,1024",
                cwd=LIBRARY)
    assert r.returncode == 0, r.stderr
    assert "void __launch_bounds__(128) rms_norm_forward_kernel_(" in r.stdout  # `_` + lower: reserved in C++
    assert "tc::rsqrt(mean_square + eps)" in r.stdout


def test_amd_device_properties_have_the_keys_of_tritons_amd_driver(monkeypatch):
    # Triton's AMD driver also reports max_threads_per_sm (occupancy estimates read it)
    import importlib
    import types

    drv = importlib.import_module("tilecc.compat.triton.runtime.driver")  # the module

    class Props:
        sharedMemPerBlock, regsPerBlock, multiProcessorCount, warpSize = 65536, 65536, 104, 64
        clockRate, memoryClockRate, memoryBusWidth = 1700000, 1600000, 4096
        gcnArchName, maxThreadsPerMultiProcessor = b"gfx90a:sramecc+:xnack-", 2048

    hip = types.SimpleNamespace(hipDeviceProp_t=Props, hipGetDeviceProperties=lambda p, d: None)
    monkeypatch.setitem(sys.modules, "hip", types.SimpleNamespace(hip=hip))
    monkeypatch.setattr(drv, "_backend", lambda: "hip")
    props = drv.driver.active.utils.get_device_properties(0)
    assert set(props) == {"max_shared_mem", "max_num_regs", "multiprocessor_count",
                          "sm_clock_rate", "mem_clock_rate", "mem_bus_width", "arch",
                          "warpSize", "max_threads_per_sm"}
    assert props["max_threads_per_sm"] == 2048 and props["warpSize"] == 64
    assert props["arch"] == "gfx90a:sramecc+:xnack-"


def test_device_queries_without_a_gpu_raise_tritons_runtime_error(monkeypatch):
    # Triton's driver raises RuntimeError ("0 active drivers") on a machine without a GPU
    import importlib

    drv = importlib.import_module("tilecc.compat.triton.runtime.driver")
    from tilecc.runtime.launch import cuda

    def no_runtime():
        raise ModuleNotFoundError("No module named 'cupy_backends'")

    monkeypatch.setattr(drv, "_torch", lambda: None)
    monkeypatch.setattr(drv, "_backend", lambda: "cuda")
    monkeypatch.setattr(cuda, "current_device", no_runtime)
    with pytest.raises(RuntimeError, match="0 active drivers: no CUDA or HIP device"):
        drv.driver.active.get_current_device()
    with pytest.raises(RuntimeError, match="TRITON_INTERPRET=1"):
        drv.driver.active.get_active_torch_device()


@pytest.mark.gpu
def test_driver_and_do_bench_on_the_gpu(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "bench_add.py"  # a file: kernels need their source, as in Triton
    script.write_text(textwrap.dedent("""
        import torch, triton, triton.language as tl
        from triton.testing import do_bench
        active = triton.runtime.driver.active
        props = active.utils.get_device_properties(active.get_current_device())
        target = active.get_current_target()
        assert props["multiprocessor_count"] > 0 and props["warpSize"] == 32, props
        assert props["max_shared_mem"] >= 48 * 1024, props
        assert target.backend == "cuda" and target.arch >= 70 and target.warp_size == 32
        assert active.get_active_torch_device() == torch.device("cuda", 0)

        @triton.jit
        def add(x, y, n, BLOCK: tl.constexpr):
            o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y + o, tl.load(x + o, mask=o < n) + 1, mask=o < n)

        x = torch.randn(1 << 20, device="cuda")
        y = torch.empty_like(x)
        run = lambda: add[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        mean = do_bench(run)
        q = do_bench(run, quantiles=[0.5, 0.2, 0.8])
        assert mean > 0 and len(q) == 3 and q[1] <= q[0] <= q[2], (mean, q)
        assert torch.equal(y, x + 1)
        print("ok")
    """))
    r = _python("-m", "tilecc.compat", str(script))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_torch_inductor_runtime_loads_as_without_triton(tmp_path):
    """torch.compile loads inductor's triton_compat, which imports Triton's compiler
    (`from triton.compiler import CompiledKernel`) whenever `import triton` succeeds: under
    the mode it loads as on a machine without Triton, and the program's `triton` stays
    tilecc (a stand-in torch package on the path)."""
    runtime = tmp_path / "torch" / "_inductor" / "runtime"
    runtime.mkdir(parents=True)
    for d in (tmp_path / "torch", tmp_path / "torch" / "_inductor", runtime):
        (d / "__init__.py").write_text("")
    (runtime / "triton_compat.py").write_text(
        "try:\n    import triton\nexcept ImportError:\n    triton = None\n"
        "if triton is not None:\n    from triton.compiler import CompiledKernel\n")
    r = _python("-c", textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import tilecc.compat
        tilecc.compat.install()
        import triton
        from torch._inductor.runtime import triton_compat
        assert triton_compat.triton is None
        assert sys.modules["triton"] is triton and triton.jit is not None
        print("ok")
    """))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
