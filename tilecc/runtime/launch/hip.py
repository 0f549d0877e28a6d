"""HIP launches through hip-python: loading a code object on the arrays' device, the
device's shared-memory limit, the framework's current stream, and the warm launch —
`hipModuleLaunchKernel` with the values as ctypes in `extra`.

Everything before the launch call (binding, the warm key, device checks, the grid) is
shared with CUDA (`args.py`).  Each hip-python call returns `(hipError_t, value...)`;
`_call` turns a failure into a `HIPError` that names the call and the error
(`hipGetErrorName`, `hipGetErrorString`).  Loading and launching make the kernel's device
current (a HIP launch fails unless its stream's device is the current one) and put the
caller's device back.

No AMD GPU has run this (see docs/architecture.md); `tests/test_hip_launch.py` runs it on
a recording stand-in for hip-python (`tests/fake_hip.py`), which checks what each call
receives as the HIP runtime does.
"""

from __future__ import annotations

import ctypes
import math
import struct
import sys
from typing import Callable

from tilecc.errors import OutOfResources, install_hint


class HIPError(RuntimeError):
    """A hip-python call failed; `status` is its hipError_t (as an int), `call` its name."""

    def __init__(self, call: str, status: int, name: str, text: str):
        said = f": {text}" if text and text != name else ""  # some runtimes repeat the name
        super().__init__(f"{call} failed: HIP error {status} {name}{said}")
        self.call, self.status, self.error_name = call, status, name


def _text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _error(hip, call: str, err) -> HIPError:
    status = int(err)
    try:
        name = _text(hip.hipGetErrorName(err)[1])
        text = _text(hip.hipGetErrorString(err)[1])
    except Exception:  # a runtime that cannot name it: the number alone
        name, text = getattr(err, "name", "hipError"), ""
    return HIPError(call, status, name, text)


def _call(hip, call: str, *args, **kwargs):
    """hip-python's `call` (a name of `hip.hip`): its value (a tuple for several, None
    for none), or a HIPError naming the call and the error."""
    err, *rest = getattr(hip, call)(*args, **kwargs)
    if err:  # hipSuccess is 0
        raise _error(hip, call, err)
    return rest[0] if len(rest) == 1 else tuple(rest) if rest else None


def _hip():
    try:
        from hip import hip
    except ImportError as e:
        raise ImportError(f"launching on an AMD GPU needs hip-python ({e}): "
                          f"{install_hint('hip')}", name="hip") from None
    return hip


def current_device() -> int:
    """HIP's current device of the calling thread (torch's on ROCm: they share it)."""
    hip = _hip()
    return _call(hip, "hipGetDevice")


def device_arch(device_id: int) -> str:
    """gfxNNN of a device (without its feature suffixes)."""
    hip = _hip()
    props = hip.hipDeviceProp_t()
    _call(hip, "hipGetDeviceProperties", props, device_id)
    return _text(props.gcnArchName).split(":")[0]


def shared_memory_limit(hip, device_id: int) -> int:
    """The most shared memory (LDS) one program may have on a device: the per-block
    maximum, or the opt-in one where the device reports a larger one (a CUDA notion: AMD
    devices report the same, or refuse the attribute)."""
    attrs = hip.hipDeviceAttribute_t
    per_block = _call(hip, "hipDeviceGetAttribute",
                      attrs.hipDeviceAttributeMaxSharedMemoryPerBlock, device_id)
    err, optin = hip.hipDeviceGetAttribute(attrs.hipDeviceAttributeSharedMemPerBlockOptin,
                                           device_id)
    return max(per_block, optin if not err and optin else 0)


class _OnDevice:
    """Make `device_id` HIP's current device for a block, then put the previous one back
    (nothing to do, beyond asking, when it is current already)."""

    __slots__ = ("hip", "device_id", "prev")

    def __init__(self, hip, device_id: int):
        self.hip, self.device_id = hip, device_id

    def __enter__(self):
        self.prev = _call(self.hip, "hipGetDevice")
        if self.prev != self.device_id:
            _call(self.hip, "hipSetDevice", self.device_id)

    def __exit__(self, *exc):
        if self.prev != self.device_id:
            _call(self.hip, "hipSetDevice", self.prev)


