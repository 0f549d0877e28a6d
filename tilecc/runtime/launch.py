"""Launching on the GPU: argument checks, specialization, compile-once caching, launch.

`kernel[grid]` returns a bound `run` (kept per grid tuple, the grid normalized once).
A warm call — every call after the first of a signature — does only this:

1. bind the arguments: the positional ones as given; keywords only when there are some;
2. compute the warm key: per argument, what decides the specialization (array: dtype,
   pointer % 16, device; int: i32/i64/u64, % 16, == 1; float; bool; constexpr: its
   value) and the values the kernel receives (pointers and scalars as Python numbers).
   `make_binder` generates this as straight-line code for the argument types of the
   first launch that repeats an earlier one (`type(a) is T` checks); other types, and
   that launch, go through the generic loop, `arg_key`;
3. one dict lookup of that key: a `Launcher`, built by the first call;
4. `Launcher.__call__`: `struct.pack_into` of the values into the launcher's argument
   block (whose `kernelParams` array of pointers was built once), the framework's
   current stream (torch's when a tensor is among the arguments, else CuPy's), and
   `cuLaunchKernel` through CuPy's thin driver binding (`cupy_backends`; `cupy` itself
   is not imported).

Once a binder exists, steps 1-4 are one generated function of the kernel's own
parameters (`binder.direct`): Python binds the arguments as it binds any call, and no
argument list, key list or launcher call is built in between.  It declines (returns
False) whatever it was not generated for, and the steps above run as written.

Anything the warm path does not read (NumPy scalars, host arrays, misspelt or defaulted
arguments, a new dtype, device or alignment) takes the slow path: `JITFunction.specs_for`
specializes from scratch with every check and error message (host arrays, mixed
devices, unsupported dtypes), the kernel is compiled through the memory and disk caches
and loaded, and a `Launcher` is built and cached under the warm key.

CUDA modules are loaded in the primary context of the arrays' device — the context that
torch and CuPy use.  HIP goes through hip-python and shares everything up to the launch
call itself; no AMD GPU has run it yet (see docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
import threading
from typing import Any, Callable

from tilecc.errors import CompilationError, NoDeviceError, OutOfResources
from tilecc.runtime.options import LAUNCH_OPTIONS
from tilecc.transpiler.grid import normalize_grid
from tilecc.transpiler.specialize import ArrayInfo
from tilecc.transpiler.target import get_target

# --- the interpreter switch, read cheaply -------------------------------------------------------

# os.environ.get costs ~1 µs for a missing name (a KeyError raised and caught); the
# mapping underneath answers the same question in ~50 ns.
try:
    _env_get = os.environ._data.get  # type: ignore[attr-defined]
    _INTERPRET_KEY = os.environ.encodekey("TILECC_INTERPRET")  # type: ignore[attr-defined]
    _ONE = os.environ.encodevalue("1")  # type: ignore[attr-defined]
except AttributeError:
    _env_get, _INTERPRET_KEY, _ONE = os.environ.get, "TILECC_INTERPRET", "1"


def interpret_requested() -> bool:
    """TILECC_INTERPRET=1: ordinary launches run on the interpreter."""
    return _env_get(_INTERPRET_KEY) == _ONE


# --- the warm key ------------------------------------------------------------------------------

# argument type -> how the warm path reads it; filled in as types are first seen
_INT, _FLOAT, _BOOL, _TORCH, _CUPY, _CAI, _OTHER = range(7)
_KINDS: dict[type, int] = {int: _INT, float: _FLOAT, bool: _BOOL}

# constexpr values of these types go into the key as they are (with their type: 1, 1.0
# and True are equal and hash alike, but specialize differently)
_PLAIN = frozenset((int, float, bool, str, type(None)))

_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_U64_MAX = (1 << 64) - 1


def _kind_of(t: type) -> int:
    torch = sys.modules.get("torch")
    if torch is not None and issubclass(t, torch.Tensor):
        kind = _TORCH
    elif (t.__module__ or "").startswith("cupy") and hasattr(t, "data") and \
            hasattr(t, "__cuda_array_interface__"):
        kind = _CUPY
    elif hasattr(t, "__cuda_array_interface__"):
        kind = _CAI
    else:
        kind = _OTHER
    _KINDS[t] = kind
    return kind


def _wide(v: int) -> str:
    """The key of an int outside i32 (Triton: i64, then u64; wider is an error)."""
    if _I64_MIN <= v <= _I64_MAX:
        return "i64/16" if v & 15 == 0 else "i64"
    if 0 <= v <= _U64_MAX:
        return "u64/16" if v & 15 == 0 else "u64"
    return "too wide"  # never cached: the slow path raises OverflowError


def arg_key(constexpr_flags: tuple[bool, ...], values) -> tuple[list, list] | None:
    """(key, values) for the warm path, or None when some argument needs the slow path.
    The key holds, per parameter, what `JITFunction.specs_for` specializes on; the values
    are those of the run-time (not constexpr) parameters in order, pointers and scalars as
    Python numbers — ints equal to 1 included: `ArgBuffer` packs them, but the kernel,
    which has 1 compiled in, is not given them.

    The generic form of what `make_binder` generates for one set of argument types.
    Pure Python over the arguments: no GPU, no framework calls beyond reading pointers,
    dtypes and devices."""
    key: list = []
    out: list = []
    for is_ce, v in zip(constexpr_flags, values):
        t = type(v)
        if is_ce:
            if t not in _PLAIN:
                if t.__name__ == "constexpr" and hasattr(v, "value"):
                    v = v.value  # tl.constexpr(x) specializes as x
                    t = type(v)
                if hasattr(v, "__cuda_array_interface__") or hasattr(v, "data_ptr"):
                    return None  # an array as a constexpr: the slow path explains
            key.append(t)
            key.append(v)
            continue
        kind = _KINDS.get(t)
        if kind is None:
            kind = _kind_of(t)
        if kind == _TORCH:
            ptr = v.data_ptr()
            key.append((v.dtype, ptr & 15 == 0, v.get_device()))
            out.append(ptr)
        elif kind == _INT:
            if _I32_MIN <= v <= _I32_MAX:
                key.append("=1" if v == 1 else "i32/16" if v & 15 == 0 else "i32")
            else:
                key.append(_wide(v))
            out.append(v)
        elif kind == _FLOAT:
            key.append("fp32")
            out.append(v)
        elif kind == _CUPY:
            mem = v.data
            ptr = mem.ptr
            key.append((v.dtype, ptr & 15 == 0, mem.device_id))
            out.append(ptr)
        elif kind == _BOOL:
            key.append("i1")
            out.append(v)
        elif kind == _CAI:
            cai = v.__cuda_array_interface__
            ptr = cai["data"][0]
            dev = getattr(v, "device", None)
            key.append(("cai", cai["typestr"], ptr & 15 == 0, getattr(dev, "id", 0)))
            out.append(ptr)
        else:
            return None
    return key, out


def make_binder(constexpr_flags: tuple[bool, ...], values, param_names: tuple[str, ...] = (),
                bound: dict | None = None) -> Callable | None:
    """Generate `arg_key` specialized to the argument types of `values`: straight-line code
    that checks each argument's type (`type(a) is T`) and returns (key, values) — or None
    when a type differs (the caller then uses `arg_key`).  Types fixed by the checks are
    left out of the key.  About twice as fast as the loop; None when some argument is of
    a kind the generator does not handle (NumPy scalars, non-plain constexprs, ...).

    With the parameters' names and the `bound` dict (key → Launcher), the binder also
    carries `binder.direct`: the whole warm launch in one generated function (see
    `_direct_source`)."""
    n = len(values)
    env: dict[str, Any] = {"_wide": _wide}
    guards, body, key, out = [], [], [], []
    for i, (is_ce, v) in enumerate(zip(constexpr_flags, values)):
        a, t = f"a{i}", type(v)
        env[f"T{i}"] = t
        guards.append(f"type({a}) is not T{i}")
        if is_ce:
            if t not in _PLAIN:
                return None
            key.append(a)
            continue
        kind = _KINDS.get(t)
        if kind is None:
            kind = _kind_of(t)
        if kind == _TORCH:
            body.append(f"p{i} = {a}.data_ptr()")
            key += [f"{a}.dtype", f"p{i} & 15 == 0", f"{a}.get_device()"]
            out.append(f"p{i}")
        elif kind == _CUPY:
            body.append(f"m{i} = {a}.data")
            body.append(f"p{i} = m{i}.ptr")
            key += [f"{a}.dtype", f"p{i} & 15 == 0", f"m{i}.device_id"]
            out.append(f"p{i}")
        elif kind == _INT:
            key.append(f"((\"=1\" if {a} == 1 else \"i32/16\" if {a} & 15 == 0 else \"i32\") "
                       f"if -2147483648 <= {a} <= 2147483647 else _wide({a}))")
            out.append(a)
        elif kind in (_FLOAT, _BOOL):
            out.append(a)  # fp32 / i1: fixed by the type check
        else:
            return None
    names = ", ".join(f"a{i}" for i in range(n)) + ("," if n == 1 else "")
    lines = ["def binder(values):", f"    {names} = values" if n else "    pass"]
    if guards:
        lines.append(f"    if {' or '.join(guards)}:")
        lines.append("        return None")
    lines += [f"    {b}" for b in body]
    lines.append(f"    return ({', '.join(key)}{',' if len(key) == 1 else ''}), "
                 f"[{', '.join(out)}]")
    exec(compile("\n".join(lines), "<tilecc launch binder>", "exec"), env)
    binder = env["binder"]
    binder.source = "\n".join(lines)
    binder.direct = None
    usable = len(param_names) == n and all(
        m.isidentifier() and not m.startswith("_tc_") and m not in LAUNCH_OPTIONS
        for m in param_names)
    if bound is not None and usable:
        direct = _direct_source(param_names, guards, body, key, out)
        env.update(_tc_bound=bound, _tc_ident=_get_ident, _tc_error=(struct.error, OverflowError),
                   _NO=_MISSING)
        exec(compile(direct, "<tilecc direct launch>", "exec"), env)
        binder.direct = env["direct"]
        binder.direct.source = direct
    return binder


def _direct_source(names, guards, body, key, out) -> str:
    """A warm launch as one function of the kernel's own parameters (Python binds them, as
    it binds any call): the binder's type checks and key, the Launcher looked up, its
    values packed and cuLaunchKernel called — no argument lists, no intermediate calls.
    Returns True when it launched; False hands the launch to the general path (another
    thread, a value that does not pack, a key not seen yet, ...)."""
    n = len(names)
    rename = ", ".join(f"a{i}" for i in range(n)) + ("," if n == 1 else "")
    lines = [f"def direct(_tc_g3, {', '.join(names)}{', ' if n else ''}"
             "num_warps=_NO, num_stages=_NO, debug=_NO):"]
    if n:
        lines.append(f"    {rename} = {', '.join(names)}")
    if guards:
        lines.append(f"    if {' or '.join(guards)}:")
        lines.append("        return False")
    lines += [f"    {b}" for b in body]
    lines.append(f"    _tc_key = ({', '.join(key)}{',' if len(key) == 1 else ''})")
    lines += [
        "    if num_warps is not _NO or num_stages is not _NO or debug is not _NO:",
        "        _tc_key = (_tc_key, 4 if num_warps is _NO else num_warps,",
        "                   None if debug is _NO else debug,",
        "                   None if num_stages is _NO else num_stages)",
        "    _tc_l = _tc_bound.get(_tc_key)",
        "    if _tc_l is None or _tc_l._owner != _tc_ident() or _tc_l.direct is None:",
        "        return False",
        "    _tc_pack, _tc_storage, _tc_launch, _tc_handle, _tc_threads, _tc_shared, "
        "_tc_stream, _tc_dev, _tc_params, _tc_kernel = _tc_l.direct",
        "    try:",
        f"        _tc_pack(_tc_storage, 0{''.join(', ' + o for o in out)})",
        "    except _tc_error:  # a float beyond fp16 / fp32: the general path saturates it",
        "        return False",
        "    if _tc_g3[0] and _tc_g3[1] and _tc_g3[2]:  # an empty grid launches nothing",
        "        _tc_s = _tc_stream(_tc_dev)",
        "        try:",
        "            _tc_launch(_tc_handle, _tc_g3[0], _tc_g3[1], _tc_g3[2], _tc_threads, 1, 1,",
        "                       _tc_shared, _tc_s, _tc_params, 0)",
        "        except Exception as _tc_e:",
        "            _tc_kernel.relaunch(_tc_e, _tc_g3, _tc_s, _tc_params)",
        "    return True",
    ]
    return "\n".join(lines)


# --- packing kernel arguments ------------------------------------------------------------------

# struct codes of the kernel's parameter types (bf16 travels as its 16 bits)
_CODES = {"ptr": "Q", "i1": "?", "i8": "b", "i16": "h", "i32": "i", "i64": "q", "u8": "B",
          "u16": "H", "u32": "I", "u64": "Q", "fp16": "e", "bf16": "H", "fp32": "f",
          "fp64": "d"}


def slot_layout(specs) -> tuple[str, tuple[bool, ...]]:
    """One struct code per run-time (not constexpr) parameter, and which of them the
    kernel takes (not the ints specialized to 1, which are packed but not passed)."""
    runtime = [s for s in specs if not s.is_constexpr]
    return ("".join(_CODES[s.type.name] for s in runtime),
            tuple(not s.equals_one for s in runtime))


class ArgBuffer:
    """The argument block of one kernel: values packed at their natural alignment (as the
    C ABI lays out the kernel's parameters) and the `void *kernelParams[]` array that
    points at each value the kernel takes, built once.  Per launch only the
    `struct.pack_into` of `pack` runs."""

    __slots__ = ("codes", "offsets", "size", "struct", "storage", "params", "params_ptr")

    def __init__(self, codes: str, taken: tuple[bool, ...] | None = None):
        import ctypes

        self.codes = codes
        fmt, offsets, at = ["="], [], 0
        for c in codes:
            size = struct.calcsize("=" + c)
            pad = -at % size
            if pad:
                fmt.append(f"{pad}x")
            at += pad
            offsets.append(at)
            fmt.append(c)
            at += size
        self.offsets = tuple(offsets)
        self.size = at
        self.struct = struct.Struct("".join(fmt))
        self.storage = ctypes.create_string_buffer(max(at, 8))
        base = ctypes.addressof(self.storage)
        taken = taken if taken is not None else (True,) * len(codes)
        pointers = [base + o for o, t in zip(offsets, taken) if t]
        self.params = (ctypes.c_void_p * max(len(pointers), 1))(*pointers)
        self.params_ptr = ctypes.addressof(self.params)

    def pack(self, values) -> int:
        """Write `values` into the block; the address of the kernelParams array."""
        self.struct.pack_into(self.storage, 0, *values)
        return self.params_ptr

    def unpack(self) -> tuple:
        """The values in the block (tests, debugging)."""
        return self.struct.unpack_from(self.storage, 0)

    def kernel_params(self) -> list[int]:
        """The addresses in the kernelParams array (tests, debugging)."""
        return list(self.params)


def slot_values(specs, values: dict, passed: list) -> list:
    """The run-time values of a slow-path launch, as `arg_key` gives warm ones, from
    `JITFunction.specs_for`'s result."""
    out = []
    it = iter(passed)
    for spec in specs:
        if spec.is_constexpr:
            continue
        if spec.equals_one:
            out.append(1)
            continue
        p = next(it)
        if isinstance(p, ArrayInfo):
            out.append(p.ptr)
            continue
        v = values[spec.name]
        if spec.type.name == "bf16":
            import numpy as np

            out.append(int(np.asarray(v, spec.type.to_numpy()).view(np.uint16)))
        elif hasattr(v, "item"):  # a NumPy scalar
            out.append(v.item())
        else:
            out.append(v)
    return out


# --- streams -----------------------------------------------------------------------------------

def _torch_stream() -> Callable[[int], int]:
    return sys.modules["torch"]._C._cuda_getCurrentRawStream


def _cupy_stream(device_id: int) -> int:
    return sys.modules["cupy"].cuda.get_current_stream(device_id).ptr


def _default_stream(device_id: int) -> int:
    cupy = sys.modules.get("cupy")  # arrays of another framework: CuPy's stream if in use
    return cupy.cuda.get_current_stream(device_id).ptr if cupy is not None else 0


def stream_getter(frameworks: set[str]) -> Callable[[int], int]:
    """The array framework's current stream on a device, as a raw handle: torch's when any
    argument is a torch tensor, else CuPy's."""
    if "torch" in frameworks:
        return _torch_stream()
    if "cupy" in frameworks:
        return _cupy_stream
    return _default_stream


# --- kernels -----------------------------------------------------------------------------------

def _driver():
    from tilecc.runtime import cuda_driver

    return cuda_driver


def _runtime():
    from cupy_backends.cuda.api import runtime

    return runtime


def _context_device(driver) -> int | None:
    """The device of the calling thread's current context (None: no context)."""
    try:
        return driver.ctxGetDevice()
    except Exception:  # CUDA_ERROR_INVALID_CONTEXT
        return None


_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1  # the kernel's static shared memory
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97


class CudaKernel:
    """A compiled kernel loaded into the primary context of one device (driver API)."""

    def __init__(self, binary, name: str, threads: int, device_id: int):
        driver = _driver()
        if _context_device(driver) == device_id:  # as torch or CuPy left it: load there
            self.module = driver.moduleLoadData(binary.data)
            self.handle = driver.moduleGetFunction(self.module, name)
        else:
            runtime = _runtime()
            prev = runtime.getDevice()
            runtime.setDevice(device_id)  # makes the device's primary context current
            try:
                self.module = driver.moduleLoadData(binary.data)
                self.handle = driver.moduleGetFunction(self.module, name)
            finally:
                if prev != device_id:
                    runtime.setDevice(prev)
        self.name = name
        self.threads = threads
        self.device_id = device_id
        self.shared_bytes = binary.shared_bytes  # dynamic shared memory, given at each launch
        # static plus dynamic shared memory beyond 48 KiB must be allowed per kernel: the
        # dynamic part is, whenever there is one, within what this device allows (the
        # architecture's table was checked at compile time; a device may allow less)
        if self.shared_bytes > 0:
            self._check_shared_memory(driver)
            driver.funcSetAttribute(self.handle, _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    self.shared_bytes)
        self.launch_kernel = driver.launcher()  # cuLaunchKernel, 11 integer arguments

    def _check_shared_memory(self, driver) -> None:
        limit = driver.deviceGetAttribute(_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                          self.device_id)
        static = driver.funcGetAttribute(_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, self.handle)
        if static + self.shared_bytes > limit:
            raise OutOfResources(static + self.shared_bytes, limit, "shared memory", details=(
                f"{self.name} needs {static} bytes of static and {self.shared_bytes} of "
                f"dynamic shared memory per program; device {self.device_id} allows {limit}"))

    def relaunch(self, error: Exception, grid, stream: int, params_ptr: int) -> None:
        """After a failed launch: if it failed for want of this kernel's context (a thread
        where another device, or no context yet, is current), make the kernel's device
        current, launch again, and put the previous device back; otherwise raise."""
        if getattr(error, "status", None) not in (201, 400):  # INVALID_CONTEXT / _HANDLE
            raise error
        runtime = _runtime()
        prev = runtime.getDevice()
        runtime.setDevice(self.device_id)  # binds the device's primary context
        try:
            self.launch_kernel(self.handle, grid[0], grid[1], grid[2], self.threads, 1, 1,
                               self.shared_bytes, stream, params_ptr, 0)
        finally:
            if prev != self.device_id:
                runtime.setDevice(prev)


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
    if t.name == "fp16":  # ctypes has no half: its 16 bits
        return lambda v: ctypes.c_uint16(struct.unpack("=H", struct.pack("=e", v))[0])
    return {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16,
            "i32": ctypes.c_int32, "i64": ctypes.c_int64, "u8": ctypes.c_uint8,
            "u16": ctypes.c_uint16, "u32": ctypes.c_uint32, "u64": ctypes.c_uint64,
            "bf16": ctypes.c_uint16, "fp32": ctypes.c_float, "fp64": ctypes.c_double}[t.name]


def _check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise RuntimeError(f"HIP error {err}")
    return rest[0] if len(rest) == 1 else tuple(rest)


_get_ident = threading.get_ident


class Launcher:
    """One kernel, ready to launch with one specialization's argument layout: the cached
    object of the warm path.  `launcher(grid, values)` packs the values into the argument
    block and calls cuLaunchKernel on the framework's current stream.

    `kernel` needs `handle`, `threads`, `device_id`, `launch_kernel` (cuLaunchKernel's
    signature) and `relaunch`: tests pass a recording stand-in."""

    __slots__ = ("kernel", "codes", "taken", "stream_of", "device_id", "_owner", "_buffer",
                 "_buffers", "_handle", "_threads", "_launch_kernel", "_shared_bytes", "direct")

    def __init__(self, kernel, layout: tuple[str, tuple[bool, ...]],
                 stream_of: Callable[[int], int]):
        self.kernel = kernel
        self.codes, self.taken = layout
        self.stream_of = stream_of
        self.device_id = kernel.device_id
        # One argument block per thread: between packing and cuLaunchKernel (which copies
        # the values) another thread must not write the block.
        self._owner = _get_ident()
        self._buffer = ArgBuffer(self.codes, self.taken)
        self._buffers: dict[int, ArgBuffer] = {}
        self._handle = getattr(kernel, "handle", None)
        self._threads = kernel.threads
        self._launch_kernel = getattr(kernel, "launch_kernel", None)
        self._shared_bytes = getattr(kernel, "shared_bytes", 0)
        # what a generated direct launch (make_binder) reads, in one tuple
        buf = self._buffer
        self.direct = (buf.struct.pack_into, buf.storage, self._launch_kernel, self._handle,
                       self._threads, self._shared_bytes, stream_of, self.device_id,
                       buf.params_ptr, kernel)

    def __call__(self, grid: tuple[int, int, int], values) -> None:
        buf = self._buffer if _get_ident() == self._owner else self._thread_buffer()
        try:
            buf.struct.pack_into(buf.storage, 0, *values)
        except (struct.error, OverflowError):  # a float beyond fp16/fp32: inf, as a C cast
            buf.struct.pack_into(buf.storage, 0, *_saturate(self.codes, values))
        stream = self.stream_of(self.device_id)
        try:
            self._launch_kernel(self._handle, grid[0], grid[1], grid[2], self._threads, 1, 1,
                                self._shared_bytes, stream, buf.params_ptr, 0)
        except Exception as e:
            self.kernel.relaunch(e, grid, stream, buf.params_ptr)

    def _thread_buffer(self) -> ArgBuffer:
        ident = _get_ident()
        buf = self._buffers.get(ident)
        if buf is None:
            buf = self._buffers[ident] = ArgBuffer(self.codes, self.taken)
        return buf


def _saturate(codes: str, values) -> list:
    import math

    out = []
    for c, v in zip(codes, values):
        if c in "ef":
            try:
                struct.pack("=" + c, v)
            except (struct.error, OverflowError):
                v = math.copysign(math.inf, v)
        out.append(v)
    return out


class HipLauncher(Launcher):
    __slots__ = ()

    def __init__(self, kernel, layout, stream_of) -> None:
        super().__init__(kernel, layout, stream_of)
        self.direct = None  # hip-python takes the values, not a packed block

    def __call__(self, grid, values) -> None:
        self.kernel.launch_values(grid, values, None)


# --- launch ------------------------------------------------------------------------------------

def run(jit_fn, grid, g3: tuple | None, *args, **kwargs) -> None:
    """`kernel[grid](*args, **kwargs)`: on the GPU, or on the interpreter when
    TILECC_INTERPRET=1.  `g3`: the grid, normalized (kernel[grid] does it once per grid
    tuple), or None.  See the module docstring for what a warm launch costs."""
    if _env_get(_INTERPRET_KEY) == _ONE:
        return jit_fn.interpret[grid](*args, **kwargs)
    direct = jit_fn._direct
    if direct is not None and g3 is not None:
        try:
            if direct(g3, *args, **kwargs):
                return None
        except TypeError:  # arguments that do not bind, an unhashable constexpr: see below
            pass
    names = jit_fn._param_names
    if kwargs:
        values, options = _bind_fast(names, args, kwargs)
        if values is None:  # defaults, misspelt or repeated arguments: the careful path
            by_name, options = jit_fn.bind(args, dict(kwargs))
            values = [by_name[n] for n in names]
    elif len(args) == len(names):
        values, options = args, None
    else:
        by_name, options = jit_fn.bind(args, {})
        values = [by_name[n] for n in names]
    binder = jit_fn._binder
    fast = binder(values) if binder is not None else None
    if fast is not None:
        key, kernel_values = fast
        cache = jit_fn._bound
    else:
        fast = arg_key(jit_fn._param_constexpr, values)
        if fast is not None:
            key, kernel_values = fast
            key = tuple(key)
            cache = jit_fn._entries
    launcher = None
    if fast is not None:
        if options:
            key = (key, options.get("num_warps", 4), options.get("debug"),
                   options.get("num_stages"))
        try:
            launcher = cache.get(key)
        except TypeError:  # an unhashable constexpr: specialize the slow way every time
            fast = None
    if launcher is None:
        try:
            launcher, kernel_values, has_arrays = _slow_path(jit_fn, values, options or {})
        except CompilationError as e:  # without tilecc's frames behind it
            raise e.with_traceback(None) from None
        if fast is not None and has_arrays:  # without arrays the device is the current one
            cache[key] = launcher
    elif binder is None and not jit_fn._binder_tried:
        # A second launch: the binder (~0.3 ms to generate) pays off from here on.  A
        # process's first launch does not wait for it, and one that launches once never
        # pays it.
        _add_binder(jit_fn, values, options, launcher)
    if g3 is None:
        if callable(grid):
            opts = options or {}
            grid = grid({**dict(zip(names, values)), **opts,
                         "num_warps": opts.get("num_warps", 4)})
        g3 = normalize_grid(grid)
    if g3[0] and g3[1] and g3[2]:  # an empty grid launches nothing
        launcher(g3, kernel_values)


def _add_binder(jit_fn, values, options, launcher) -> None:
    """Generate the kernel's binder for these argument types; file the launcher under
    its key too, so that the next launch is already warm."""
    jit_fn._binder_tried = True
    binder = make_binder(jit_fn._param_constexpr, values, jit_fn._param_names, jit_fn._bound)
    if binder is None:
        return
    jit_fn._direct = binder.direct
    key = binder(values)[0]
    if options:
        key = (key, options.get("num_warps", 4), options.get("debug"), options.get("num_stages"))
    jit_fn._bound[key] = launcher
    jit_fn._binder = binder


_MISSING = object()


def _bind_fast(names: tuple[str, ...], args: tuple, kwargs: dict):
    """Positional arguments followed by keyword ones, in parameter order; (None, None)
    when anything is unusual."""
    n = len(args)
    if n > len(names):
        return None, None
    values = list(args)
    for name in names[n:]:
        v = kwargs.get(name, _MISSING)
        if v is _MISSING:
            return None, None
        values.append(v)
    used = len(names) - n
    if used == len(kwargs):
        return values, None
    options = {k: kwargs[k] for k in LAUNCH_OPTIONS if k in kwargs}
    if used + len(options) != len(kwargs):
        return None, None
    return values, options


def _slow_path(jit_fn, values, options: dict):
    """Specialize, check devices, compile and load: the first launch of a signature (and
    every launch whose arguments the warm path does not read)."""
    with _gpu_required():
        return _slow_path_on_device(jit_fn, values, options)


@contextlib.contextmanager
def _gpu_required():
    """CUDA's errors for a machine without a usable GPU become one NoDeviceError that
    says how to run without one."""
    try:
        yield
    except (RuntimeError, OSError, ImportError) as e:
        if not _no_usable_gpu(e):
            raise
        raise NoDeviceError(
            f"no usable CUDA driver or GPU was found ({type(e).__name__}: {e}): run the kernel "
            "on the NumPy interpreter instead, with kernel.interpret[grid](...) or "
            "TILECC_INTERPRET=1 (kernel.source and kernel.compile need no GPU)") from None


# CUDA errors that say there is no GPU to use: not initialized, a stub library, a driver
# older than the runtime, no device (the runtime's and the driver's codes agree)
_NO_DEVICE_STATUS = (3, 34, 35, 100)


def _no_usable_gpu(e: Exception) -> bool:
    if type(e).__name__ in ("CUDARuntimeError", "CUDADriverError"):
        return getattr(e, "status", None) in _NO_DEVICE_STATUS
    if isinstance(e, ImportError):  # no CuPy to ask which device is current
        return (e.name or "").startswith("cupy")
    return isinstance(e, OSError) and "libcuda" in str(e)  # no driver library at all


def _slow_path_on_device(jit_fn, values, options: dict):
    num_warps = options.get("num_warps", 4)
    debug, num_stages = options.get("debug"), options.get("num_stages")
    specs, passed, arrays, backend, device_id = _specialize(jit_fn, values)
    frameworks = {a.framework for a in arrays}
    # constexpr types too: 64 == 64.0 == True, but they specialize differently
    key = (tuple(specs), tuple(type(s.constexpr) for s in specs), num_warps, debug, num_stages,
           backend, device_id, frozenset(frameworks))
    launcher = jit_fn._launchers.get(key)
    if launcher is None:
        kernel_key = key[:7]
        kernel = jit_fn._launchers.get(kernel_key)
        if kernel is None:
            kernel = jit_fn._launchers[kernel_key] = _build(jit_fn, specs, num_warps, debug,
                                                            backend, device_id, num_stages)
        cls = Launcher if backend == "cuda" else HipLauncher
        launcher = cls(kernel, slot_layout(specs), stream_getter(frameworks))
        jit_fn._launchers[key] = launcher
    return (launcher, slot_values(specs, dict(zip(jit_fn._param_names, values)), passed),
            bool(arrays))


def _specialize(jit_fn, values):
    specs, passed = jit_fn.specs_for(dict(zip(jit_fn._param_names, values)))
    names = [s.name for s in specs if not s.is_constexpr and not s.equals_one]
    arrays = []
    for name, a in zip(names, passed):
        if not isinstance(a, ArrayInfo):
            continue
        if a.device not in ("cuda", "rocm"):
            raise TypeError(f"argument `{name}` is a host ({a.framework}) array; a GPU launch "
                            "needs device arrays (CuPy, torch CUDA tensors, ...) — or run on "
                            "the interpreter with kernel.interpret[grid](...) or "
                            "TILECC_INTERPRET=1")
        arrays.append(a)
    devices = {a.device_id for a in arrays}
    if len(devices) > 1:
        raise ValueError(f"array arguments are on different devices: {sorted(devices)}")
    backend = "hip" if any(a.device == "rocm" for a in arrays) else "cuda"
    device_id = devices.pop() if devices else _current_device(backend)
    return specs, passed, arrays, backend, device_id


def precompile(jit_fn, args: tuple, kwargs: dict):
    """Compile (through the disk cache) what kernel[grid](*args, **kwargs) would launch,
    without loading or launching it: (Binary, kernel name).  Thread-safe; the autotuner
    compiles its candidates with it in parallel."""
    from tilecc.runtime.jit import compile_cached

    by_name, options = jit_fn.bind(args, dict(kwargs))
    with _gpu_required():
        specs, _, _, backend, device_id = _specialize(jit_fn, [by_name[n] for n in
                                                               jit_fn._param_names])
        arch = _device_arch(device_id, backend)
    return compile_cached(jit_fn, specs, get_target(backend), arch,
                          options.get("num_warps", 4), options.get("debug"),
                          options.get("num_stages"))


_archs: dict[tuple[int, str], str] = {}


def _device_arch(device_id: int, backend: str) -> str:
    arch = _archs.get((device_id, backend))
    if arch is not None:
        return arch
    if backend == "cuda":
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():  # no CUDA runtime binding to load
            major, minor = torch.cuda.get_device_capability(device_id)
        else:
            runtime = _runtime()
            major = runtime.deviceGetAttribute(75, device_id)  # ComputeCapabilityMajor
            minor = runtime.deviceGetAttribute(76, device_id)  # ComputeCapabilityMinor
        arch = f"sm_{major}{minor}"
    else:
        from hip import hip

        props = hip.hipDeviceProp_t()
        _check(hip.hipGetDeviceProperties(props, device_id))
        arch = props.gcnArchName.decode().split(":")[0]
    _archs[(device_id, backend)] = arch
    return arch


def _current_device(backend: str) -> int:
    if backend == "cuda":
        return _runtime().getDevice()
    return 0


def _build(jit_fn, specs, num_warps, debug, backend, device_id, num_stages=None):
    from tilecc.runtime.jit import compile_cached

    target = get_target(backend)
    binary, name = compile_cached(jit_fn, specs, target, _device_arch(device_id, backend),
                                  num_warps, debug, num_stages)
    threads = num_warps * target.warp_size
    if backend == "cuda":
        return CudaKernel(binary, name, threads, device_id)
    return HipKernel(binary, name, threads, device_id, specs)
