"""A recording stand-in for hip-python's `hip.hip`: the functions, enums and structs that
tilecc's HIP launch path calls, with hip-python's names, parameter names and
`(hipError_t, value...)` results, and with the checks the HIP runtime makes (clr's
hipModuleLaunchKernel: the stream's device must be the current one, the dynamic shared
memory within the device's LDS, `kernelParams` or `extra` but not both...).

    fake = FakeHip(devices=[FakeDevice("gfx90a:sramecc+:xnack-")])
    fake.install(monkeypatch)        # `from hip import hip` now returns it
    ...
    fake.calls                       # every call: Call(name, {parameter: argument})
    fake.fail("hipModuleLaunchKernel", fake.hipError_t.hipErrorLaunchFailure)

A code object is any bytes that start with ELF's magic; a kernel is found in it when its
name occurs in it (a real code object's symbol table holds the names).
`tests/test_hip_launch.py` checks the names, values and parameter names against the real
hip-python where it is installed.
"""

from __future__ import annotations

import ctypes
import enum
import inspect
import struct
import sys
import types
from dataclasses import dataclass, field


class hipError_t(enum.IntEnum):  # noqa: N801  (hip-python's names)
    hipSuccess = 0
    hipErrorInvalidValue = 1
    hipErrorOutOfMemory = 2
    hipErrorNotInitialized = 3
    hipErrorInvalidConfiguration = 9
    hipErrorInvalidDeviceFunction = 98
    hipErrorNoDevice = 100
    hipErrorInvalidDevice = 101
    hipErrorInvalidImage = 200
    hipErrorInvalidContext = 201
    hipErrorInvalidKernelFile = 218
    hipErrorInvalidResourceHandle = 400
    hipErrorNotFound = 500
    hipErrorIllegalAddress = 700
    hipErrorLaunchOutOfResources = 701
    hipErrorLaunchFailure = 719


# what hipGetErrorString says of each (the HIP runtime's wording)
ERROR_STRINGS = {
    hipError_t.hipSuccess: "no error",
    hipError_t.hipErrorInvalidValue: "invalid argument",
    hipError_t.hipErrorOutOfMemory: "out of memory",
    hipError_t.hipErrorNotInitialized: "initialization error",
    hipError_t.hipErrorInvalidConfiguration: "invalid configuration argument",
    hipError_t.hipErrorInvalidDeviceFunction: "invalid device function",
    hipError_t.hipErrorNoDevice: "no ROCm-capable device is detected",
    hipError_t.hipErrorInvalidDevice: "invalid device ordinal",
    hipError_t.hipErrorInvalidImage: "device kernel image is invalid",
    hipError_t.hipErrorInvalidContext: "invalid device context",
    hipError_t.hipErrorInvalidKernelFile: "invalid kernel file",
    hipError_t.hipErrorInvalidResourceHandle: "invalid resource handle",
    hipError_t.hipErrorNotFound: "named symbol not found",
    hipError_t.hipErrorIllegalAddress: "an illegal memory access was encountered",
    hipError_t.hipErrorLaunchOutOfResources: "too many resources requested for launch",
    hipError_t.hipErrorLaunchFailure: "unspecified launch failure",
}


class hipDeviceAttribute_t(enum.IntEnum):  # noqa: N801
    hipDeviceAttributeMultiprocessorCount = 63
    hipDeviceAttributeMaxSharedMemoryPerBlock = 74
    hipDeviceAttributeSharedMemPerBlockOptin = 75
    hipDeviceAttributeWarpSize = 87


class hipFunction_attribute(enum.IntEnum):  # noqa: N801
    HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
    HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
    HIP_FUNC_ATTRIBUTE_NUM_REGS = 4
    HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class hipFuncAttribute(enum.IntEnum):  # noqa: N801
    hipFuncAttributeMaxDynamicSharedMemorySize = 8


class hipDeviceProp_t:  # noqa: N801
    """The fields tilecc reads (hipGetDeviceProperties fills them)."""

    def __init__(self):
        self.gcnArchName = b""
        self.name = b""
        self.sharedMemPerBlock = 0
        self.warpSize = 0
        self.multiProcessorCount = 0


