"""Matrix multiplication through tilecc, Triton and cuBLAS (torch.matmul), side by side.

    python benchmarks/bench_matmul.py [--quick]

The kernel is examples/matmul.py's `matmul_kernel`: tilecc compiles it as it is, and Triton
compiles the very same function source with `tl` bound to `triton.language`.  Both run
the example's block configurations (`CONFIGS`; --quick: the first two) and the best of
each is shown.  Times are device-event medians after warm-up (`triton.testing.do_bench`);
TFLOP/s counts 2·M·N·K.  Every result is checked against torch.matmul first.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import matmul as MM  # noqa: E402
from triton_clone import as_triton  # noqa: E402

import tilecc  # noqa: E402

SQUARE = (4096, 8192)
RAGGED = ((1000, 1000, 1000), (4097, 4096, 4096))
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def run(kernel, a, b, c, config: tilecc.Config, activation: str = ""):
    (m, k), n = a.shape, b.shape[1]
    meta = config.kwargs
    grid = (tilecc.cdiv(m, meta["BLOCK_SIZE_M"]) * tilecc.cdiv(n, meta["BLOCK_SIZE_N"]),)
    return lambda: kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                b.stride(1), c.stride(0), c.stride(1), **meta,
                                ACTIVATION=activation, num_warps=config.num_warps,
                                num_stages=config.num_stages)


VERBOSE = False


def best(kernel, a, b, c, configs, ref) -> tuple[float, str]:
    out = (float("inf"), "")
    for cfg in configs:
        fn = run(kernel, a, b, c, cfg)
        try:
            c.zero_()
            fn()
            torch.cuda.synchronize()
        except Exception as e:  # a configuration this compiler cannot build
            print(f"  skipped {cfg}: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
            continue
        torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=0.25)
        t = do_bench(fn, warmup=25, rep=100, return_mode="median")
        kw = cfg.kwargs
        label = (f"{kw['BLOCK_SIZE_M']}x{kw['BLOCK_SIZE_N']}x{kw['BLOCK_SIZE_K']} "
                 f"w{cfg.num_warps} s{cfg.num_stages}")
        if VERBOSE:
            m, k = a.shape
            print(f"    {label:<22} {2 * m * k * b.shape[1] / t / 1e9:8.1f} TFLOP/s")
        out = min(out, (t, label))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="every configuration's speed")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    configs = MM.CONFIGS[:2] if args.quick else MM.CONFIGS
    tc_k, tr_k = MM.matmul_kernel, as_triton(MM.matmul_kernel)
    shapes = [(s, s, s) for s in SQUARE] + list(RAGGED)
    print(f"{torch.cuda.get_device_name()}: tilecc / Triton / cuBLAS, TFLOP/s (best configuration)")
    header = (f"{'dtype':<5} {'M x K x N':>16} {'tilecc':>8} {'Triton':>8} {'cuBLAS':>8} "
              f"{'tc/cuBLAS':>9} {'tc/Triton':>9}  tilecc config / Triton config")
    print(header)
    print("-" * len(header))
    for dname, dt in DTYPES.items():
        for m, k, n in shapes:
            if (m, k, n) in RAGGED and dname != "fp16":
                continue
            torch.manual_seed(0)
            a = torch.randn(m, k, device="cuda", dtype=dt)
            b = torch.randn(k, n, device="cuda", dtype=dt)
            c = torch.empty(m, n, device="cuda", dtype=dt)
            ref = (a.float() @ b.float())
            t_cublas = do_bench(lambda: torch.matmul(a, b), warmup=25, rep=100,
                                return_mode="median")
            t_tc, cfg_tc = best(tc_k, a, b, c, configs, ref)
            t_tr, cfg_tr = best(tr_k, a, b, c, configs, ref)
            tflops = lambda t: 2 * m * n * k / (t * 1e-3) / 1e12  # noqa: E731
            print(f"{dname:<5} {f'{m}x{k}x{n}':>16} {tflops(t_tc):8.1f} {tflops(t_tr):8.1f} "
                  f"{tflops(t_cublas):8.1f} {t_cublas / t_tc:9.3f} {t_tr / t_tc:9.3f}  "
                  f"{cfg_tc} / {cfg_tr}", flush=True)
    # the fused epilogue, checked once on a ragged shape
    a = torch.randn(1000, 1000, device="cuda", dtype=torch.float16)
    b = torch.randn(1000, 1000, device="cuda", dtype=torch.float16)
    c = torch.empty(1000, 1000, device="cuda", dtype=torch.float16)
    run(tc_k, a, b, c, configs[0], "leaky_relu")()
    ref = torch.nn.functional.leaky_relu(a.float() @ b.float(), 0.01)
    torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=0.25)
    print("leaky_relu epilogue (1000 x 1000 x 1000, fp16): matches torch")


if __name__ == "__main__":
    main()
