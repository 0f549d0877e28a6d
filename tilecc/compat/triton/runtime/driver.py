"""`triton.runtime.driver` under the compatibility mode: `driver.active`, the device
queries libraries make before launching (the current device and stream, its target and
properties)."""

from __future__ import annotations

import sys
from collections import namedtuple

GPUTarget = namedtuple("GPUTarget", ["backend", "arch", "warp_size"])

# CUdevice_attribute values (cuda.h) of what Triton's get_device_properties reports
_CUDA_ATTRIBUTES = {"max_shared_mem": 97, "max_num_regs": 12, "multiprocessor_count": 16,
                    "warpSize": 10, "sm_clock_rate": 13, "mem_clock_rate": 36,
                    "mem_bus_width": 37}


def _torch():
    return sys.modules.get("torch")


def _backend() -> str:
    torch = _torch()
    if torch is not None and getattr(torch.version, "hip", None):
        return "hip"
    try:
        from tilecc.runtime import cuda_driver

        cuda_driver.init()
        cuda_driver.deviceGetAttribute(16, 0)
        return "cuda"
    except Exception:  # no libcuda or no NVIDIA device: AMD, if hip-python sees one
        try:
            from hip import hip

            if hip.hipGetDeviceCount()[1] > 0:
                return "hip"
        except Exception:
            pass
    return "cuda"


class _Utils:
    def get_device_properties(self, device: int) -> dict:
        """The keys Triton's driver reports: max_shared_mem (opt-in, bytes),
        max_num_regs (per block), multiprocessor_count, warpSize, sm_clock_rate and
        mem_clock_rate (kHz), mem_bus_width (bits); on AMD also `arch` and
        max_threads_per_sm."""
        if _backend() == "hip":
            from hip import hip

            props = hip.hipDeviceProp_t()
            hip.hipGetDeviceProperties(props, device)
            return {"max_shared_mem": props.sharedMemPerBlock, "max_num_regs":
                    props.regsPerBlock, "multiprocessor_count": props.multiProcessorCount,
                    "warpSize": props.warpSize, "sm_clock_rate": props.clockRate,
                    "mem_clock_rate": props.memoryClockRate, "mem_bus_width":
                    props.memoryBusWidth, "arch": props.gcnArchName.decode(),
                    "max_threads_per_sm": props.maxThreadsPerMultiProcessor}
        from tilecc.runtime import cuda_driver

        cuda_driver.init()
        return {key: cuda_driver.deviceGetAttribute(attr, device)
                for key, attr in _CUDA_ATTRIBUTES.items()}


class ActiveDriver:
    """`triton.runtime.driver.active`: the current device, its target and properties."""

    utils = _Utils()

    def is_active(self) -> bool:
        return True

    def get_current_device(self) -> int:
        torch = _torch()
        if torch is not None and torch.cuda.is_available():
            return torch.cuda.current_device()
        from tilecc.runtime.launch import cuda, hip

        try:
            return (hip if _backend() == "hip" else cuda).current_device()
        except Exception as e:  # no device, or no runtime to ask: Triton's error kind
            raise RuntimeError(
                "0 active drivers: no CUDA or HIP device was found (Triton raises this "
                "RuntimeError too); without a GPU, run kernels on the interpreter "
                f"(TRITON_INTERPRET=1, CPU tensors) [{type(e).__name__}: {e}]") from e

    def set_current_device(self, device: int) -> None:
        torch = _torch()
        if torch is not None:
            torch.cuda.set_device(device)
        else:
            import cupy

            cupy.cuda.Device(device).use()

    def get_current_stream(self, device: int | None = None) -> int:
        torch = _torch()
        if torch is not None:
            return torch.cuda.current_stream(device).cuda_stream
        import cupy

        return cupy.cuda.get_current_stream().ptr

    def get_current_target(self) -> GPUTarget:
        from tilecc.runtime.launch import cuda, hip
        from tilecc.transpiler.target import resolve_target

        backend = _backend()  # the device's: cuda or hip
        device = {"cuda": cuda, "hip": hip}[backend].device_arch(self.get_current_device())
        target = resolve_target(backend, device)
        return GPUTarget(backend, target.arch_number, target.warp_size)

    def get_active_torch_device(self):
        device = self.get_current_device()  # (its error first where there is no GPU)
        import torch

        return torch.device("cuda", device)

    def get_device_interface(self):
        import torch

        return torch.cuda

    def get_benchmarker(self):
        from tilecc.runtime.autotune_bench import do_bench

        return do_bench

    def get_empty_cache_for_benchmark(self):
        import torch

        return torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")

    def clear_cache(self, cache) -> None:
        cache.zero_()


class DriverConfig:
    """`triton.runtime.driver`: `.active` (and `.default`) is the one driver tilecc has."""

    def __init__(self):
        self.default = self.active = ActiveDriver()

    def set_active(self, driver) -> None:
        self.active = driver

    def reset_active(self) -> None:
        self.active = self.default


driver = DriverConfig()