@dataclass
class FakeDevice:
    """One device: its architecture, LDS per block and what it says of the opt-in limit
    (None: it refuses the attribute, hipErrorInvalidValue)."""

    arch: str = "gfx90a:sramecc+:xnack-"
    shared_per_block: int = 64 * 1024
    shared_optin: int | None = 64 * 1024
    warp_size: int = 64
    multiprocessors: int = 104

    @property
    def lds(self) -> int:
        """What one program may have: the larger of the two (on AMD they are equal)."""
        return max(self.shared_per_block, self.shared_optin or 0)


@dataclass
class Module:
    image: bytes
    device: int


@dataclass
class Function:
    module: Module
    name: str
    static_shared: int = 0
    max_dynamic_shared: int | None = None  # as hipFuncSetAttribute set it


@dataclass
class Call:
    name: str
    args: dict = field(default_factory=dict)

    def __getitem__(self, key):
        return self.args[key]


@dataclass
class Launch:
    """What one hipModuleLaunchKernel gave the GPU: the kernel argument bytes as
    hip-python lays out `extra` (each value at its natural alignment, up to 8 bytes)."""

    function: Function
    grid: tuple
    block: tuple
    shared: int
    stream: object
    device: int
    kernarg: bytes
    values: tuple  # the ctypes values, as given
    declared: list  # the code object's arguments (`kernel_arguments`), where it has them


_CTYPES_SCALARS = (ctypes.c_bool, ctypes.c_byte, ctypes.c_ubyte, ctypes.c_short,
                   ctypes.c_ushort, ctypes.c_int, ctypes.c_uint, ctypes.c_long, ctypes.c_ulong,
                   ctypes.c_longlong, ctypes.c_ulonglong, ctypes.c_float, ctypes.c_double,
                   ctypes.c_void_p, ctypes.c_char, ctypes.c_int8, ctypes.c_uint8,
                   ctypes.c_int16, ctypes.c_uint16, ctypes.c_int32, ctypes.c_uint32,
                   ctypes.c_int64, ctypes.c_uint64)


def pack_extra(entries) -> bytes:
    """hip-python's packing of a list or tuple `extra`: each ctypes value copied at an
    offset aligned to min(its size, 8); other entries are pointers (an int address)."""
    out = bytearray()
    for e in entries:
        if isinstance(e, _CTYPES_SCALARS):
            raw, size = ctypes.string_at(ctypes.addressof(e), ctypes.sizeof(e)), ctypes.sizeof(e)
        elif isinstance(e, int) or e is None:
            raw, size = (e or 0).to_bytes(8, sys.byteorder), 8
        else:
            raise TypeError(f"extra: {type(e).__name__} is neither a ctypes value nor a "
                            "pointer")  # hip-python fails its Pointer conversion
        out += bytes(-len(out) % min(size, 8))
        out += raw
    return bytes(out)


# --- a code object's argument layout (its AMDGPU metadata note) -----------------------------------

def kernel_arguments(image: bytes) -> dict[str, list[dict]]:
    """Per kernel of a code object, its arguments as the AMDGPU metadata note declares
    them (`.offset`, `.size`, `.value_kind`...): where the kernel reads each one.  Empty
    for bytes that are not a 64-bit ELF with such a note."""
    try:
        return _kernel_arguments(image) if image[:5] == b"\x7fELF\x02" else {}
    except (struct.error, IndexError, KeyError, TypeError, UnicodeDecodeError):
        return {}  # not a whole ELF file: the tests' stand-in code objects


def _kernel_arguments(image: bytes) -> dict[str, list[dict]]:
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    out = {}
    for i in range(shnum):
        sh_type, = struct.unpack_from("<I", image, shoff + i * shentsize + 4)
        offset, size = struct.unpack_from("<QQ", image, shoff + i * shentsize + 24)
        if sh_type != 7:  # SHT_NOTE
            continue
        at, end = offset, offset + size
        while at + 12 <= end:
            namesz, descsz, kind = struct.unpack_from("<III", image, at)
            name_at = at + 12
            desc_at = name_at + (namesz + 3) // 4 * 4
            if image[name_at:name_at + namesz] == b"AMDGPU\0" and kind == 32:
                meta, _ = _msgpack(image, desc_at)
                out.update({k[".name"]: k[".args"] for k in meta.get("amdhsa.kernels", ())})
            at = desc_at + (descsz + 3) // 4 * 4
    return out


