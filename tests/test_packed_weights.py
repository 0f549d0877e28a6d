"""GEMVs over low-bit weights packed eight to an int32 along K (gemlite's layout): the
weights' rows `offs_k // 8` repeat over eight K rows, their fields are shifted out by
`offs_k % 8 * 4`, scaled per column by fp16 scales and zeros broadcast over the block, and
reduced over K with tl.sum.  What the generated code must do: load each packed row once per
thread (not once per K row), lay the block out by the weights' loads (not by the narrower
scales', which pushes warps onto K and the reduction across warps), and tell the compiler
the launch's ranges (program ids and threads are non-negative: shifts and masks, not signed
division)."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler


@tilecc.jit
def int4_gemv_kernel(A, B, SCALES, ZEROS, C, N: tl.constexpr, K: tl.constexpr,
                     GROUP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C[n] += sum_k A[k] * (field(B[k // 8, n], k % 8) * scale + zero) over this program's
    K block (fp32 output, zeroed before)."""
    pid_n, pid_k = tl.program_id(0), tl.program_id(1)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    b = tl.load(B + (offs_k[:, None] // 8) * N + offs_n[None, :])
    a = tl.load(A + offs_k)
    group = (pid_k * BLOCK_K) // GROUP
    scales = tl.load(SCALES + group * N + offs_n[None, :])
    zeros = tl.load(ZEROS + group * N + offs_n[None, :])
    shift = ((offs_k % 8) * 4)[:, None]
    w = tl.fma(((b >> shift) & 15).to(tl.float16), scales, zeros)
    acc = tl.sum(a[:, None].to(tl.float32) * w.to(tl.float32), axis=0)
    tl.atomic_add(C + offs_n, acc)


def _signature(block_n=256, block_k=32) -> str:
    return f"*fp16:16,*i32:16,*fp16:16,*fp16:16,*fp32:16,512,512,128,{block_n},{block_k}"


def test_a_packed_row_is_loaded_once_per_thread() -> None:
    # 4 warps: 32 K rows over 2 warps, a thread holds rows 2r + w: four share a packed row
    src = int4_gemv_kernel.source(_signature(), num_warps=4)
    header = src[:src.index("#include")]
    assert "share each address: loaded once" in header, header
    load = src[src.index("tc::Vec<int, 4> chunk"):]
    load = load[:load.index(";")]
    assert "(v - v / " in load, load


def test_weights_width_decides_the_layout() -> None:
    """2 warps: at the weights' 4 x int32 a thread, 32 lanes x 4 x 2 warps cover the 256
    columns and each thread reduces its K rows alone; at the scales' 8 x fp16 the second warp
    went to K and the reduction through shared memory."""
    src = int4_gemv_kernel.source(_signature(), num_warps=2)
    assert "warps that split the axis" not in src, src
    header = src[:src.index("#include")]
    assert "load scales: 4 x fp16 (8 B)" in header, header


def test_the_launch_ranges_are_told_to_the_compiler() -> None:
    src = int4_gemv_kernel.source(_signature(), num_warps=4)
    assert "tc::launch_ranges<128>();" in src
    src = int4_gemv_kernel.source(_signature(), num_warps=2, target="hip")
    assert "tc::launch_ranges<128>();" in src  # 2 wavefronts of 64


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("cuda", "sm_90"), ("hip", "gfx90a")])
def test_compiles(target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    for warps in (1, 2, 4):
        binary = int4_gemv_kernel.compile(_signature(), target=target, arch=arch,
                                          num_warps=warps)
        assert binary.data and "warning" not in (binary.log or "").lower(), binary.log


def _inputs(N=512, K=512, group=128):
    rng = np.random.default_rng(5)
    q = rng.integers(0, 16, (K, N))
    packed = np.zeros((K // 8, N), np.int64)
    for i in range(8):  # field i of a word: K row 8 * row + i
        packed |= q[i::8] << (4 * i)
    packed = packed.astype(np.uint32).view(np.int32)
    scales = rng.uniform(0.005, 0.02, (K // group, N)).astype(np.float16)
    zeros = (-7.5 * scales).astype(np.float16)
    a = (rng.standard_normal(K) * 0.5).astype(np.float16)
    w = np.repeat(scales, group, 0).astype(np.float64) * q + np.repeat(zeros, group, 0)
    return a, packed, scales, zeros, a.astype(np.float64) @ w


def test_int4_gemv_on_the_interpreter() -> None:
    a, packed, scales, zeros, want = _inputs(N=64, K=256, group=128)
    c = np.zeros(64, np.float32)
    int4_gemv_kernel.interpret[(2, 8)](a, packed, scales, zeros, c, N=64, K=256, GROUP=128,
                                       BLOCK_N=32, BLOCK_K=32)
    np.testing.assert_allclose(c, want, rtol=1e-2, atol=1e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("warps", [1, 2, 4])
def test_int4_gemv_on_gpu(warps) -> None:
    cupy = pytest.importorskip("cupy")
    a, packed, scales, zeros, want = _inputs()
    c = cupy.zeros(512, np.float32)
    int4_gemv_kernel[(2, 16)](cupy.asarray(a), cupy.asarray(packed), cupy.asarray(scales),
                              cupy.asarray(zeros), c, N=512, K=512, GROUP=128, BLOCK_N=256,
                              BLOCK_K=32, num_warps=warps)
    np.testing.assert_allclose(cupy.asnumpy(c), want, rtol=1e-2, atol=1e-2)
