"""@tilecc.autotune and @tilecc.heuristics: Triton's semantics, through the interpreter (CI)
and on the GPU (`pytest -m gpu`)."""

import logging

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.runtime.autotune import Autotuner, Config, Heuristics


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILECC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILECC_PRINT_AUTOTUNING", raising=False)


@tilecc.jit
def accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # out += 2 * x: running it twice gives a different answer, so tuning must not leak
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(out_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, acc + 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def _grid(meta):
    return (tilecc.cdiv(meta["n"], meta["BLOCK"]),)


CONFIGS = [Config({"BLOCK": 32}, num_warps=1), Config({"BLOCK": 64}, num_warps=2),
           Config({"BLOCK": 128}, num_warps=4)]


class FakeTimer:
    """do_bench that runs the candidate and returns scripted times, in config order."""

    def __init__(self, times):
        self.times, self.calls = list(times), 0

    def __call__(self, fn):
        fn()
        self.calls += 1
        return self.times[(self.calls - 1) % len(self.times)]


def _tuned(times=(3.0, 1.0, 2.0), **kw):
    timer = FakeTimer(times)
    return autotuned_kernel(timer, **kw), timer


def autotuned_kernel(timer, configs=CONFIGS, key=("n",), **kw):
    return tilecc.autotune(configs=list(configs), key=list(key), do_bench=timer, **kw)(accumulate)


def test_picks_fastest_config_and_caches_per_key():
    k, timer = _tuned()
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    k.interpret[_grid](x, out, 100, )
    assert k.best_config == CONFIGS[1] and timer.calls == 3
    assert k.configs_timings == {CONFIGS[0]: 3.0, CONFIGS[1]: 1.0, CONFIGS[2]: 2.0}
    k.interpret[_grid](x, out, 100)  # same key: no tuning
    assert timer.calls == 3
    k.interpret[_grid](x[:50], out[:50], 50)  # new value of a key argument: tuned again
    assert timer.calls == 6
    k.interpret[_grid](x.astype(np.float16), out.astype(np.float16), 100)  # new dtypes
    assert timer.calls == 9
    assert set(k.cache) == {(100, "float32", "float32"), (50, "float32", "float32"),
                            (100, "float16", "float16")}


def test_tuning_does_not_corrupt_data_restore_value():
    k, _ = _tuned(restore_value=["out_ptr"])
    x = np.arange(100, dtype=np.float32)
    out = np.full(100, 5.0, np.float32)
    k.interpret[_grid](x, out, 100)
    np.testing.assert_array_equal(out, 5.0 + 2 * x)  # exactly one accumulation


def test_tuning_without_restore_leaks_runs():
    k, _ = _tuned()
    x = np.ones(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    k.interpret[_grid](x, out, 100)
    assert out[0] > 2.0  # the benchmark runs accumulated too: why restore_value exists


def test_reset_to_zero():
    k, _ = _tuned(reset_to_zero=["out_ptr"])
    x = np.arange(100, dtype=np.float32)
    out = np.full(100, 7.0, np.float32)
    k.interpret[_grid](x, out, 100)
    np.testing.assert_array_equal(out, 2 * x)  # zeroed before the real run


def test_hooks_see_all_arguments():
    seen = []

    def pre(nargs):
        seen.append(("pre", nargs["BLOCK"], nargs["num_warps"], nargs["n"]))

    def post(nargs, exception):
        seen.append(("post", nargs["BLOCK"], exception))

    cfg_hook = []
    configs = [Config({"BLOCK": 32}, num_warps=1, pre_hook=lambda a: cfg_hook.append(a["BLOCK"])),
               Config({"BLOCK": 64}, num_warps=2)]
    k = autotuned_kernel(FakeTimer([2.0, 1.0]), configs=configs, pre_hook=pre, post_hook=post,
                         restore_value=["out_ptr"])
    x = np.ones(40, np.float32)
    out = np.zeros(40, np.float32)
    k.interpret[_grid](x, out, 40)
    assert ("pre", 32, 1, 40) in seen and ("pre", 64, 2, 40) in seen
    assert ("post", 64, None) in seen
    assert cfg_hook and set(cfg_hook) == {32}
    np.testing.assert_array_equal(out, 2.0)


def test_unknown_key_name_is_left_out_with_a_warning():
    # Triton tunes on the key names that are parameters and ignores a misspelt one
    with pytest.warns(UserWarning, match="'m'.*not a parameter.*x_ptr, out_ptr, n, BLOCK"):
        k = tilecc.autotune(configs=CONFIGS, key=["n", "m"], restore_value=["out_ptr"])(accumulate)
    x = np.ones(40, np.float32)
    out = np.zeros(40, np.float32)
    k.interpret[_grid](x, out, 40)
    np.testing.assert_array_equal(out, 2.0)  # tuning left `out` as it was
    assert list(k.cache) and all(key[0] == 40 for key in k.cache)


def test_unknown_reset_or_restore_name_is_an_error():
    with pytest.raises(ValueError, match="reset_to_zero.*'y'"):
        tilecc.autotune(configs=CONFIGS, key=["n"], reset_to_zero=["y"])(accumulate)


def test_tuned_arguments_cannot_be_passed():
    k, _ = _tuned()
    with pytest.raises(ValueError, match="BLOCK are tuned"):
        k.interpret[_grid](np.ones(4, np.float32), np.ones(4, np.float32), 4, BLOCK=32)


def test_prune_configs_by():
    seen = {}

    def early(configs, named, **kwargs):
        seen["named"] = sorted(named)
        return [c for c in configs if c.kwargs["BLOCK"] >= 64]

    def perf_model(**kw):
        return {64: 2.0, 128: 1.0}[kw["BLOCK"]]

    timer = FakeTimer([1.0])
    k = autotuned_kernel(timer, prune_configs_by={"early_config_prune": early,
                                                   "perf_model": perf_model, "top_k": 1})
    out = np.zeros(10, np.float32)
    k.interpret[_grid](np.ones(10, np.float32), out, 10)
    assert k.best_config == CONFIGS[2] and timer.calls == 0  # one left: nothing to time
    assert seen["named"] == ["n", "out_ptr", "x_ptr"]
    np.testing.assert_array_equal(out, 2.0)


def test_failing_config_is_skipped_with_a_reason(caplog):
    bad = Config({"BLOCK": 64}, num_warps=3)  # not a power of 2: the build rejects it
    k = tilecc.autotune(configs=[bad, CONFIGS[0]], key=["n"], restore_value=["out_ptr"])(
        accumulate)
    out = np.zeros(64, np.float32)
    with caplog.at_level(logging.WARNING, logger="tilecc.autotune"):
        k.interpret[_grid](np.ones(64, np.float32), out, 64)
    assert k.best_config == CONFIGS[0]
    assert k.configs_timings[bad] == float("inf")
    assert "skipping config BLOCK: 64, num_warps: 3" in caplog.text and "power of 2" in caplog.text
    np.testing.assert_array_equal(out, 2.0)


def test_all_configs_failing_is_an_error():
    k = tilecc.autotune(configs=[Config({"BLOCK": 64}, num_warps=3),
                                 Config({"BLOCK": 32}, num_warps=5)], key=["n"])(accumulate)
    with pytest.raises(RuntimeError, match="every autotune configuration failed"):
        k.interpret[_grid](np.ones(64, np.float32), np.zeros(64, np.float32), 64)


def test_cpu_timing_in_the_interpreter_and_print(monkeypatch, capsys):
    monkeypatch.setenv("TILECC_PRINT_AUTOTUNING", "1")
    k = tilecc.autotune(configs=CONFIGS, key=["n"], restore_value=["out_ptr"])(accumulate)
    out = np.zeros(200, np.float32)
    k.interpret[_grid](np.ones(200, np.float32), out, 200)
    assert k.best_config in CONFIGS
    assert all(0 < t < float("inf") for t in k.configs_timings.values())
    err = capsys.readouterr().err
    assert "tilecc autotuning: accumulate key=(200, 'float32', 'float32'): tuned" in err
    assert "best config: BLOCK:" in err
    np.testing.assert_array_equal(out, 2.0)


def test_env_interpret_runs_autotuned_kernel(monkeypatch):
    monkeypatch.setenv("TILECC_INTERPRET", "1")
    k, _ = _tuned(restore_value=["out_ptr"])
    out = np.zeros(70, np.float32)
    k[_grid](np.ones(70, np.float32), out, 70)
    np.testing.assert_array_equal(out, 2.0)
    k.run(np.ones(70, np.float32), out, 70, grid=_grid, warmup=False)
    np.testing.assert_array_equal(out, 4.0)


def test_heuristics_alone_and_under_autotune():
    @tilecc.heuristics({"BLOCK": lambda a: tilecc.next_power_of_2(a["n"])})
    @tilecc.jit
    def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr = False):
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)

    assert isinstance(scale, Heuristics) and scale.arg_names[:3] == ["x_ptr", "out_ptr", "n"]
    out = np.zeros(37, np.float32)
    scale.interpret[(1,)](np.ones(37, np.float32), out, 37)
    np.testing.assert_array_equal(out, 3.0)

    seen = []
    inner = tilecc.heuristics({"EVEN": lambda a: seen.append(a["num_warps"]) or
                               a["n"] % a["BLOCK"] == 0})(accumulate_even)
    k = tilecc.autotune(configs=CONFIGS[:2], key=["n"], do_bench=FakeTimer([1.0, 2.0]),
                        restore_value=["out_ptr"])(inner)
    assert isinstance(k, Autotuner)
    out = np.zeros(64, np.float32)
    k.interpret[_grid](np.ones(64, np.float32), out, 64)
    assert k.best_config == CONFIGS[0] and set(seen) == {1, 2}
    np.testing.assert_array_equal(out, 2.0)


