"""The HIP launch path on an AMD GPU (`pytest -m gpu` with torch on ROCm; skipped
elsewhere): what tests/test_hip_launch.py checks on a stand-in for hip-python, on the
hardware — the code object's own argument layout for every argument kind, the caller's
stream, and the device put back."""

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

pytestmark = pytest.mark.gpu


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    if not getattr(torch.version, "hip", None) or not torch.cuda.is_available():
        pytest.skip("needs torch on ROCm with an AMD GPU")
    return torch


@tilecc.jit
def store_scalars(out_ptr, a, b, c, d, e, f, g, h, i, j, k):
    tl.store(out_ptr + 0, a.to(tl.float64))
    tl.store(out_ptr + 1, b.to(tl.float64))
    tl.store(out_ptr + 2, c.to(tl.float64))
    tl.store(out_ptr + 3, d.to(tl.float64))
    tl.store(out_ptr + 4, e.to(tl.float64))
    tl.store(out_ptr + 5, f.to(tl.float64))
    tl.store(out_ptr + 6, g.to(tl.float64))
    tl.store(out_ptr + 7, h.to(tl.float64))
    tl.store(out_ptr + 8, i.to(tl.float64))
    tl.store(out_ptr + 9, j.to(tl.float64))
    tl.store(out_ptr + 10, k.to(tl.float64))


def scalars():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    # one of each kind, each exact in fp64: i8, i16, i32, i64, u64, u8, u32, i1, fp16,
    # bf16, fp64 — between them every alignment hip-python's `extra` pads to
    return [np.int8(-3), np.int16(-300), -7, 1 << 40, 1 << 63, np.uint8(250),
            np.uint32(4_000_000_000), True, np.float16(1.5), ml_dtypes.bfloat16(2.5),
            np.float64(-0.125)]


def test_every_argument_kind_arrives_where_the_code_object_reads_it(torch):
    out = torch.zeros(11, dtype=torch.float64, device="cuda")
    values = scalars()
    store_scalars[(1,)](out, *values)
    torch.cuda.synchronize()
    assert out.cpu().tolist() == [float(v) for v in values]


@tilecc.jit
def axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask) +
             tl.load(y_ptr + offs, mask=mask), mask=mask)


def test_launches_run_on_torchs_current_stream(torch):
    n = 1 << 20
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # torch's work and tilecc's, queued on one stream
        x = torch.arange(n, dtype=torch.float32, device="cuda")
        y = torch.ones(n, dtype=torch.float32, device="cuda")
        out = torch.empty_like(x)
        for _ in range(3):  # slow path, then the warm ones
            axpy[(tilecc.cdiv(n, 1024),)](x, y, out, n, 2.0, BLOCK=1024)
        out.add_(1.0)  # after the kernel, on the same stream
    side.synchronize()
    assert torch.equal(out, 2.0 * x + 2.0)


def test_a_launch_on_the_second_device_leaves_the_current_one(torch):
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two AMD GPUs")
    torch.cuda.set_device(0)
    x = torch.arange(4096, dtype=torch.float32, device="cuda:1")
    out = torch.empty_like(x)
    for _ in range(2):
        axpy[(4,)](x, x, out, 4096, 1.0, BLOCK=1024)
    torch.cuda.synchronize(1)
    assert torch.equal(out, 2.0 * x) and torch.cuda.current_device() == 0
