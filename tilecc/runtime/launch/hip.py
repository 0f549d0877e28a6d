"""HIP launches through hip-python: loading a code object, and the warm launch —
`hipModuleLaunchKernel` with the values as ctypes in `extra`.

Everything before the launch call (binding, the warm key, device checks, the grid) is
shared with CUDA (`args.py`).  No AMD GPU has run this yet (see docs/architecture.md).
"""

from __future__ import annotations

import struct
from typing import Callable


def _check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise RuntimeError(f"HIP error {err}")
    return rest[0] if len(rest) == 1 else tuple(rest)


def current_device() -> int:
    return 0


def device_arch(device_id: int) -> str:
    """gfxNNN of a device (without its feature suffixes)."""
    from hip import hip

    props = hip.hipDeviceProp_t()
    _check(hip.hipGetDeviceProperties(props, device_id))
    return props.gcnArchName.decode().split(":")[0]


class HipKernel:
    """A compiled code object loaded and launched through hip-python."""

    def __init__(self, binary, name: str, threads: int, device_id: int, specs=()):
        from hip import hip

        self.hip = hip
        _check(hip.hipSetDevice(device_id))
        self.module = _check(hip.hipModuleLoadData(binary.data))
        self.function = _check(hip.hipModuleGetFunction(self.module, name.encode()))
        self.name = name
        self.threads = threads
        self.shared_bytes = binary.shared_bytes
        if self.shared_bytes > 0:  # as for CUDA: static plus dynamic past 48 KiB
            _check(hip.hipFuncSetAttribute(
                self.function, hip.hipFuncAttribute.hipFuncAttributeMaxDynamicSharedMemorySize,
                self.shared_bytes))
        self.device_id = device_id
        # hipModuleLaunchKernel's `extra`: one ctypes value per parameter the kernel takes
        self.ctypes_of = [None if s.equals_one else _hip_ctype(s.type) for s in specs
                          if not s.is_constexpr]

    def launch_values(self, grid, values, stream) -> None:
        extra = tuple(make(v) for make, v in zip(self.ctypes_of, values) if make is not None)
        _check(self.hip.hipModuleLaunchKernel(self.function, *grid, self.threads, 1, 1,
                                              sharedMemBytes=self.shared_bytes, stream=stream,
                                              kernelParams=None, extra=extra))


def _hip_ctype(t) -> Callable:
    import ctypes

    if t.is_ptr():
        return ctypes.c_void_p
    if t.short == "fp16":  # ctypes has no half: its 16 bits
        return lambda v: ctypes.c_uint16(struct.unpack("=H", struct.pack("=e", v))[0])
    return {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16,
            "i32": ctypes.c_int32, "i64": ctypes.c_int64, "u8": ctypes.c_uint8,
            "u16": ctypes.c_uint16, "u32": ctypes.c_uint32, "u64": ctypes.c_uint64,
            "bf16": ctypes.c_uint16, "fp32": ctypes.c_float, "fp64": ctypes.c_double}[t.short]


def load(binary, name: str, threads: int, device_id: int, specs,
         cooperative: bool = False) -> HipKernel:
    if cooperative:  # (a launch refuses it before compiling: `launch.hip_refusals`)
        raise ValueError("launch_cooperative_grid is not supported by tilecc on HIP")
    return HipKernel(binary, name, threads, device_id, specs)


class HipLauncher:
    """One HIP kernel with one specialization's argument layout: the cached object of the
    warm path.  `launcher(grid, values)` launches it on the default stream."""

    backend = "hip"
    __slots__ = ("kernel", "codes", "taken", "device_id", "compiled")
    _owner = None  # no argument block for a generated CUDA launch to fill: it calls this

    def __init__(self, kernel, layout: tuple[str, tuple[bool, ...]]):
        self.kernel = kernel
        self.codes, self.taken = layout
        self.device_id = kernel.device_id
        self.compiled = getattr(kernel, "compiled", None)  # what a launch returns

    def __call__(self, grid, values) -> None:
        self.kernel.launch_values(grid, values, None)

    @staticmethod
    def direct_tail(out: list[str], hand_off: str) -> tuple[list[str], list[str], dict]:
        """The last line of a generated warm launch (see `cuda.Launcher.direct_tail`): the
        launcher's call — hip-python takes the values, there is no block to pack."""
        return [], [f"_tc_l(_tc_g3, [{', '.join(out)}])"], {}


def launcher(kernel, layout, frameworks: set[str]) -> HipLauncher:
    return HipLauncher(kernel, layout)
