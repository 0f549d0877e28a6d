"""What libraries written for Triton read and call on its objects: a kernel's attributes,
`kernel.warmup(...)` and the compiled kernel it returns (Triton's tutorial 02 sizes its
grid with it), autotuner and heuristics subclasses that call Triton's constructors, the
language's module-level names, `triton.tools.mxfp`."""

import ast
import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from conftest_compilers import require_cuda_compiler, require_hip_compiler

ROOT = Path(__file__).resolve().parents[1]


@tilecc.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    # Triton's tutorial 02: each program takes rows row_start, row_start + step, ...
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        col_offsets = tl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = tl.load(input_ptr + row_idx * input_row_stride + col_offsets, mask=mask,
                      other=-float("inf"))
        numerator = tl.exp(row - tl.max(row, axis=0))
        tl.store(output_ptr + row_idx * output_row_stride + col_offsets,
                 numerator / tl.sum(numerator, axis=0), mask=mask)


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_kernel_attributes_libraries_read():
    k = softmax_kernel
    names = ["output_ptr", "input_ptr", "input_row_stride", "output_row_stride", "n_rows",
             "n_cols", "BLOCK_SIZE", "num_stages"]
    assert k.arg_names == names
    assert [p.name for p in k.params] == names and [p.num for p in k.params] == list(range(8))
    assert [p.is_constexpr for p in k.params] == [False] * 6 + [True] * 2
    assert k.params[6].annotation == "constexpr" and not k.params[0].has_default
    assert k.constexprs == [6, 7]
    assert k.fn is softmax_kernel.__wrapped__ and inspect.isfunction(k.fn)
    assert k.src.startswith("def softmax_kernel(") and "tl.range" in k.src
    assert k.raw_src[0].startswith("@tilecc.jit")  # from the first decorator, as Triton's
    assert k.starting_line_number == k.fn.__code__.co_firstlineno
    assert isinstance(k.parse(), ast.Module) and k.parse().body[0].name == "softmax_kernel"
    assert len(k.cache_key) == 64 and k.cache_key == k.cache_key == k.hash
    assert list(k.signature.parameters) == names
    assert k.get_capture_scope()["tl"] is tl and not k.is_gluon()
    assert k.repr(None).endswith("softmax_kernel")
    assert isinstance(k, tilecc.runtime.jit.KernelInterface)


def test_jit_takes_tritons_options():
    def body(x_ptr, n, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.arange(0, BLOCK), mask=tl.arange(0, BLOCK) < n)

    k = tilecc.jit(do_not_specialize=["n"], debug=True, noinline=True, version=2,
                   repr=lambda _: "mine", launch_metadata=None)(body)
    assert k.do_not_specialize == ["n"] and k.params[1].do_not_specialize
    assert not k.params[0].do_not_specialize and k.version == 2 and k.repr(None) == "mine"


def test_pre_run_hooks_run_before_each_launch(monkeypatch):
    monkeypatch.setenv("TILECC_INTERPRET", "1")

    @tilecc.jit
    def fill(x_ptr, value, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.full((BLOCK,), value, tl.float32))

    seen = []
    fill.add_pre_run_hook(lambda *args, **kwargs: seen.append((args[1], kwargs)))
    x = np.zeros(8, np.float32)
    fill[(1,)](x, 3.0, BLOCK=8)
    assert seen == [(3.0, {"BLOCK": 8})] and (x == 3.0).all()