@tilecc.jit
def accumulate_even(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(out_ptr + offs) + 2.0 * tl.load(x_ptr + offs))
    else:
        mask = offs < n
        acc = tl.load(out_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, acc + 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)


@tilecc.jit
def accumulate_strided(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    # out[i * stride] += 2 * x[i]: `out` may be a view with a stride and an offset
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(out_ptr + offs * stride, mask=mask)
    tl.store(out_ptr + offs * stride, acc + 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def _strided_case(xp, n=300, stride=3):
    """A row of a larger buffer, every `stride`-th element from the second: (buffer, view,
    x); the buffer holds 5 everywhere, so any element touched outside the view shows."""
    big = xp.full((4, n * stride + 5), 5.0, dtype=xp.float32)
    view = big[2, 1:1 + n * stride:stride]
    return big, view, xp.arange(n, dtype=xp.float32)


def _expected_after(big, view_index, values):
    want = np.full(big.shape, 5.0, np.float32)
    want[view_index] = values
    return want


@pytest.mark.parametrize("mode", ["restore_value", "reset_to_zero"])
def test_strided_view_is_saved_restored_and_zeroed_exactly(mode):
    """restore_value / reset_to_zero on a view with a stride and an offset: exactly its
    elements are saved, put back and zeroed; the buffer around and between them is not."""
    big, view, x = _strided_case(np)
    k = tilecc.autotune(configs=CONFIGS, key=["n"], do_bench=FakeTimer([3.0, 1.0, 2.0]),
                        **{mode: ["out_ptr"]})(accumulate_strided)
    k.interpret[_grid](x, view, x.size, 3)
    assert len(k.configs_timings) == len(CONFIGS)  # tuned: every config ran on the view
    start = 5.0 if mode == "restore_value" else 0.0
    np.testing.assert_array_equal(big, _expected_after(big, (2, slice(1, 901, 3)),
                                                       start + 2 * x))


def test_restore_value_of_a_non_array_is_a_clear_error():
    k = tilecc.autotune(configs=CONFIGS, key=["n"], restore_value=["n"])(accumulate)
    with pytest.raises(TypeError, match="cannot save, restore or zero an argument of type int"):
        k.interpret[_grid](np.ones(8, np.float32), np.zeros(8, np.float32), 8)


def test_config_repr_and_kwargs():
    c = Config({"BLOCK": 128}, num_warps=8, num_stages=2)
    assert repr(c) == "BLOCK: 128, num_warps: 8, num_stages: 2"
    assert str(c) == "BLOCK: 128, num_warps: 8, num_ctas: 1, num_stages: 2, maxnreg: None"
    assert c.all_kwargs() == {"BLOCK": 128, "num_warps": 8, "num_ctas": 1, "num_stages": 2}
    with pytest.raises(ValueError, match="num_ctas"):
        Config({}, num_ctas=2)


# --- on the GPU -------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_autotune_cupy_restores_data_and_caches_on_disk(capsys, monkeypatch):
    import cupy as cp

    monkeypatch.setenv("TILECC_PRINT_AUTOTUNING", "1")
    configs = CONFIGS + [Config({"BLOCK": 1024}, num_warps=4), Config({"BLOCK": 256},
                                                                      num_warps=64)]
    n = 1 << 20
    x = cp.arange(n, dtype=cp.float32)
    out = cp.full(n, 1.0, cp.float32)
    k = tilecc.autotune(configs=configs, key=["n"], restore_value=["out_ptr"],
                        cache_results=True)(accumulate)
    k[_grid](x, out, n)
    cp.testing.assert_array_equal(out, 1.0 + 2 * x)
    assert k.configs_timings[configs[-1]] == float("inf")  # 64 warps: skipped
    assert all(0 < t < 10 for c, t in k.configs_timings.items() if c is not configs[-1])
    assert "tuned" in capsys.readouterr().err
    # a new process (here: a new autotuner) finds the decision on disk
    k2 = tilecc.autotune(configs=configs, key=["n"], restore_value=["out_ptr"],
                         cache_results=True)(accumulate)
    k2[_grid](x, out, n)
    assert k2.best_config == k.best_config
    assert "from the disk cache" in capsys.readouterr().err
    cp.testing.assert_array_equal(out, 1.0 + 4 * x)
    # without cache_results (Triton's default) a new autotuner times the configs again
    k3 = tilecc.autotune(configs=configs, key=["n"], restore_value=["out_ptr"])(accumulate)
    k3[_grid](x, out, n)
    assert "tuned" in capsys.readouterr().err


@pytest.mark.gpu
def test_gpu_autotune_torch_reset_to_zero_and_heuristics():
    torch = pytest.importorskip("torch")
    n = 5000
    x = torch.randn(n, device="cuda")
    out = torch.full((n,), 3.0, device="cuda")
    inner = tilecc.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})(accumulate_even)
    k = tilecc.autotune(configs=CONFIGS + [Config({"BLOCK": 512}, num_warps=4)], key=["n"],
                        reset_to_zero=["out_ptr"])(inner)
    k[_grid](x, out, n)
    torch.testing.assert_close(out, 2 * x)
    assert k.best_config is not None and len(k.configs_timings) == 4


