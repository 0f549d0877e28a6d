"""fp8 matrix multiplication through tilecc, Triton and torch._scaled_mm, side by side.

    python benchmarks/bench_fp8_matmul.py [--quick] [--verbose]

The kernel is examples/matmul.py's `matmul_kernel`, as in bench_matmul.py: tilecc compiles
it as it is, Triton the very same source.  A is M x K row-major and B is K x N stored
column-major (K-major, the layout Triton's tutorial uses for fp8, which Hopper's fp8
wgmma reads); C is fp16, accumulated in fp32.  Both tools run the block configurations
Triton's tutorial gives for fp8 inputs (`matmul.FP8_CONFIGS`: K steps of 128 bytes, where
the 16-bit list's are 64 or 32; --quick: the first two).  torch._scaled_mm (cuBLASLt)
multiplies the same operands with unit scales.  Times are device-event medians after
warm-up, the three timed side by side at each configuration (`timing.fastest_configs`);
TFLOP/s counts 2·M·N·K.  Every result is compared with torch's fp32 product of the same
fp8 values first: both compilers run Hopper's fp8 wgmma,
which sums products at reduced precision (neither kernel passes max_num_imprecise_acc),
so the largest error is reported, and only a result off by more than 5% of the largest
value is refused.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import matmul as MM  # noqa: E402
from timing import dense_peak_tflops, fastest_configs  # noqa: E402
from triton_clone import as_triton  # noqa: E402

import tilecc  # noqa: E402

SHAPES = ((4096, 4096, 4096), (8192, 8192, 8192), (4097, 4096, 4096))
DTYPES = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}


def run(kernel, a, b, c, config: tilecc.Config):
    (m, k), n = a.shape, b.shape[1]
    meta = config.kwargs
    grid = (tilecc.cdiv(m, meta["BLOCK_SIZE_M"]) * tilecc.cdiv(n, meta["BLOCK_SIZE_N"]),)
    return lambda: kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                b.stride(1), c.stride(0), c.stride(1), **meta,
                                ACTIVATION="", num_warps=config.num_warps,
                                num_stages=config.num_stages)


def label(cfg: tilecc.Config) -> str:
    kw = cfg.kwargs
    return (f"{kw['BLOCK_SIZE_M']}x{kw['BLOCK_SIZE_N']}x{kw['BLOCK_SIZE_K']} "
            f"w{cfg.num_warps} s{cfg.num_stages}")


def best(kernels: dict, a, b, c, configs, ref, scaled, verbose: bool) -> dict:
    """{tool: (ms, label, largest |error| against the fp32 product)}: each tool's fastest
    configuration, the tools and torch._scaled_mm (`scaled`; None: left out) timed side
    by side at each (`timing.fastest_configs`)."""
    at, errs = {}, {}  # the configuration each tool last ran at; errors per (tool, config)

    def make(tool, kernel):
        def launch(cfg):
            at[tool] = cfg
            return run(kernel, a, b, c, cfg)
        return launch

    launchers = {tool: make(tool, kernel) for tool, kernel in kernels.items()}
    if scaled is not None:
        launchers["scaled"] = lambda cfg: scaled

    def check(tool: str) -> None:
        if tool in kernels:
            err = (c.float() - ref).abs().max().item()
            assert err < 0.05 * ref.abs().max().item(), f"{at[tool]}: wrong result ({err})"
            errs[tool, label(at[tool])] = err

    def report(cfg, times: dict) -> None:
        if verbose:
            m, k = a.shape
            print(f"    {label(cfg):<22} " + "  ".join(
                f"{tool} {2 * m * k * b.shape[1] / t / 1e9:8.1f}" for tool, t in times.items())
                + " TFLOP/s")

    got = fastest_configs(launchers, configs, prepare=c.zero_, check=check, report=report)
    return {tool: (ms, label(cfg) if cfg is not None else "",
                   errs.get((tool, label(cfg)) if cfg is not None else None, float("nan")))
            for tool, (ms, cfg) in got.items()}


def scaled_mm(a, b):
    """torch._scaled_mm with unit scales, or None where torch has none for these types."""
    one = torch.ones((), device="cuda", dtype=torch.float32)
    try:
        fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,  # noqa: E731
                                      out_dtype=torch.float16)
        fn()
        return fn
    except (RuntimeError, ValueError, AttributeError):  # e5m2 x e5m2: ValueError
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="the first two fp8 configurations")
    parser.add_argument("--verbose", action="store_true", help="every configuration's speed")
    args = parser.parse_args()
    configs = MM.FP8_CONFIGS[:2] if args.quick else MM.FP8_CONFIGS
    tc_k, tr_k = MM.matmul_kernel, as_triton(MM.matmul_kernel)
    print(f"{torch.cuda.get_device_name()}: fp8 matmul (fp32 accumulation, fp16 out), "
          "tilecc / Triton / torch._scaled_mm, TFLOP/s (best configuration)")
    peak = dense_peak_tflops(torch.cuda.get_device_name(), eight_bit=True)
    if peak:
        print(f"(tilecc's fraction of the dense fp8 peak, {peak:.0f} TFLOP/s, under 'tc/peak')")
    header = (f"{'dtype':<5} {'M x K x N':>16} {'tilecc':>8} {'Triton':>8} {'scaled':>8} "
              f"{'tc/Triton':>9} {'tc/scaled':>9} {'tc/peak':>7} {'err tc':>7} {'err tr':>7}  "
              "tilecc config / Triton config")
    print(header)
    print("-" * len(header))
    for dname, dt in DTYPES.items():
        for m, k, n in SHAPES:
            torch.manual_seed(0)
            a = torch.randn(m, k, device="cuda").to(dt)
            b = torch.randn(n, k, device="cuda").to(dt).T  # K x N, column-major
            c = torch.empty(m, n, device="cuda", dtype=torch.float16)
            ref = a.float() @ b.float()
            got = best({"tilecc": tc_k, "Triton": tr_k}, a, b, c, configs, ref, scaled_mm(a, b),
                       args.verbose)
            (t_tc, cfg_tc, err_tc), (t_tr, cfg_tr, err_tr) = got["tilecc"], got["Triton"]
            t_sm = got["scaled"][0] if "scaled" in got else float("nan")
            tflops = lambda t: 2 * m * n * k / (t * 1e-3) / 1e12  # noqa: E731
            print(f"{dname:<5} {f'{m}x{k}x{n}':>16} {tflops(t_tc):8.1f} {tflops(t_tr):8.1f} "
                  f"{tflops(t_sm):8.1f} {t_tr / t_tc:9.3f} {t_sm / t_tc:9.3f} "
                  f"{tflops(t_tc) / peak if peak else float('nan'):7.3f} "
                  f"{err_tc:7.3f} {err_tr:7.3f}  "
                  f"{cfg_tc} / {cfg_tr}", flush=True)


if __name__ == "__main__":
    main()