def test_warmup_compiles_without_a_gpu_and_describes_the_kernel(monkeypatch):
    """Tutorial 02's use: warm up, read registers and shared memory, launch the compiled
    kernel with every argument (here on the interpreter)."""
    require_cuda_compiler()
    x = np.random.default_rng(0).random((37, 100), dtype=np.float32)
    y = np.empty_like(x)
    kernel = softmax_kernel.warmup(y, x, 100, 100, 37, 100, BLOCK_SIZE=128, num_stages=4,
                                   num_warps=8, grid=(1,))
    kernel._init_handles()  # without a GPU: what the compiler reported stays
    assert isinstance(kernel.n_regs, int) and kernel.n_regs > 0 and kernel.n_spills == 0
    assert kernel.metadata.num_warps == 8 and kernel.metadata.num_stages == 4
    assert kernel.metadata.shared > 0  # the reductions' partial results between warps
    assert kernel.metadata.target.backend == "cuda" and kernel.n_max_threads == 256
    assert set(kernel.asm) == {"cu", "cubin", "ptx"} and kernel.asm["cubin"] == kernel.kernel
    assert "softmax_kernel" in kernel.asm["cu"] and ".entry softmax_kernel" in kernel.asm["ptx"]
    with pytest.raises(KeyError, match="ttgir"):
        kernel.asm["ttgir"]
    # a dtype in place of a tensor compiles the same kernel
    again = softmax_kernel.warmup(tilecc.runtime.tensor_wrappers.MockTensor(tl.float32), x,
                                  100, 100, 37, 100, BLOCK_SIZE=128, num_stages=4,
                                  num_warps=8, grid=(1,))
    assert again.kernel == kernel.kernel
    monkeypatch.setenv("TILECC_INTERPRET", "1")
    kernel[(4, 1, 1)](y, x, 100, 100, 37, 100, 128, 4)
    np.testing.assert_allclose(y, _softmax(x), rtol=1e-5, atol=1e-7)


def test_compiled_kernel_on_hip_reads_the_code_object():
    require_hip_compiler()
    from tilecc.runtime import compiler
    from tilecc.runtime.compiled import CompiledKernel

    def built(num_warps):
        specs = softmax_kernel._specs("*fp32,*fp32,i32,i32,i32,i32",
                                      {"BLOCK_SIZE": 256, "num_stages": 2})
        art = compiler.compile(softmax_kernel, specs, "hip",
                               softmax_kernel.options(num_warps=num_warps))
        return CompiledKernel(softmax_kernel, art, {"num_warps": num_warps}, None, {})

    one, four = built(1), built(4)
    assert one.n_regs > 0 and four.n_regs > 0 and set(one.asm) == {"hip", "hsaco"}
    assert four.metadata.shared > one.metadata.shared  # more warps: more partial results
    assert four.metadata.target == ("hip", "gfx90a", 64) and four.n_max_threads == 256


