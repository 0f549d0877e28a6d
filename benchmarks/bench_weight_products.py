"""Products of weights converted in the loop, through tilecc and Triton, side by side.

    python benchmarks/bench_weight_products.py [--quick]

Two kernels in the form weight-quantized LLM kernels take (tests/kernels_dot.py), written
once against `tl` (Triton compiles the same source, triton_clone.py):

* fp8 up-cast: A (M x K) and B stored N x K, both e4m3, read through tensor descriptors
  made in the kernel, multiplied as `tl.dot(a.to(bf16), b.T.to(bf16))` (fp32 out);
* int8 weights: fp16 A times int8 B (K x N) cast to fp16, per-column scales after the
  loop (fp16 out);
* int8 dequantized in the loop: the same product with B turned into `(b - zero) * scale`
  at every step, per-column fp16 zeros and scales loaded before the loop (fp16 out).

Each configuration is timed for both tools side by side (device-event medians,
`timing.gpu_ms_queued`: a sustained load, the tool that starts a round rotating); every
result is checked against torch first.  The last column: Triton time / tilecc time (above 1: tilecc faster).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import torch
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)
from kernels_dot import dequant_in_loop_kernel as dequant_in_loop  # noqa: E402
from kernels_dot import int8_weights_kernel as int8_weights  # noqa: E402
from kernels_dot import upcast_bt_kernel as upcast_bt  # noqa: E402
from timing import gpu_ms_queued, runs  # noqa: E402
from triton_clone import as_triton  # noqa: E402

import tilecc  # noqa: E402


UPCAST_CONFIGS = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (128, 128, 128, 8, 3)]
INT8_CONFIGS = [(128, 128, 64, 4, 4), (128, 256, 64, 8, 3), (128, 128, 64, 8, 3),
                (64, 128, 64, 4, 4)]
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]


def timed(fns: dict) -> dict:
    """{tool: ms}: the tools timed side by side (`timing.gpu_ms_queued`: a sustained load,
    the tool that starts a round rotating), each keeping its median round."""
    rounds = gpu_ms_queued({tool: (lambda i, fn=fn: fn()) for tool, fn in fns.items()},
                           copies=1, rounds=15, calls=10, sleep=False)
    return {tool: statistics.median(ms) for tool, ms in rounds.items()}


def row(name: str, shape, cfg, ts: dict) -> None:
    m, k, n = shape
    tf = {tool: 2 * m * n * k / t / 1e9 for tool, t in ts.items()}
    label = "{}x{}x{} w{} s{}".format(*cfg)
    ratio = f"{ts['Triton'] / ts['tilecc']:8.3f}" if len(ts) == 2 else "       -"
    print(f"{name:<12} {f'{m}x{k}x{n}':>16} {label:>20} "
          + " ".join(f"{tf.get(t, float('nan')):8.1f}" for t in ("tilecc", "Triton"))
          + f" {ratio}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4096³ only")
    args = parser.parse_args()
    shapes = SHAPES[:1] if args.quick else SHAPES
    # Triton's descriptors made in the kernel live in global scratch memory it asks for
    triton.set_allocator(lambda size, alignment, stream: torch.empty(
        size, device="cuda", dtype=torch.int8))
    print(f"{torch.cuda.get_device_name()}: weight products, TFLOP/s")
    print(f"{'kernel':<12} {'M x K x N':>16} {'config':>20} {'tilecc':>8} {'Triton':>8} "
          f"{'tr/tc':>8}")
    tools = {"tilecc": (upcast_bt, int8_weights, dequant_in_loop),
             "Triton": (as_triton(upcast_bt), as_triton(int8_weights),
                        as_triton(dequant_in_loop))}
    for m, k, n in shapes:
        torch.manual_seed(0)
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
        ref = a.float() @ b.float().T
        c = torch.empty(m, n, device="cuda")
        for bm, bn, bk, w, s in UPCAST_CONFIGS:
            fns = {}
            for tool, (kernel, *_) in tools.items():
                def fn(kernel=kernel):
                    kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
                        a, b, c, m, n, k, BM=bm, BN=bn, BK=bk, num_warps=w, num_stages=s)
                c.zero_()
                if runs(fn, f"{tool} fp8 up-cast {bm}x{bn}x{bk}"):
                    torch.testing.assert_close(c, ref, rtol=1e-2, atol=1e-1)
                    fns[tool] = fn
            row("fp8 up-cast", (m, k, n), (bm, bn, bk, w, s), timed(fns))
        a16 = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b8 = torch.randint(-8, 8, (k, n), device="cuda", dtype=torch.int8)
        scale = torch.rand(n, device="cuda", dtype=torch.float16)
        ref = (a16.float() @ b8.float()) * scale.float()
        c16 = torch.empty(m, n, device="cuda", dtype=torch.float16)
        for bm, bn, bk, w, s in INT8_CONFIGS:
            fns = {}
            for tool, (_, kernel, _) in tools.items():
                def fn(kernel=kernel):
                    kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
                        a16, b8, scale, c16, m, n, k, BM=bm, BN=bn, BK=bk, num_warps=w,
                        num_stages=s)
                c16.zero_()
                if runs(fn, f"{tool} int8 weights {bm}x{bn}x{bk}"):
                    torch.testing.assert_close(c16.float(), ref, rtol=2e-2, atol=1.0)
                    fns[tool] = fn
            row("int8 weights", (m, k, n), (bm, bn, bk, w, s), timed(fns))
        zero = torch.randint(-8, 8, (n,), device="cuda").to(torch.float16)
        ref = (a16.float() @ ((b8.float() - zero.float()) * scale.float())).to(torch.float16)
        for bm, bn, bk, w, s in INT8_CONFIGS:
            fns = {}
            for tool, (*_, kernel) in tools.items():
                def fn(kernel=kernel):
                    kernel[(tilecc.cdiv(m, bm), tilecc.cdiv(n, bn))](
                        a16, b8, scale, zero, c16, m, n, k, BM=bm, BN=bn, BK=bk,
                        num_warps=w, num_stages=s)
                c16.zero_()
                if runs(fn, f"{tool} int8 dequantized in the loop {bm}x{bn}x{bk}"):
                    torch.testing.assert_close(c16.float(), ref.float(), rtol=2e-2, atol=1.0)
                    fns[tool] = fn
            row("int8 dequant", (m, k, n), (bm, bn, bk, w, s), timed(fns))


if __name__ == "__main__":
    main()