@pytest.mark.gpu
def test_gpu_autotune_picks_the_fastest():
    import cupy as cp

    n = 1 << 24
    x = cp.ones(n, cp.float32)
    out = cp.zeros(n, cp.float32)
    configs = [Config({"BLOCK": 32}, num_warps=1), Config({"BLOCK": 2048}, num_warps=8)]
    k = tilecc.autotune(configs=configs, key=["n"], reset_to_zero=["out_ptr"])(accumulate)
    k[_grid](x, out, n)
    t = k.configs_timings
    assert k.best_config == configs[1] and t[configs[1]] < t[configs[0]], t
    cp.testing.assert_array_equal(out, 2.0)


def _device_frameworks():
    out = []
    try:
        import cupy

        out.append(("cupy", cupy, cupy.asnumpy))
    except ImportError:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            class TorchCuda:  # the namespace _strided_case uses, making CUDA tensors
                float32 = torch.float32

                @staticmethod
                def full(shape, value, dtype):
                    return torch.full(shape, value, dtype=dtype, device="cuda")

                @staticmethod
                def arange(n, dtype):
                    return torch.arange(n, dtype=dtype, device="cuda")

            out.append(("torch", TorchCuda, lambda t: t.cpu().numpy()))
    except ImportError:
        pass
    return out


