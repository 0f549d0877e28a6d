"""Matrix multiplication through tilecc, Triton and cuBLAS (torch.matmul), side by side.

    python benchmarks/bench_matmul.py [--quick] [--sustained]

The kernel is examples/matmul.py's `matmul_kernel`: tilecc compiles it as it is, and Triton
compiles the very same function source with `tl` bound to `triton.language`.  Both run
the example's block configurations (`CONFIGS`; --quick: the first two) and the best of
each is shown.  Times are device-event medians after warm-up, the tools (and cuBLAS)
interleaved for each configuration (`timing.gpu_ms_queued`: rounds of a few calls of each,
the first tool of a round rotating; the median round); TFLOP/s counts 2·M·N·K.  Every
result is checked against torch.matmul first.  --sustained adds a row under each shape:
the fastest configurations and cuBLAS timed again, each alone under its own sustained
load (`timing.gpu_ms_sustained`: the clock a kernel gets at the power limit by itself).

    python benchmarks/bench_matmul.py --persistent [--quick]

times instead `persistent_kernel` below, the same kernel written persistent (one program
per SM walking the output tiles, as libraries do), beside the example's kernel: how each
compiler takes a K loop inside a loop over tiles.

    python benchmarks/bench_matmul.py --index [--quick]

times `index_kernel`, persistent too, written as Triton's persistent tutorial writes it:
the pointers computed from the K loop's index at each step (no `+=`), the rows and columns
past the matrix clamped to 0 and hinted contiguous.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import matmul as MM  # noqa: E402
from timing import dense_peak_tflops, fastest_configs, gpu_ms_sustained  # noqa: E402
from triton_clone import as_triton  # noqa: E402

import tilecc  # noqa: E402
import tilecc.language as tl  # noqa: E402

SQUARE = (4096, 8192)
RAGGED = ((1000, 1000, 1000), (4097, 4096, 4096), (8192, 512, 8192))  # M x K x N
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


leaky_relu = MM.leaky_relu  # (persistent_kernel's epilogue, by name: Triton's clone too)


@tilecc.jit
def persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                      stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr,
                      BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                      GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr,
                      NUM_SMS: tl.constexpr):
    """examples/matmul.py's kernel, its body in a loop over the output tiles (tile
    `start, start + NUM_SMS, ...`), in the same grouped order."""
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for pid in tl.range(tl.program_id(axis=0), num_pid_m * num_pid_n, NUM_SMS):
        first_pid_m = (pid // num_pid_in_group) * GROUP_SIZE_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
        offs_k = tl.arange(0, BLOCK_SIZE_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
            accumulator = tl.dot(a, b, accumulator)
            a_ptrs += BLOCK_SIZE_K * stride_ak
            b_ptrs += BLOCK_SIZE_K * stride_bk
        if ACTIVATION == "leaky_relu":
            accumulator = leaky_relu(accumulator)
        c = accumulator.to(c_ptr.dtype.element_ty)
        offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        tl.store(c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :], c,
                 mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@tilecc.jit
def tile_of(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    """(pid_m, pid_n) of output tile `tile_id` in the grouped order."""
    first_pid_m = (tile_id // num_pid_in_group) * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    return first_pid_m + tile_id % group_size_m, (tile_id % num_pid_in_group) // group_size_m


@tilecc.jit
def index_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                 stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                 BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                 ACTIVATION: tl.constexpr, NUM_SMS: tl.constexpr):
    """persistent_kernel with its pointers computed from the K loop's index at each step,
    as Triton's persistent matmul tutorial computes them."""
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    k_lanes = tl.arange(0, BLOCK_SIZE_K)
    for tile_id in tl.range(tl.program_id(axis=0), num_pid_m * num_pid_n, NUM_SMS):
        pid_m, pid_n = tile_of(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        offs_am = tl.where(offs_am < M, offs_am, 0)  # (rows past M read row 0, not stored)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_SIZE_M), BLOCK_SIZE_M)
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_SIZE_N), BLOCK_SIZE_N)
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
            offs_k = ki * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
            a = tl.load(a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak),
                        mask=k_lanes[None, :] < K - ki * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn),
                        mask=k_lanes[:, None] < K - ki * BLOCK_SIZE_K, other=0.0)
            accumulator = tl.dot(a, b, accumulator)
        if ACTIVATION == "leaky_relu":
            accumulator = leaky_relu(accumulator)
        offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        tl.store(c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :],
                 accumulator.to(c_ptr.dtype.element_ty),
                 mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def run(kernel, a, b, c, config: tilecc.Config, activation: str = ""):
    (m, k), n = a.shape, b.shape[1]
    meta = dict(config.kwargs)
    grid = (tilecc.cdiv(m, meta["BLOCK_SIZE_M"]) * tilecc.cdiv(n, meta["BLOCK_SIZE_N"]),)
    if "NUM_SMS" in kernel.arg_names:  # persistent: one program per SM, at most one a tile
        meta["NUM_SMS"] = torch.cuda.get_device_properties(0).multi_processor_count
        grid = (min(grid[0], meta["NUM_SMS"]),)
    return lambda: kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                b.stride(1), c.stride(0), c.stride(1), **meta,
                                ACTIVATION=activation, num_warps=config.num_warps,
                                num_stages=config.num_stages)


VERBOSE = False


ROUNDS, CALLS = 15, 20


def label(cfg: tilecc.Config) -> str:
    kw = cfg.kwargs
    return (f"{kw['BLOCK_SIZE_M']}x{kw['BLOCK_SIZE_N']}x{kw['BLOCK_SIZE_K']} "
            f"w{cfg.num_warps} s{cfg.num_stages}")


