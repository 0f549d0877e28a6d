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


@tilecc.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


def test_a_launch_returns_the_compiled_kernel(torch):
    """`h = kernel[grid](...)`: the compiled kernel, the same on warm launches, with the
    driver's registers once `_init_handles()` has run (it uses the loaded kernel)."""
    x = torch.arange(100, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    got = [scale_kernel[(2,)](x, y, 100, BLOCK=64) for _ in range(3)]
    h = got[0]
    assert all(g is h for g in got) and h.name == "scale_kernel"
    assert ".entry scale_kernel" in h.asm["ptx"] and h.asm["cubin"] == h.kernel
    h._init_handles()
    assert h.function is not None and 0 < h.n_regs <= 255
    h[(2, 1, 1)](x, y, 100, 64)  # launch it again through the compiled kernel
    torch.testing.assert_close(y, x * 2)


def test_repr_names_a_launched_kernel(torch):
    """Triton's test_value_specialization: `@jit(repr=f)` names the launched kernel."""
    def name_of(spec):
        ones = "_".join(k for k, v in spec.constants.items() if v == 1)
        return f"kernel_{spec.signature['value1']}_{ones}"

    @tilecc.jit(repr=name_of)
    def kernel(value1, is_one, X):
        pass

    x = torch.tensor([3.14159], device="cuda")
    for value, kind in [(-1, "i32"), (2**32, "i64"), (2**64 - 1, "u64")]:
        h = kernel[(1,)](value, 1, x)
        assert "is_one" in h.name and kind in h.name


def test_arch_and_cooperative_launches(torch):
    """`arch=` in Triton's spelling or tilecc's compiles for that architecture where its
    binary loads on the device (else a ValueError); launch_cooperative_grid=True launches
    through cuLaunchCooperativeKernel (too large a grid: the driver's error)."""
    if torch.version.hip:
        pytest.skip("CUDA options")
    major, minor = torch.cuda.get_device_capability()
    x = torch.arange(100, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    for arch in (f"sm{major}{minor}", f"sm_{major}{minor}", f"sm_{major}0"):
        y.zero_()
        h = scale_kernel[(2,)](x, y, 100, BLOCK=64, arch=arch)
        assert h.metadata.arch.startswith(f"sm_{arch.removeprefix('sm').lstrip('_')}")
        torch.testing.assert_close(y, x * 2)
    with pytest.raises(ValueError, match="does not load on this device"):
        scale_kernel[(2,)](x, y, 100, BLOCK=64, arch=f"sm_{major + 1}0")
    y.zero_()
    for _ in range(2):
        scale_kernel[(2,)](x, y, 100, BLOCK=64, launch_cooperative_grid=True)
    torch.testing.assert_close(y, x * 2)
    with pytest.raises(RuntimeError, match="cuLaunchCooperativeKernel .*720"):
        scale_kernel[(1 << 20,)](x, y, 100, BLOCK=64, launch_cooperative_grid=True)
        torch.cuda.synchronize()


def test_launch_errors_of_tritons_kinds(torch):
    """num_warps=3: an AssertionError (and ValueError) saying "must be a power of 2"; a
    CPU tensor at a GPU launch: a ValueError (and tilecc's LaunchError, a TypeError)."""
    x = torch.zeros(100, device="cuda")
    with pytest.raises(AssertionError, match="must be a power of 2"):
        scale_kernel[(2,)](x, x, 100, BLOCK=64, num_warps=3)
    with pytest.raises(ValueError, match="is a host"):
        scale_kernel[(2,)](torch.zeros(100), x, 100, BLOCK=64)
    if not torch.version.hip:  # AMD's hints: refused on CUDA, as Triton's CUDA backend does
        with pytest.raises(TypeError, match="AMD .HIP. tuning hints"):
            scale_kernel[(2,)](x, x, 100, BLOCK=64, waves_per_eu=2)