def _msgpack(data: bytes, at: int):
    """One MessagePack value at `at` (the kinds the metadata uses): (value, next offset)."""
    b = data[at]
    at += 1
    if b <= 0x7F:
        return b, at
    if b >= 0xE0:
        return b - 0x100, at
    if 0x80 <= b <= 0x8F or b in (0xDE, 0xDF):
        n, at = _length(data, at, b, 0x80, 0xDE)
        out = {}
        for _ in range(n):
            key, at = _msgpack(data, at)
            out[key], at = _msgpack(data, at)
        return out, at
    if 0x90 <= b <= 0x9F or b in (0xDC, 0xDD):
        n, at = _length(data, at, b, 0x90, 0xDC)
        out = []
        for _ in range(n):
            value, at = _msgpack(data, at)
            out.append(value)
        return out, at
    if 0xA0 <= b <= 0xBF or b in (0xD9, 0xDA, 0xDB, 0xC4, 0xC5, 0xC6):
        if 0xA0 <= b <= 0xBF:
            n = b & 0x1F
        else:
            width = {0xD9: 1, 0xDA: 2, 0xDB: 4, 0xC4: 1, 0xC5: 2, 0xC6: 4}[b]
            n = int.from_bytes(data[at:at + width], "big")
            at += width
        raw = data[at:at + n]
        return (raw if b in (0xC4, 0xC5, 0xC6) else raw.decode()), at + n
    fixed = {0xC0: (0, None), 0xC2: (0, False), 0xC3: (0, True), 0xCC: (1, ">B"),
             0xCD: (2, ">H"), 0xCE: (4, ">I"), 0xCF: (8, ">Q"), 0xD0: (1, ">b"),
             0xD1: (2, ">h"), 0xD2: (4, ">i"), 0xD3: (8, ">q"), 0xCA: (4, ">f"),
             0xCB: (8, ">d")}
    width, code = fixed[b]
    if width == 0:
        return code, at
    return struct.unpack_from(code, data, at)[0], at + width


def _length(data: bytes, at: int, b: int, fix: int, wide: int) -> tuple[int, int]:
    if b < fix + 16:
        return b - fix, at
    width = 2 if b == wide else 4
    return int.from_bytes(data[at:at + width], "big"), at + width


