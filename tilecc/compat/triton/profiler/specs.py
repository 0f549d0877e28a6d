"""`triton.profiler.specs`: the peak rates the viewer's `util` compares frames with.

Tensor-core FLOP/s at a width in bits (8, 16, 32, 64: a wider operand halves the rate per
doubling) and memory bandwidth, from a device's facts as the profile records them
(clock rates in kHz, bus width in bits, SM / CU count)."""

from __future__ import annotations


def _a100(width, **facts):
    return 624e12 / (width / 8)


def _ada(width, **facts):  # L4 / RTX 4090 class, FP16 accumulation not counted
    return 330.3e12 / (width / 8)


def _hopper(width, num_sms, clock_rate, **facts):  # H100 SXM: 1513 TFLOP/s FP8 at 114 SMs, 1755 MHz
    return num_sms / 114 * clock_rate / 1755e3 * 1513e12 / (width / 8)


def _blackwell(width, num_sms, clock_rate, **facts):  # 16384 FP8 operations per SM per clock
    return num_sms * 16384 * clock_rate * 1e3 / (width / 8)


flops_by_device = {"CUDA": {"80": _a100, "89": _ada, "90": _hopper, "100": _blackwell}}
amd_bps_by_arch = {"gfx90a": 3.2e12, "gfx942": 5.3e12, "gfx950": 8.0e12}
# FP8 matrix operations per clock per CU (gfx90a: its INT8 rate, having no FP8)
amd_fp8_flops_by_arch = {"gfx90a": 1024, "gfx942": 4096, "gfx950": 8192}


def max_flops(device_type, arch, width, num_sms, clock_rate):
    """Peak FLOP/s of a device at `width` bits."""
    if device_type == "HIP":
        return amd_fp8_flops_by_arch[arch] * num_sms * clock_rate * 1e3 / (width / 8)
    if device_type not in flops_by_device:
        raise ValueError(f"Unsupported device type: {device_type}")
    if arch not in flops_by_device[device_type]:
        raise ValueError(f"Unsupported architecture: {arch}")
    return flops_by_device[device_type][arch](width, num_sms=num_sms, clock_rate=clock_rate)


def max_bps(device_type, arch, bus_width, memory_clock_rate):
    """Peak bytes per second of device memory (CUDA: double data rate over the bus)."""
    if device_type == "CUDA":
        return 2 * bus_width * memory_clock_rate * 1e3 / 8
    if device_type != "HIP":
        raise ValueError(f"Unsupported device type: {device_type}")
    return amd_bps_by_arch[arch]