class HipKernel:
    """A compiled code object loaded on one device and launched through hip-python."""

    def __init__(self, binary, name: str, threads: int, device_id: int, specs=()):
        hip = self.hip = _hip()
        self.name = name
        self.threads = threads
        self.device_id = device_id
        self.shared_bytes = binary.shared_bytes  # dynamic shared memory, given at each launch
        with _OnDevice(hip, device_id):  # a module is loaded for the current device
            self.module = _call(hip, "hipModuleLoadData", binary.data)
            try:
                self.function = _call(hip, "hipModuleGetFunction", self.module, name.encode())
                # as on CUDA: static plus dynamic within the device's limit (the
                # architecture's table was checked at compile time; a device may allow
                # less), and the dynamic part allowed per kernel
                if self.shared_bytes > 0:
                    self._check_shared_memory()
                    _call(hip, "hipFuncSetAttribute", self.function,
                          hip.hipFuncAttribute.hipFuncAttributeMaxDynamicSharedMemorySize,
                          self.shared_bytes)
            except BaseException:  # (an autotuner may try many): no module left behind
                hip.hipModuleUnload(self.module)
                raise
        # hipModuleLaunchKernel's `extra`: one ctypes value per parameter the kernel takes
        self.ctypes_of = [None if s.equals_one else _hip_ctype(s.type) for s in specs
                          if not s.is_constexpr]

    def _check_shared_memory(self) -> None:
        hip = self.hip
        limit = shared_memory_limit(hip, self.device_id)
        static = _call(hip, "hipFuncGetAttribute",
                       hip.hipFunction_attribute.HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                       self.function)
        if static + self.shared_bytes > limit:
            raise OutOfResources(static + self.shared_bytes, limit, "shared memory", details=(
                f"{self.name} needs {static} bytes of static and {self.shared_bytes} of "
                f"dynamic shared memory (LDS) per program; device {self.device_id} allows "
                f"{limit}"))

    def launch_values(self, grid, values, stream) -> None:
        """Launch on `grid` with the run-time values (`args.arg_key`'s) on `stream` (a raw
        hipStream_t, None or 0: the device's null stream), the kernel's device current."""
        extra = tuple(make(v) for make, v in zip(self.ctypes_of, values) if make is not None)
        hip = self.hip
        with _OnDevice(hip, self.device_id):
            _call(hip, "hipModuleLaunchKernel", self.function, *grid, self.threads, 1, 1,
                  sharedMemBytes=self.shared_bytes, stream=stream, kernelParams=None,
                  extra=extra)


def _fp16(v) -> ctypes.c_uint16:
    """An fp16 argument as its 16 bits (ctypes has no half); beyond fp16's range, ±inf
    as a C cast gives (the CUDA path's `saturate`)."""
    try:
        bits = struct.pack("=e", v)
    except (OverflowError, struct.error):
        bits = struct.pack("=e", math.copysign(math.inf, v))
    return ctypes.c_uint16(struct.unpack("=H", bits)[0])


# ctypes of the kernel's scalar parameter types (bf16 arrives as its 16 bits: `slot_values`)
_CTYPES = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16,
           "i32": ctypes.c_int32, "i64": ctypes.c_int64, "u8": ctypes.c_uint8,
           "u16": ctypes.c_uint16, "u32": ctypes.c_uint32, "u64": ctypes.c_uint64,
           "fp16": _fp16, "bf16": ctypes.c_uint16, "fp32": ctypes.c_float,
           "fp64": ctypes.c_double}


def _hip_ctype(t) -> Callable:
    return ctypes.c_void_p if t.is_ptr() else _CTYPES[t.short]


def load(binary, name: str, threads: int, device_id: int, specs,
         cooperative: bool = False) -> HipKernel:
    if cooperative:  # (a launch refuses it before compiling: `launch.hip_refusals`)
        raise ValueError("launch_cooperative_grid is not supported by tilecc on HIP")
    return HipKernel(binary, name, threads, device_id, specs)


# --- streams -----------------------------------------------------------------------------------

def _torch_stream() -> Callable[[int], int]:
    """torch's current stream on a device (ROCm builds keep CUDA's names), as Triton's
    HIP driver reads it."""
    torch = sys.modules["torch"]
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda device_id: torch.cuda.current_stream(device_id).cuda_stream


def _cupy_stream(device_id: int) -> int:
    return sys.modules["cupy"].cuda.get_current_stream(device_id).ptr


def _default_stream(device_id: int) -> int | None:
    cupy = sys.modules.get("cupy")  # arrays of another framework: CuPy's stream if in use
    return cupy.cuda.get_current_stream(device_id).ptr if cupy is not None else None


def stream_getter(frameworks: set[str]) -> Callable[[int], int | None]:
    """The array framework's current stream on a device, as a raw handle: torch's when any
    argument is a torch tensor, else CuPy's; None (the null stream) without either."""
    if "torch" in frameworks:
        return _torch_stream()
    if "cupy" in frameworks:
        return _cupy_stream
    return _default_stream


class HipLauncher:
    """One HIP kernel with one specialization's argument layout: the cached object of the
    warm path.  `launcher(grid, values)` launches it on the framework's current stream of
    the kernel's device."""

    backend = "hip"
    __slots__ = ("kernel", "codes", "taken", "device_id", "compiled", "stream_of")
    _owner = None  # no argument block for a generated CUDA launch to fill: it calls this

    def __init__(self, kernel, layout: tuple[str, tuple[bool, ...]],
                 stream_of: Callable[[int], int | None] = _default_stream):
        self.kernel = kernel
        self.codes, self.taken = layout
        self.device_id = kernel.device_id
        self.compiled = getattr(kernel, "compiled", None)  # what a launch returns
        self.stream_of = stream_of

    def __call__(self, grid, values) -> None:
        self.kernel.launch_values(grid, values, self.stream_of(self.device_id))

    @staticmethod
    def direct_tail(out: list[str], hand_off: str) -> tuple[list[str], list[str], dict]:
        """The last line of a generated warm launch (see `cuda.Launcher.direct_tail`): the
        launcher's call — hip-python takes the values, there is no block to pack."""
        return [], [f"_tc_l(_tc_g3, [{', '.join(out)}])"], {}


def launcher(kernel, layout, frameworks: set[str]) -> HipLauncher:
    return HipLauncher(kernel, layout, stream_getter(frameworks))