DEVICE_FRAMEWORKS = _device_frameworks()


@pytest.mark.gpu
@pytest.mark.parametrize("fw", DEVICE_FRAMEWORKS, ids=[f[0] for f in DEVICE_FRAMEWORKS])
@pytest.mark.parametrize("mode", ["restore_value", "reset_to_zero"])
@pytest.mark.parametrize("interpret", [False, True], ids=["gpu", "interpreter"])
def test_gpu_strided_view_is_saved_restored_and_zeroed_exactly(fw, mode, interpret):
    """As on NumPy, with CuPy arrays and CUDA tensors, launched on the GPU and interpreted
    (where the view is copied to the host with its strides, and back)."""
    _, xp, to_host = fw
    big, view, x = _strided_case(xp)
    k = tilecc.autotune(configs=CONFIGS, key=["n"], do_bench=FakeTimer([3.0, 1.0, 2.0]),
                        **{mode: ["out_ptr"]})(accumulate_strided)
    (k.interpret if interpret else k)[_grid](x, view, 300, 3)
    start = 5.0 if mode == "restore_value" else 0.0
    np.testing.assert_array_equal(to_host(big), _expected_after(
        to_host(big), (2, slice(1, 901, 3)), start + 2 * to_host(x)))


@pytest.mark.gpu
def test_gpu_strided_view_through_the_cuda_array_interface():
    """A device array that is neither CuPy nor torch (only `__cuda_array_interface__`, as
    Numba's): restored exactly, through a CuPy view of the same memory."""
    import cupy as cp

    big, view, x = _strided_case(cp)

    class Foreign:
        def __init__(self, a):
            self.__cuda_array_interface__ = a.__cuda_array_interface__

    k = tilecc.autotune(configs=CONFIGS, key=["n"], do_bench=FakeTimer([3.0, 1.0, 2.0]),
                        restore_value=["out_ptr"])(accumulate_strided)
    k[_grid](x, Foreign(view), 300, 3)
    np.testing.assert_array_equal(cp.asnumpy(big), _expected_after(
        cp.asnumpy(big), (2, slice(1, 901, 3)), 5.0 + 2 * cp.asnumpy(x)))