@pytest.mark.gpu
def test_tutorial_02_sizes_its_grid_by_occupancy_on_the_gpu():
    torch = pytest.importorskip("torch")
    from tilecc.compat.triton.runtime.driver import driver

    x = torch.randn(1823, 781, device="cuda")
    y = torch.empty_like(x)
    props = driver.active.utils.get_device_properties(torch.cuda.current_device())
    kernel = softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), *x.shape, BLOCK_SIZE=1024,
                                   num_stages=4, num_warps=8, grid=(1,))
    kernel._init_handles()
    assert kernel.function is not None and 0 < kernel.n_regs <= 255
    assert kernel.metadata.shared < props["max_shared_mem"]
    occupancy = props["max_num_regs"] // (kernel.n_regs * 32 * 8)
    if kernel.metadata.shared:
        occupancy = min(occupancy, props["max_shared_mem"] // kernel.metadata.shared)
    programs = min(props["multiprocessor_count"] * max(occupancy, 1), x.shape[0])
    kernel[(programs, 1, 1)](y, x, x.stride(0), y.stride(0), *x.shape, 1024, 4)
    torch.testing.assert_close(y, torch.softmax(x, dim=1))


# --- under the compatibility mode -------------------------------------------------------------

def _run_compat(tmp_path, source: str, interpret: bool = True):
    script = tmp_path / "library.py"  # kernels need a file to read their source from
    script.write_text(textwrap.dedent(source))
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = {**os.environ, "PYTHONPATH": path, "TILECC_CACHE_DIR": str(tmp_path / "cache")}
    if interpret:
        env["TILECC_INTERPRET"] = "1"
    r = subprocess.run([sys.executable, "-m", "tilecc.compat", str(script)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return dict(line.split(" -> ", 1) for line in r.stdout.splitlines() if " -> " in line)


def test_autotuner_and_heuristics_subclasses_call_tritons_constructors(tmp_path):
    """A linear-attention library subclasses Triton's Autotuner, calls its constructor
    with Triton's positional arguments and overrides `run` with Triton's internals."""
    out = _run_compat(tmp_path, """
        import builtins
        import numpy as np
        import triton
        import triton.language as tl

        class Autotuner(triton.runtime.Autotuner):
            def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value,
                         pre_hook=None, post_hook=None, prune_configs_by=None, warmup=None,
                         rep=None, use_cuda_graph=False):
                super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value,
                                 pre_hook, post_hook, prune_configs_by, warmup, rep,
                                 use_cuda_graph)

            def run(self, *args, **kwargs):
                self.nargs = dict(zip(self.arg_names, args))
                key = "_".join(str(self.nargs.get(k) or kwargs.get(k)) for k in self.keys)
                if key not in self.cache:
                    pruned = self.prune_configs(kwargs)
                    timings = {c: self._bench(*args, config=c, **kwargs) for c in pruned}
                    self.cache[key] = builtins.min(timings, key=timings.get)
                    self.pre_hook({**self.nargs, **kwargs, **self.cache[key].all_kwargs()},
                                  reset_only=True)
                    self.configs_timings = timings
                self.best_config = self.cache[key]
                result = self.fn.run(*args, **kwargs, **self.best_config.all_kwargs())
                self.nargs = None
                return result

        class Heuristics(triton.runtime.Heuristics):
            def __init__(self, fn, arg_names, values):
                super().__init__(fn, arg_names, values)

        @triton.jit
        def accumulate(x, out, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out + offs, tl.load(out + offs, mask=m) + 2 * tl.load(x + offs, mask=m),
                     mask=m)

        configs = [triton.Config({"BLOCK": 32}, num_warps=1), triton.Config({"BLOCK": 64})]
        tuned = Autotuner(accumulate, accumulate.arg_names, configs, ["n"], None, ["out"])
        x, out = np.arange(100, dtype=np.float32), np.ones(100, np.float32)
        tuned[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, out, 100)
        print("tuned ->", np.array_equal(out, 1 + 2 * x), tuned.best_config in configs,
              sorted(tuned.cache), len(tuned.configs_timings), tuned.base_fn.__name__)
        heuristic = Heuristics(accumulate, accumulate.arg_names, {"BLOCK": lambda a: 128})
        out = np.zeros(100, np.float32)
        heuristic[(1,)](x, out, 100)
        print("heuristics ->", np.array_equal(out, 2 * x), heuristic.arg_names[:3])
        print("warmup ->", [k.metadata.num_warps for k in tuned.warmup(x, out, 100, grid=(1,))]
              if hasattr(tuned, "warmup") else None)
    """)
    assert out["tuned"] == "True True ['100'] 2 accumulate"
    assert out["heuristics"] == "True ['x', 'out', 'n']"


def test_language_names_libraries_read(tmp_path):
    out = _run_compat(tmp_path, """
        import numpy as np
        import triton
        import triton.language as tl
        from triton.language.extra import cuda

        print("constants ->", tl.core.CONSTEXPR_0.value, tl.TRITON_MAX_TENSOR_NUMEL,
              tl.core.pi32_t == tl.pointer_type(tl.int32))
        print("dtypes ->", tl.dtype("fp16") == tl.float16, tl.float32.kind() ==
              tl.dtype.KIND.FLOATING, tl.int8.int_signedness == tl.dtype.SIGNEDNESS.SIGNED,
              tl.uint8.mangle(), tl.float8e5.is_fp8e5(), tl.core.get_int_dtype(16, False))
        names = ["int1", "int8", "uint64", "float16", "bfloat16", "float32", "float8e4nv"]
        print("repr ->", all(repr(eval("triton.language." + n)) == "triton.language." + n
                             for n in names), str(tl.int8))
        print("classes ->", isinstance(tl.range, type), list(
            __import__("inspect").signature(tl.tensor.to).parameters)[:2])

        @triton.constexpr_function
        def log2(n):
            return n.bit_length() - 1

        @triton.jit
        def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)
            tl.device_assert(x < 100, "small", mask=offs < 4)  # only where masked in
            y = tl.add(tl.mul(x, 2), tl.sub(x, 1)) + log2(BLOCK) + cuda.num_warps()
            cuda.gdc_wait()
            tl.store(y_ptr + offs, y)
            cuda.gdc_launch_dependents()

        x = np.array([1, 2, 3, 4, 500, 600, 700, 800], np.int32)
        y = np.zeros_like(x)
        k[(1,)](x, y, BLOCK=8, num_warps=2)
        print("kernel ->", (y == 3 * x - 1 + 3 + 2).all())
    """)
    assert out["constants"] == "0 1048576 True"
    assert out["dtypes"] == "True True True u8 True uint16"
    assert out["repr"] == "True int8"  # eval(repr(dtype)) round-trips, as in Triton
    assert out["classes"] == "True ['self', 'dtype']"
    assert out["kernel"] == "True"


def test_nvidia_helpers_read_special_registers():
    require_cuda_compiler()
    from tilecc.language.extra import cuda

    @tilecc.jit
    def clocks(out):
        tl.store(out + tl.arange(0, 2), tl.join(cuda.globaltimer(), cuda.smid().to(tl.int64)))

    src = clocks.source("*i64")
    assert "globaltimer()" in src and "smid()" in src  # tilecc.h reads the registers
    clocks.compile("*i64")


def test_mxfp_tensors():
    torch = pytest.importorskip("torch")
    from tilecc.compat.triton.tools.mxfp import MXFP4Tensor, MXScaleTensor

    x = torch.tensor([0.0, -0.0, 0.25, 0.75, 1.25, 2.5, 5.0, 0.3, -1.6, 7.0, float("inf"),
                      float("nan"), -100.0])
    codes = MXFP4Tensor(x).data
    # nearest e2m1 value, ties to the even code: 0.25 -> 0, 0.75 -> 1.0, 1.25 -> 1.0,
    # 2.5 -> 2.0, 5.0 -> 4.0; beyond 6 (inf, NaN too) -> 6; the sign kept
    assert codes.tolist() == [0, 8, 0, 2, 2, 4, 6, 1, 11, 7, 7, 7, 15]
    back = MXFP4Tensor(x).to(torch.float32)
    assert back.tolist()[2:] == [0.0, 1.0, 1.0, 2.0, 4.0, 0.5, -1.5, 6.0, 6.0, 6.0, -6.0]
    m = MXFP4Tensor(size=(3, 5)).random()
    for dim in (0, 1):
        packed = m.to_packed_tensor(dim)
        assert packed.shape[dim] == (3, 5)[dim] // 2 + 1
        assert torch.equal(m.unpack_packed_tensor(packed, dim, (3, 5)), m.data)
    scales = MXScaleTensor(torch.tensor([1.0, 0.75, 3.0e38, 0.0, -2.0, float("nan")]))
    assert scales.data.tolist() == [127, 126, 254, 255, 255, 255]
    assert scales.to(torch.float32).tolist()[:3] == [1.0, 0.5, 2.0 ** 127]
    r = MXScaleTensor(size=(64,)).random(low=0.25, high=8)
    assert 125 <= r.data.min() and r.data.max() <= 130


@pytest.mark.gpu
def test_reinterpret_passes_a_tensor_as_another_type_on_the_gpu():
    torch = pytest.importorskip("torch")
    from tilecc.runtime.tensor_wrappers import reinterpret

    @tilecc.jit
    def halve(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 0.5)

    x = torch.arange(64, device="cuda", dtype=torch.float32)
    y = torch.empty(64, device="cuda", dtype=torch.int32)  # its bits are written as floats
    halve[(1,)](x, reinterpret(y, tl.float32), BLOCK=64)
    torch.testing.assert_close(y.view(torch.float32), x * 0.5)


def test_reinterpret_passes_a_cpu_tensor_as_another_type_on_the_interpreter():
    """What `triton.reinterpret` makes of CPU tensors (unsigned integers PyTorch lacks,
    float8 bits held in int8) is read and written as its type by the interpreter."""
    torch = pytest.importorskip("torch")
    from tilecc.runtime.tensor_wrappers import reinterpret

    @tilecc.jit
    def top_bit(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) >> 15)

    x = torch.tensor([-1, 5, -32768, 32767], dtype=torch.int16)
    y = torch.zeros(4, dtype=torch.int16)
    top_bit.interpret[(1,)](reinterpret(x, tl.uint16), reinterpret(y, tl.uint16), BLOCK=4)
    assert y.tolist() == [1, 0, 1, 0]  # a logical shift: the values are unsigned
