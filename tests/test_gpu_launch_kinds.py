"""Each kind of launch argument on the GPU (`pytest -m gpu`): torch tensors, CuPy arrays,
`__cuda_array_interface__` and DLPack objects, NumPy scalars — warm launches that compute
the right values, launches on the framework's current stream (torch's and CuPy's, shown
by capturing the stream: a launch that went elsewhere would run at once), and
`torch.cuda.graph` capture and replay."""

import numpy as np
import pytest

import tilecc
import tilecc.language as tl

pytestmark = pytest.mark.gpu


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.version.hip:
        pytest.skip("torch without CUDA")
    return torch


@pytest.fixture
def cupy(torch):
    return pytest.importorskip("cupy")


@tilecc.jit
def axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha + tl.load(y_ptr + offs, mask=mask), mask=mask)


class CAI:
    """Another framework's device array: the CUDA array interface alone."""

    def __init__(self, array):
        self._array = array

    @property
    def __cuda_array_interface__(self):
        return self._array.__cuda_array_interface__


class DLPack:
    """Another framework's device array: DLPack alone."""

    def __init__(self, tensor):
        self._tensor = tensor

    def __dlpack__(self, stream=None):
        return self._tensor.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self._tensor.__dlpack_device__()


def _wrap(kind, t, cupy):
    return {"torch": lambda: t, "cupy": lambda: cupy.asarray(t), "cai": lambda: CAI(t),
            "dlpack": lambda: DLPack(t)}[kind]()


@pytest.mark.parametrize("kind", ["torch", "cupy", "cai", "dlpack"])
@pytest.mark.parametrize("scalars", ["python", "numpy"])
def test_each_kind_computes_on_warm_launches(torch, cupy, kind, scalars):
    n = 1000
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty(n, device="cuda")
    args = [_wrap(kind, t, cupy) for t in (x, y, out)]
    for i in range(4):
        alpha = 0.5 + i
        s = (np.int32(n), np.float32(alpha)) if scalars == "numpy" else (n, alpha)
        out.zero_()
        axpy[(tilecc.cdiv(n, 256),)](*args, *s, BLOCK=256)
        torch.cuda.synchronize()
        torch.testing.assert_close(out, x * alpha + y)
    assert axpy._direct is not None


def test_kinds_in_turn_on_one_kernel(torch, cupy):
    """torch tensors and CuPy arrays (and NumPy scalars) in turn: each launch right."""
    @tilecc.jit
    def scale(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)

    x = torch.randn(300, device="cuda")
    out = torch.empty(300, device="cuda")
    for i in range(3):
        for kind in ("torch", "cupy", "dlpack"):
            for alpha in (2.0, np.float32(3.0)):
                out.zero_()
                scale[(2,)](_wrap(kind, x, cupy), _wrap(kind, out, cupy), 300, alpha,
                            BLOCK=256)
                torch.cuda.synchronize()
                torch.testing.assert_close(out, x * float(alpha))
    assert len(scale._binders) == 6


def test_torch_current_stream_is_the_launch_stream(torch):
    """Inside `torch.cuda.graph`, a launch must go to the capturing stream (torch's
    current one): nothing runs until replay."""
    n = 4096
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.zeros(n, device="cuda")
    axpy[(16,)](x, y, out, n, 2.0, BLOCK=256)  # compiled and warm before the capture
    axpy[(16,)](x, y, out, n, 2.0, BLOCK=256)
    torch.cuda.synchronize()
    out.zero_()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        axpy[(16,)](x, y, out, n, 3.0, BLOCK=256)
    torch.cuda.synchronize()
    assert (out == 0).all().item()  # captured, not run
    for i in range(3):
        x.copy_(torch.randn(n, device="cuda"))  # the graph reads the same memory again
        g.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out, x * 3.0 + y)
    s = torch.cuda.Stream()
    out.zero_()
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # the stream is busy: the launch waits behind it
        axpy[(16,)](x, y, out, n, 4.0, BLOCK=256)
    assert not s.query()
    s.synchronize()
    torch.testing.assert_close(out, x * 4.0 + y)


def test_cupy_current_stream_is_the_launch_stream(cupy, torch):
    """With CuPy arrays, a launch goes to CuPy's current stream: captured there (a
    launch that went to another stream would have run at once)."""
    n = 4096
    x = cupy.random.randn(n, dtype=cupy.float32)
    y = cupy.random.randn(n, dtype=cupy.float32)
    out = cupy.zeros(n, dtype=cupy.float32)
    for _ in range(2):  # compiled and warm (these types) before the capture
        axpy[(16,)](x, y, out, np.int32(n), np.float32(2.0), BLOCK=256)
    cupy.cuda.Device().synchronize()
    out.fill(0)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        axpy[(16,)](x, y, out, np.int32(n), np.float32(5.0), BLOCK=256)
        graph = stream.end_capture()
    cupy.cuda.Device().synchronize()
    assert float(abs(out).max()) == 0.0
    graph.launch(stream)
    stream.synchronize()
    cupy.testing.assert_allclose(out, x * 5.0 + y, rtol=1e-5, atol=1e-5)  # fused multiply-add


def test_torch_graph_of_dlpack_and_numpy_scalar_launches(torch, cupy):
    """Capture with other kinds of arguments: DLPack objects over torch tensors (whose
    stream torch's graph captures) and NumPy scalars."""
    n = 2048
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.zeros(n, device="cuda")
    args = (x, DLPack(y), out)  # torch among them: torch's stream
    for _ in range(2):
        axpy[(8,)](*args, np.int64(n), np.float32(1.0), BLOCK=256)
    torch.cuda.synchronize()
    out.zero_()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        axpy[(8,)](*args, np.int64(n), np.float32(-2.0), BLOCK=256)
    torch.cuda.synchronize()
    assert (out == 0).all().item()
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x * -2.0 + y)