def _set_block(nargs):  # as Triton's tutorial 09 and Liger's MLP set descriptor blocks
    nargs["src"].block_shape = [nargs["BM"], 8]


@tilecc.autotune(configs=[Config({"BM": 4}, pre_hook=_set_block),
                          Config({"BM": 16}, pre_hook=_set_block)], key=["n"])
@tilecc.jit
def _desc_rows_sum(src, out, n, BM: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    tl.store(out + rows, tl.sum(src.load([tl.program_id(0) * BM, 0]), axis=1), mask=rows < n)


def test_pre_hooks_set_descriptor_block_shapes_for_the_launch_and_the_compiles(monkeypatch):
    x = np.arange(40 * 8, dtype=np.float32).reshape(40, 8)
    out = np.zeros(40, np.float32)
    desc = tilecc.TensorDescriptor.from_tensor(x, [1, 8])  # a dummy block until the hook
    _desc_rows_sum.interpret[lambda meta: (tilecc.cdiv(40, meta["BM"]),)](desc, out, 40)
    np.testing.assert_array_equal(out, x.sum(axis=1))
    # GPU tuning compiles every candidate first, in parallel: each for its own block
    seen = []
    monkeypatch.setattr("tilecc.runtime.compiled.warm_up",
                        lambda fn, args, kwargs: seen.append(args[0].block_shape))
    _desc_rows_sum._precompile(_desc_rows_sum.configs, (desc, out, 40),
                               {"grid": (1,), "warmup": False})
    assert sorted(seen) == [[4, 8], [16, 8]]
    assert desc.block_shape == [_desc_rows_sum.best_config.kwargs["BM"], 8]  # untouched
