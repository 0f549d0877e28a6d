"""Host runtime spellings for exported headers: what differs between CUDA and HIP on the
host side, as data (the device side differs inside `tilecc.h` itself)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuntimeAPI:
    target: str
    header_suffix: str
    include: str  # C++ runtime header
    c_include: str  # C-compatible runtime API header, for C / plain C++ callers
    compiler_macros: tuple[str, ...]  # defined when the device compiler handles the file
    compiler: str  # for the header comment
    error_t: str
    stream_t: str
    success: str
    invalid_value: str
    invalid_configuration: str
    launch: str  # (const void* fn, dim3 grid, dim3 block, void** args, size_t smem, stream)
    set_attribute: str
    max_dynamic_shared: str


CUDA = RuntimeAPI(
    target="cuda", header_suffix=".cuh", include="<cuda_runtime.h>",
    c_include="<cuda_runtime_api.h>", compiler_macros=("__CUDACC__",),
    compiler="nvcc (C++17)", error_t="cudaError_t", stream_t="cudaStream_t",
    success="cudaSuccess", invalid_value="cudaErrorInvalidValue",
    invalid_configuration="cudaErrorInvalidConfiguration", launch="cudaLaunchKernel",
    set_attribute="cudaFuncSetAttribute",
    max_dynamic_shared="cudaFuncAttributeMaxDynamicSharedMemorySize")

HIP = RuntimeAPI(
    target="hip", header_suffix=".hip.hpp", include="<hip/hip_runtime.h>",
    c_include="<hip/hip_runtime_api.h>", compiler_macros=("__HIPCC__", "__HIP__"),
    compiler="hipcc / clang -x hip (C++17)", error_t="hipError_t", stream_t="hipStream_t",
    success="hipSuccess", invalid_value="hipErrorInvalidValue",
    invalid_configuration="hipErrorInvalidConfiguration", launch="hipLaunchKernel",
    set_attribute="hipFuncSetAttribute",
    max_dynamic_shared="hipFuncAttributeMaxDynamicSharedMemorySize")

APIS = {"cuda": CUDA, "hip": HIP}