def best(kernels: dict, a, b, c, configs, ref, baseline) -> dict:
    """{tool: (ms, label)}: each tool's fastest configuration (`timing.fastest_configs`:
    per configuration the tools and `baseline`, cuBLAS, timed interleaved under a
    sustained load, `ROUNDS` rounds of `CALLS` calls each, the tool that starts a round
    rotating, each keeping its median round).  Under a GEMM the GPU runs near its power
    limit and its clock moves: timing one tool's configurations all together, then the
    other's, did not compare alike (on an H200, Triton's best at 8192³ fp16 measured 623
    TFLOP/s so, 657-760 timed in turn); nor did a fixed order (the first tool gained up
    to 10%)."""
    m, k = a.shape
    launchers = {"cuBLAS": lambda cfg: baseline}
    launchers |= {tool: (lambda cfg, kernel=kernel: run(kernel, a, b, c, cfg))
                  for tool, kernel in kernels.items()}

    def check(tool: str) -> None:
        if tool != "cuBLAS":  # (cuBLAS returns its product)
            torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=0.25)

    def report(cfg, times: dict) -> None:
        if VERBOSE:
            print(f"    {label(cfg):<22} " + "  ".join(
                f"{tool} {2 * m * k * b.shape[1] / t / 1e9:7.1f}" for tool, t in times.items())
                + " TFLOP/s")

    return fastest_configs(launchers, configs, prepare=c.zero_, check=check, report=report,
                           rounds=ROUNDS, calls=CALLS)


def sustained(kernels: dict, a, b, c, got: dict, baseline) -> dict:
    """{tool: ms}: each tool at its fastest configuration in `got`, and cuBLAS, timed again
    each alone under its own sustained load (`timing.gpu_ms_sustained`), the median of
    its rounds."""
    cases = {"cuBLAS": baseline}
    cases |= {tool: run(kernel, a, b, c, got[tool][1]) for tool, kernel in kernels.items()}
    timed = gpu_ms_sustained(cases, rounds=5)
    return {tool: statistics.median(times) for tool, times in timed.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="every configuration's speed")
    parser.add_argument("--persistent", action="store_true",
                        help="persistent_kernel (a loop over tiles) through both tools")
    parser.add_argument("--index", action="store_true",
                        help="index_kernel (persistent, pointers from the K loop's index)")
    parser.add_argument("--sustained", action="store_true",
                        help="under each shape, its fastest configurations and cuBLAS timed "
                             "again, each alone under its own sustained load ('alone')")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    configs = MM.CONFIGS[:2] if args.quick else MM.CONFIGS
    kernel = index_kernel if args.index else \
        persistent_kernel if args.persistent else MM.matmul_kernel
    tc_k, tr_k = kernel, as_triton(kernel)
    shapes = [(s, s, s) for s in SQUARE] + list(RAGGED)
    print(f"{torch.cuda.get_device_name()}, {kernel.fn.__name__}: tilecc / Triton / cuBLAS, "
          "TFLOP/s (best configuration)")
    peak = dense_peak_tflops(torch.cuda.get_device_name())
    if peak:
        print(f"(tilecc's fraction of the dense peak, {peak:.0f} TFLOP/s, under 'tc/peak')")
    header = (f"{'dtype':<5} {'M x K x N':>16} {'tilecc':>8} {'Triton':>8} {'cuBLAS':>8} "
              f"{'tc/cuBLAS':>9} {'tc/Triton':>9} {'tc/peak':>7}  tilecc config / Triton config")
    print(header)
    print("-" * len(header))
    for dname, dt in DTYPES.items():
        for m, k, n in shapes:
            torch.manual_seed(0)
            a = torch.randn(m, k, device="cuda", dtype=dt)
            b = torch.randn(k, n, device="cuda", dtype=dt)
            c = torch.empty(m, n, device="cuda", dtype=dt)
            ref = (a.float() @ b.float())
            got = best({"tilecc": tc_k, "Triton": tr_k}, a, b, c, configs, ref,
                       lambda: torch.matmul(a, b))
            (t_tc, cfg_tc), (t_tr, cfg_tr) = got["tilecc"], got["Triton"]
            t_cublas = got["cuBLAS"][0]
            tflops = lambda t: 2 * m * n * k / (t * 1e-3) / 1e12  # noqa: E731
            print(f"{dname:<5} {f'{m}x{k}x{n}':>16} {tflops(t_tc):8.1f} {tflops(t_tr):8.1f} "
                  f"{tflops(t_cublas):8.1f} {t_cublas / t_tc:9.3f} {t_tr / t_tc:9.3f} "
                  f"{tflops(t_tc) / peak if peak else float('nan'):7.3f}  "
                  f"{label(cfg_tc)} / {label(cfg_tr)}", flush=True)
            if args.sustained:
                ms = sustained({"tilecc": tc_k, "Triton": tr_k}, a, b, c, got,
                               lambda: torch.matmul(a, b))
                print(f"{'  alone':<5} {'':>16} {tflops(ms['tilecc']):8.1f} "
                      f"{tflops(ms['Triton']):8.1f} {tflops(ms['cuBLAS']):8.1f} "
                      f"{ms['cuBLAS'] / ms['tilecc']:9.3f} {ms['Triton'] / ms['tilecc']:9.3f} "
                      f"{tflops(ms['tilecc']) / peak if peak else float('nan'):7.3f}",
                      flush=True)
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
