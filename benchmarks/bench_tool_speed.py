"""Speed of the tool itself, tilecc beside Triton, each measurement in a fresh process.

    python benchmarks/bench_tool_speed.py [--profile]

1. cold first call (transpile, compile, load, launch, synchronize) with an empty cache;
2. first call in a new process with a warm disk cache (the same kernel, compiled before);
3. warm launch overhead: host µs per launch of a small kernel with ten arguments, for
   tilecc, Triton and a bare CuPy RawKernel of tilecc's generated source;
4. (--profile) cProfile of tilecc's warm launch path.

Kernels: the element-wise ones of benchmarks/bench_elementwise.py (add, silu_mul), and
softmax_kernel / matmul_kernel of examples/softmax.py / examples/matmul.py when they exist
(they are reported as missing otherwise; matmul takes the softmax call for now and needs
its own launch line once the example lands).  Import time of each package is printed apart: it is paid once per process
whatever the cache holds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
import torch
torch.empty(1, device="cuda")  # the CUDA context, outside the timings
t1 = time.perf_counter()
tool, kernel = sys.argv[1], sys.argv[2]
if tool == "tilecc":
    import tilecc as tool_mod
else:
    import triton as tool_mod
t2 = time.perf_counter()
sys.path.insert(0, {root!r}); sys.path.insert(0, os.path.join({root!r}, "benchmarks"))
sys.path.insert(0, os.path.join({root!r}, "examples"))
n = 1 << 20
if kernel in ("add", "silu_mul"):
    import bench_elementwise as be
    fn = getattr(be, kernel)
    k = tool_mod.jit(fn)
    x = torch.randn(n, device="cuda"); y = torch.randn(n, device="cuda"); out = torch.empty_like(x)
    torch.cuda.synchronize()
    t3 = time.perf_counter()
    k[(tool_mod.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    t4 = time.perf_counter()
else:
    # examples/<kernel>.py's @tilecc.jit kernel, rewritten against triton.language into a
    # temporary module (both tools read the source from a file), then jitted by the tool
    import importlib.util, inspect, tempfile, textwrap
    ex = __import__(kernel)
    jk = getattr(ex, kernel + "_kernel")
    src = textwrap.dedent(inspect.getsource(jk.fn)).split("\n", 1)[1]  # drop the decorator
    path = os.path.join(tempfile.mkdtemp(), "_bench_" + kernel + ".py")
    with open(path, "w") as f:
        f.write("import triton.language as tl\n\n" + src)
    spec = importlib.util.spec_from_file_location("_bench_" + kernel, path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    k = tool_mod.jit(getattr(mod, kernel + "_kernel"))
    rows, cols = 4096, 781
    x = torch.randn(rows, cols, device="cuda"); out = torch.empty_like(x)
    torch.cuda.synchronize()
    t3 = time.perf_counter()
    k[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=1024, num_warps=4)
    torch.cuda.synchronize()
    t4 = time.perf_counter()
    torch.testing.assert_close(out, torch.softmax(x, dim=1))
print(json.dumps({{"import_ms": (t2 - t1) * 1e3, "first_call_ms": (t4 - t3) * 1e3}}))
"""


def child(tool: str, kernel: str, cache_dir: str) -> dict:
    env = dict(os.environ)
    env["TILECC_CACHE_DIR"] = os.path.join(cache_dir, "tilecc")
    env["TRITON_CACHE_DIR"] = os.path.join(cache_dir, "triton")
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT), tool, kernel],
                       capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def first_calls(kernels: list[str]) -> list[tuple]:
    rows = []
    for kernel in kernels:
        for tool in ("tilecc", "triton"):
            with tempfile.TemporaryDirectory() as d:
                cold = child(tool, kernel, d)
                warm = [child(tool, kernel, d) for _ in range(3)]
            best = min((w for w in warm if "error" not in w), default=warm[0],
                       key=lambda w: w["first_call_ms"])
            rows.append((kernel, tool, cold, best))
    return rows