class FakeHip(types.ModuleType):
    """`hip.hip`, recording.  `calls`: every call made, in order (but hipGetErrorName and
    hipGetErrorString); `launches`: what each successful hipModuleLaunchKernel launched;
    `current`: the calling thread's device; `streams`: the device of each stream handle
    the test hands out (None and 0 are the current device's null stream)."""

    hipError_t = hipError_t
    hipDeviceAttribute_t = hipDeviceAttribute_t
    hipFunction_attribute = hipFunction_attribute
    hipFuncAttribute = hipFuncAttribute
    hipDeviceProp_t = hipDeviceProp_t

    def __init__(self, devices=None):
        super().__init__("hip.hip")
        self.devices = list(devices) if devices is not None else [FakeDevice()]
        self.calls: list[Call] = []
        self.launches: list[Launch] = []
        self.current = 0
        self.streams: dict[int, int] = {}
        self.static_shared: dict[str, int] = {}  # per kernel name, default 0
        self._failures: dict[str, list] = {}

    # --- for tests ---------------------------------------------------------------------------

    def install(self, monkeypatch) -> FakeHip:
        """`from hip import hip` returns this module until the test ends."""
        package = types.ModuleType("hip")
        package.__path__ = []  # a package: `from hip import hiprtc` fails cleanly
        package.hip = self
        monkeypatch.setitem(sys.modules, "hip", package)
        monkeypatch.setitem(sys.modules, "hip.hip", self)
        return self

    def fail(self, name: str, error: hipError_t, times: int | None = 1) -> None:
        """Make the next `times` calls of `name` (every one: None) return `error`."""
        self._failures.setdefault(name, []).append([error, times])

    def names(self) -> list[str]:
        return [c.name for c in self.calls]

    def of(self, name: str) -> list[Call]:
        return [c for c in self.calls if c.name == name]

    def _record(self, name: str, args: dict):
        self.calls.append(Call(name, args))
        for failure in self._failures.get(name, []):
            error, times = failure
            if times is None or times > 0:
                if times is not None:
                    failure[1] -= 1
                return error
        return None

    def _device(self, device_id) -> FakeDevice | None:
        ok = isinstance(device_id, int) and 0 <= device_id < len(self.devices)
        return self.devices[device_id] if ok else None

    # --- hip-python's functions (their parameter names) ----------------------------------------

    def hipGetErrorName(self, hip_error):  # noqa: N802
        return hipError_t.hipSuccess, hipError_t(hip_error).name.encode()

    def hipGetErrorString(self, hipError):  # noqa: N802, N803
        return hipError_t.hipSuccess, ERROR_STRINGS[hipError_t(hipError)].encode()

    def hipGetDeviceCount(self):  # noqa: N802
        err = self._record("hipGetDeviceCount", {})
        return (err, 0) if err else (hipError_t.hipSuccess, len(self.devices))

    def hipGetDevice(self):  # noqa: N802
        err = self._record("hipGetDevice", {})
        return (err, 0) if err else (hipError_t.hipSuccess, self.current)

    def hipSetDevice(self, deviceId):  # noqa: N802, N803
        err = self._record("hipSetDevice", {"deviceId": deviceId})
        if err:
            return (err,)
        if self._device(deviceId) is None:
            return (hipError_t.hipErrorInvalidDevice,)
        self.current = deviceId
        return (hipError_t.hipSuccess,)

    def hipGetDeviceProperties(self, prop, deviceId):  # noqa: N802, N803
        err = self._record("hipGetDeviceProperties", {"prop": prop, "deviceId": deviceId})
        dev = self._device(deviceId)
        if err or dev is None:
            return (err or hipError_t.hipErrorInvalidDevice,)
        prop.gcnArchName = dev.arch.encode()
        prop.name = b"Fake AMD GPU"
        prop.sharedMemPerBlock = dev.shared_per_block
        prop.warpSize = dev.warp_size
        prop.multiProcessorCount = dev.multiprocessors
        return (hipError_t.hipSuccess,)

    def hipDeviceGetAttribute(self, attr, deviceId):  # noqa: N802, N803
        err = self._record("hipDeviceGetAttribute",
                           {"attr": hipDeviceAttribute_t(attr), "deviceId": deviceId})
        dev = self._device(deviceId)
        if err or dev is None:
            return err or hipError_t.hipErrorInvalidDevice, 0
        value = {hipDeviceAttribute_t.hipDeviceAttributeMaxSharedMemoryPerBlock:
                 dev.shared_per_block,
                 hipDeviceAttribute_t.hipDeviceAttributeSharedMemPerBlockOptin: dev.shared_optin,
                 hipDeviceAttribute_t.hipDeviceAttributeWarpSize: dev.warp_size,
                 hipDeviceAttribute_t.hipDeviceAttributeMultiprocessorCount:
                 dev.multiprocessors}[attr]
        return (hipError_t.hipErrorInvalidValue, 0) if value is None else \
            (hipError_t.hipSuccess, value)

    def hipModuleLoadData(self, image):  # noqa: N802
        err = self._record("hipModuleLoadData", {"image": image})
        if err:
            return err, None
        if not isinstance(image, bytes) or not image.startswith(b"\x7fELF"):
            return hipError_t.hipErrorInvalidImage, None
        return hipError_t.hipSuccess, Module(image, self.current)

    def hipModuleUnload(self, module):  # noqa: N802
        return (self._record("hipModuleUnload", {"module": module}) or hipError_t.hipSuccess,)

    def hipModuleGetFunction(self, module, kname):  # noqa: N802
        err = self._record("hipModuleGetFunction", {"module": module, "kname": kname})
        if err:
            return err, None
        if not isinstance(module, Module):
            return hipError_t.hipErrorInvalidResourceHandle, None
        if not isinstance(kname, bytes) or kname not in module.image:
            return hipError_t.hipErrorNotFound, None
        name = kname.decode()
        return hipError_t.hipSuccess, Function(module, name, self.static_shared.get(name, 0))

    def hipFuncGetAttribute(self, attrib, hfunc):  # noqa: N802
        err = self._record("hipFuncGetAttribute",
                           {"attrib": hipFunction_attribute(attrib), "hfunc": hfunc})
        if err:
            return err, 0
        if not isinstance(hfunc, Function):
            return hipError_t.hipErrorInvalidDeviceFunction, 0
        lds = self.devices[hfunc.module.device].lds
        value = {hipFunction_attribute.HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: hfunc.static_shared,
                 hipFunction_attribute.HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
                 lds - hfunc.static_shared,
                 hipFunction_attribute.HIP_FUNC_ATTRIBUTE_NUM_REGS: 32,
                 hipFunction_attribute.HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: 1024}[attrib]
        return hipError_t.hipSuccess, value

    def hipFuncSetAttribute(self, func, attr, value):  # noqa: N802
        err = self._record("hipFuncSetAttribute",
                           {"func": func, "attr": hipFuncAttribute(attr), "value": value})
        if err:
            return (err,)
        if not isinstance(func, Function):
            return (hipError_t.hipErrorInvalidDeviceFunction,)
        # clr: within the LDS the kernel leaves, for the current device's kernel
        lds = self.devices[self.current].lds
        if func.module.device != self.current:
            return (hipError_t.hipErrorInvalidDeviceFunction,)
        if not 0 <= value <= lds - func.static_shared:
            return (hipError_t.hipErrorInvalidValue,)
        func.max_dynamic_shared = value
        return (hipError_t.hipSuccess,)

    def hipModuleLaunchKernel(self, f, gridDimX, gridDimY, gridDimZ, blockDimX,  # noqa: N802
                              blockDimY, blockDimZ, sharedMemBytes, stream, kernelParams,
                              extra):  # noqa: N803
        args = dict(f=f, gridDimX=gridDimX, gridDimY=gridDimY, gridDimZ=gridDimZ,
                    blockDimX=blockDimX, blockDimY=blockDimY, blockDimZ=blockDimZ,
                    sharedMemBytes=sharedMemBytes, stream=stream, kernelParams=kernelParams,
                    extra=extra)
        err = self._record("hipModuleLaunchKernel", args)
        if err:
            return (err,)
        if not isinstance(f, Function):
            return (hipError_t.hipErrorInvalidResourceHandle,)
        stream_device = self.current if stream in (None, 0) else self.streams.get(stream)
        # clr: a stream it knows, whose device is the current one
        if stream_device is None or stream_device != self.current:
            return (hipError_t.hipErrorInvalidResourceHandle,)
        if f.module.device != self.current:  # no kernel of this module on the device
            return (hipError_t.hipErrorInvalidDevice,)
        dev = self.devices[self.current]
        grid, block = (gridDimX, gridDimY, gridDimZ), (blockDimX, blockDimY, blockDimZ)
        if 0 in grid or 0 in block or blockDimX * blockDimY * blockDimZ > 1024:
            return (hipError_t.hipErrorInvalidValue,)
        if sharedMemBytes > dev.lds:
            return (hipError_t.hipErrorInvalidValue,)
        if kernelParams is not None and extra is not None:
            return (hipError_t.hipErrorInvalidValue,)
        kernarg = pack_extra(extra) if extra is not None else b""
        # a real code object says where its kernel reads each argument: the buffer must
        # hold them all (clr would leave the ones past its end unset, silently)
        declared = kernel_arguments(f.module.image).get(f.name, [])
        if any(a[".offset"] + a[".size"] > len(kernarg) for a in declared
               if not a[".value_kind"].startswith("hidden_")):
            return (hipError_t.hipErrorInvalidValue,)
        self.launches.append(Launch(f, grid, block, sharedMemBytes, stream, self.current,
                                    kernarg, tuple(extra or ()), declared))
        return (hipError_t.hipSuccess,)


# hip-python's functions of `hip.hip` the fake has (what the check against it compares)
FUNCTIONS = tuple(name for name, _ in inspect.getmembers(FakeHip, inspect.isfunction)
                  if name.startswith("hip"))
ENUMS = (hipError_t, hipDeviceAttribute_t, hipFunction_attribute, hipFuncAttribute)
