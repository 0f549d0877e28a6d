"""Launches on the GPU as Triton's programs make them (`pytest -m gpu`): what a launch
returns, kernels of one parameter, launch options and the errors of a bad launch."""

import pytest

import tilecc
import tilecc.language as tl

pytestmark = pytest.mark.gpu


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    return torch


@tilecc.jit
def add_one_in_place(ptr):
    offs = tl.arange(0, 65536)
    tl.store(ptr + offs, tl.load(ptr + offs) + 1.0)


def test_one_parameter_kernel_launches_again_and_again(torch):
    """A kernel of one parameter, launched warm (its generated launch takes the tensor as
    it is: a tensor of 65536 elements once failed to unpack there)."""
    x = torch.zeros(65536, device="cuda")
    for _ in range(4):
        add_one_in_place[(1,)](x, num_warps=32)
    torch.cuda.synchronize()
    assert (x == 4.0).all().item()
    one = torch.zeros(1, device="cuda")  # a single element: once unpacked to its value

    @tilecc.jit
    def bump(ptr):
        tl.store(ptr, tl.load(ptr) + 1.0)

    for _ in range(3):
        bump[(1,)](one)
    torch.cuda.synchronize()
    assert one.item() == 3.0