def launch_overhead(iters: int = 20000) -> dict[str, float]:
    """Host µs per warm launch, ten arguments (6 pointers, 3 ints, 1 float; 1 constexpr)."""
    import cupy
    import numpy as np
    import torch
    import triton
    import triton.language as tl

    import tilecc

    def ten(a, b, c, d, e, f, n, m, k, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(a + offs, mask=mask) + tl.load(b + offs, mask=mask) + \
            tl.load(c + offs, mask=mask) + tl.load(d + offs, mask=mask)
        tl.store(e + offs, x * alpha + m, mask=mask)
        tl.store(f + offs, x - k, mask=mask)

    n = 1024
    ts = [torch.randn(n, device="cuda") for _ in range(6)]
    cs = [cupy.asarray(t) for t in ts]
    tc_k, tr_k = tilecc.jit(ten), triton.jit(ten)
    src = tc_k.source("*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32:16,i32,i32,"
                      "fp32,1024")
    from tilecc.transpiler.render import INCLUDE_DIR
    raw = cupy.RawKernel(src, "ten", options=(f"-I{INCLUDE_DIR}", "--std=c++17"))
    args_raw = (*cs, np.int32(n), np.int32(3), np.int32(5), np.float32(0.5))
    cases = {
        "tilecc (torch)": lambda: tc_k[(1,)](*ts, n, 3, 5, 0.5, BLOCK=1024),
        "tilecc (cupy)": lambda: tc_k[(1,)](*cs, n, 3, 5, 0.5, BLOCK=1024),
        "triton (torch)": lambda: tr_k[(1,)](*ts, n, 3, 5, 0.5, BLOCK=1024),
        "cupy RawKernel": lambda: raw((1,), (128,), args_raw),
    }
    from timing import host_us_per_launch

    out = {label: host_us_per_launch(fn, iters, torch.cuda.synchronize)
           for label, fn in cases.items()}
    ref = ts[0] + ts[1] + ts[2] + ts[3]
    torch.testing.assert_close(ts[4], ref * 0.5 + 3)
    if "--profile" in sys.argv:
        import cProfile
        import pstats

        pr = cProfile.Profile()
        pr.enable()
        for _ in range(20000):
            tc_k[(1,)](*ts, n, 3, 5, 0.5, BLOCK=1024)
        pr.disable()
        torch.cuda.synchronize()
        pstats.Stats(pr).sort_stats("tottime").print_stats(15)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", action="store_true", help="cProfile the warm launch path")
    ap.add_argument("--skip-first-calls", action="store_true")
    args = ap.parse_args()
    kernels = ["add", "silu_mul"]
    missing = ["matmul"]
    for name in ("softmax",):  # "matmul": add its launch to CHILD when examples/matmul.py lands
        path = os.path.join(ROOT, "examples", f"{name}.py")
        if os.path.exists(path) and f"def {name}_kernel" in open(path).read():
            kernels.append(name)
        else:
            missing.append(name)
    if not args.skip_first_calls:
        print("first call in a fresh process (ms; imports and CUDA context excluded)")
        print(f"{'kernel':<9} {'tool':<7} {'import':>8} {'cold (empty cache)':>19} "
              f"{'warm disk cache':>16}")
        rows = first_calls(kernels)
        cold = {}
        for kernel, tool, c, w in rows:
            if "error" in c or "error" in w:
                print(f"{kernel:<9} {tool:<7} error: {c.get('error') or w.get('error')}")
                continue
            cold[(kernel, tool)] = c["first_call_ms"]
            print(f"{kernel:<9} {tool:<7} {c['import_ms']:8.0f} {c['first_call_ms']:19.1f} "
                  f"{w['first_call_ms']:16.2f}")
        for kernel in kernels:
            if (kernel, "tilecc") in cold and (kernel, "triton") in cold:
                print(f"  {kernel}: cold tilecc/triton = "
                      f"{cold[(kernel, 'tilecc')] / cold[(kernel, 'triton')]:.2f}x")
        if missing:
            print(f"  not measured: {', '.join(missing)} (examples/<name>.py with "
                  "<name>_kernel does not exist yet)")
    print("\nwarm launch overhead (host µs per launch, 10 arguments, best of 5 x 20000)")
    ov = launch_overhead()
    for label, us in ov.items():
        print(f"  {label:<16} {us:6.2f} µs   ({us / ov['triton (torch)']:.2f}x triton, "
              f"{us - ov['cupy RawKernel']:+.2f} µs vs RawKernel)")


if __name__ == "__main__":
    main()
