"""CUDA launches: loading a cubin into the right context, the framework's current stream,
and the warm launch — `struct.pack_into` of the values into the launcher's argument
block, then cuLaunchKernel.

`Launcher.__call__` is the warm launch as a method (the general path calls it);
`Launcher.direct_tail` is the same two steps as source lines that `args.make_binder`
places at the end of a kernel's generated warm launch.  Both read the fields of
`Launcher.direct`.

Modules are loaded in the primary context of the arrays' device — the context that torch
and CuPy use.  Driver calls go through ctypes on libcuda (`runtime/cuda_driver.py`), the
launch itself through CuPy's compiled binding when CuPy is loaded anyway.
"""

from __future__ import annotations

import operator
import struct
import sys
from typing import Callable

from tilecc.errors import OutOfResources
from tilecc.runtime.launch.args import ArgBuffer, get_ident, saturate

# --- streams -----------------------------------------------------------------------------------


def _torch_stream() -> Callable[[int], int]:
    return sys.modules["torch"]._C._cuda_getCurrentRawStream


def _cupy_stream() -> Callable[[int], int]:
    get_current_stream = sys.modules["cupy"].cuda.get_current_stream  # looked up once

    def stream(device_id: int) -> int:
        return get_current_stream(device_id).ptr
    return stream


def _default_stream(device_id: int) -> int:
    cupy = sys.modules.get("cupy")  # arrays of another framework: CuPy's stream if in use
    return cupy.cuda.get_current_stream(device_id).ptr if cupy is not None else 0


def stream_getter(frameworks: set[str]) -> Callable[[int], int]:
    """The array framework's current stream on a device, as a raw handle: torch's when any
    argument is a torch tensor, else CuPy's."""
    if "torch" in frameworks:
        return _torch_stream()
    if "cupy" in frameworks:
        return _cupy_stream()
    return _default_stream


# --- the device --------------------------------------------------------------------------------

def _driver():
    from tilecc.runtime import cuda_driver

    return cuda_driver


def _runtime():
    from cupy_backends.cuda.api import runtime

    return runtime


def current_device() -> int:
    return _runtime().getDevice()


def device_arch(device_id: int) -> str:
    """sm_XY of a device: from torch where it has initialized CUDA (no CUDA runtime
    binding to load), else from the CUDA runtime."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        major, minor = torch.cuda.get_device_capability(device_id)
    else:
        runtime = _runtime()
        major = runtime.deviceGetAttribute(75, device_id)  # ComputeCapabilityMajor
        minor = runtime.deviceGetAttribute(76, device_id)  # ComputeCapabilityMinor
    return f"sm_{major}{minor}"


def _context_device(driver) -> int | None:
    """The device of the calling thread's current context (None: no context)."""
    try:
        return driver.ctxGetDevice()
    except Exception:  # CUDA_ERROR_INVALID_CONTEXT
        return None


# --- kernels -----------------------------------------------------------------------------------

_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1  # the kernel's static shared memory
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97


class CudaKernel:
    """A compiled kernel loaded into the primary context of one device (driver API)."""

    def __init__(self, binary, name: str, threads: int, device_id: int,
                 cooperative: bool = False):
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
        # cuLaunchKernel, 11 integer arguments (launch_cooperative_grid=True: the
        # cooperative launch, with the same arguments)
        self.launch_kernel = driver.launchCooperativeKernel if cooperative else driver.launcher()

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


def load(binary, name: str, threads: int, device_id: int, specs,
         cooperative: bool = False) -> CudaKernel:
    kernel = CudaKernel(binary, name, threads, device_id, cooperative)
    kernel.tensor_maps = map_slots(binary.tensor_maps, specs)
    return kernel


# --- tensor maps (TMA copies of host-side descriptors) -----------------------------------------

# CUtensorMapDataType of each element type (8-bit floats travel as bytes)
_MAP_TYPES = {"u8": 0, "i8": 0, "fp8e4nv": 0, "fp8e5": 0, "fp8e4b15": 0, "fp8e4b8": 0,
              "fp8e5b16": 0, "u16": 1, "i16": 1, "u32": 2, "i32": 3, "u64": 4, "i64": 5,
              "fp16": 6, "fp32": 7, "fp64": 8, "bf16": 9}
_SWIZZLES = {32: 1, 64: 2, 128: 3}  # CUtensorMapSwizzle


def map_slots(maps, specs) -> list[tuple[tuple, int, object]]:
    """Per tensor map the kernel takes, in order: where its descriptor's base, shape and
    strides are among the run-time values ((slot, None) each, or (None, the int) for a
    part compiled in), then the arguments it requires a least value of
    (`TensorMap.requires`), its rank, and the specs.TensorMap."""
    runtime = [s for s in specs if not s.is_constexpr]
    slot_of = {s.name: i for i, s in enumerate(runtime)}
    out = []
    for m in maps:
        ndim = len(m.box)
        if m.args is None:  # a host-side descriptor: its values, one after the other
            first = next(i for i, s in enumerate(runtime)
                         if s.descriptor is not None and s.descriptor.param == m.param)
            picks = tuple((i, None) for i in range(first, first + 1 + 2 * ndim))
        else:  # made in the kernel from these arguments and constants
            picks = tuple((slot_of[a], None) if isinstance(a, str) else (None, a)
                          for a in m.args) + tuple((slot_of[a], None) for a, _ in m.requires)
        out.append((picks, ndim, m))
    return out


def tensor_map_arguments(m, address: int, shape, strides) -> dict | None:
    """What cuTensorMapEncodeTiled is given for map `m` of a descriptor at `address` with
    this shape and these strides (elements): dims, byte strides and box innermost first.
    None for a tensor without elements (`padding_map_arguments` then).  A ValueError where
    the descriptor breaks Triton's rule (`breaks_tma_rule`)."""
    if any(n <= 0 for n in shape):  # (its strides mean nothing)
        return None
    if breaks_tma_rule(m, address, strides):
        raise ValueError(
            f"{m.what}: a tensor descriptor's base must be 16-byte aligned and its strides "
            f"but the last positive multiples of 16 bytes (Triton's rule; sm_90's TMA copies "
            f"need them), got address {address:#x} and strides {list(strides)} of {m.dtype}")
    if shape[-2] < m.slab:  # not one whole slab: no block is copied through this map
        return None
    size = _element_bytes(m)
    dims, steps, box = m.encoded_dims(shape, strides)
    return dict(data_type=_MAP_TYPES[m.dtype], dims=dims, strides=[s * size for s in steps],
                box=box, swizzle=_SWIZZLES[m.swizzle], fill_nan=m.padding == "nan")


def breaks_tma_rule(m, address: int, strides) -> bool:
    """Whether a descriptor breaks what Triton requires of any (and the copy engine of a
    tensor map): a 16-byte aligned base, strides but the last positive multiples of 16
    bytes.  A host-side descriptor was checked when it was made; one made in the kernel
    was compiled assuming strides the specialization could not prove."""
    size = _element_bytes(m)
    return bool(address % 16) or any(st <= 0 or st * size % 16 for st in strides[:-1])


def ragged_boxes(m, shape) -> bool:
    """Whether a map of blocks of pointers that copies A's rows in one box, in the order
    the product reads them (`rows_split`), has rows past its last whole box: the programs
    there copy 8-row boxes instead, one per 8 rows, so slowly that a few of them held back
    the whole grid (4097 x 4096 x 4096 on an H200: 0.82x the speed of 4224 rows, where the
    cp.async build holds its speed: 1.03–1.40x the TMA build's at 4097 rows).  Not for
    descriptors made in the kernel, whose other build reads them by bounds-checked loads:
    0.89–1.26x the TMA build's at 4097 and 1000 rows, no better on the whole."""
    return m.pointers and bool(m.rows_split) and shape[-2] % m.box[-2] != 0


def tail_copies(m, shape) -> int:
    """The 8-row copies the last block of a split map's rows makes (those holding rows of
    the tensor, passes.pipeline.TmaCopy.skip_past): 0 where the rows are whole blocks.
    Where every program of a grid runs at once, the kernel waits for that block's: a
    descriptor made in the kernel then takes its other build (bounds-checked loads) when
    they are several (on an H200, 1000 x 1000 x 1000 at 128 x 128 x 64 on 4 warps: 17.7
    µs by TMA, 12.1 by the other build, Triton 12.8; 4000 rows, eight waves: 222 µs by TMA,
    260 by the other)."""
    if not m.rows_split:
        return 0
    tail = shape[-2] % m.box[-2]
    return -(-tail // 8)


_MULTIPROCESSOR_COUNT = 16  # CUdevice_attribute


def _element_bytes(m) -> int:
    from tilecc.language.dtypes import BY_NAME

    return max(BY_NAME[m.dtype].bits // 8, 1)


# the 32-bit words of the padding: zeros, or NaNs of each float type
_PADDING_WORDS = {"fp16": 0x7E007E00, "bf16": 0x7FC07FC0, "fp32": 0x7FC00000}


def padding_map_arguments(m) -> tuple[int, dict]:
    """For a descriptor over a tensor without elements (a dimension of size 0, which the
    copy engine cannot map): a map of one element holding the padding, at the origin.
    Every copy then reads the padding alone, as it reads past any tensor's end.  Returns
    the 32-bit word that element's memory holds, and the map's arguments."""
    box = m.encoded_dims([1] * len(m.box), [1] * len(m.box))[2]  # (of a split map too)
    word = _PADDING_WORDS[m.dtype] if m.padding == "nan" else 0
    return word, dict(data_type=_MAP_TYPES[m.dtype], dims=[1] * len(box),
                      strides=[16] * (len(box) - 1), box=box,
                      swizzle=_SWIZZLES[m.swizzle], fill_nan=m.padding == "nan")


_padding_memory: dict[tuple, int] = {}  # (device, word) → 16 bytes of that word


# --- the warm launch ---------------------------------------------------------------------------

class Launcher:
    """One kernel, ready to launch with one specialization's argument layout: the cached
    object of the warm path.  `launcher(grid, values)` packs the values into the argument
    block and calls cuLaunchKernel on the framework's current stream.

    `kernel` needs `handle`, `threads`, `device_id`, `launch_kernel` (cuLaunchKernel's
    signature) and `relaunch`: tests pass a recording stand-in."""

    backend = "cuda"
    __slots__ = ("kernel", "codes", "taken", "stream_of", "device_id", "_owner", "_buffer",
                 "_buffers", "_handle", "_threads", "_launch_kernel", "_shared_bytes", "direct",
                 "compiled")

    def __init__(self, kernel, layout: tuple[str, tuple[bool, ...]],
                 stream_of: Callable[[int], int]):
        self.kernel = kernel
        self.codes, self.taken = layout
        self.stream_of = stream_of
        self.device_id = kernel.device_id
        self.compiled = getattr(kernel, "compiled", None)  # what a launch returns
        # One argument block per thread: between packing and cuLaunchKernel (which copies
        # the values) another thread must not write the block.
        self._owner = get_ident()
        self._buffer = ArgBuffer(self.codes, self.taken)
        self._buffers: dict[int, ArgBuffer] = {}
        self._handle = getattr(kernel, "handle", None)
        self._threads = kernel.threads
        self._launch_kernel = getattr(kernel, "launch_kernel", None)
        self._shared_bytes = getattr(kernel, "shared_bytes", 0)
        # what the generated warm launch (`direct_tail`) reads, in one tuple
        buf = self._buffer
        self.direct = (buf.struct.pack_into, buf.storage, self._launch_kernel, self._handle,
                       self._threads, self._shared_bytes, stream_of, self.device_id,
                       buf.params_ptr, kernel)

    def __call__(self, grid: tuple[int, int, int], values) -> None:
        buf = self._buffer if get_ident() == self._owner else self._thread_buffer()
        try:
            buf.struct.pack_into(buf.storage, 0, *values)
        except (struct.error, OverflowError):  # a float beyond fp16/fp32: inf, as a C cast
            buf.struct.pack_into(buf.storage, 0, *saturate(self.codes, values))
        stream = self.stream_of(self.device_id)
        try:
            self._launch_kernel(self._handle, grid[0], grid[1], grid[2], self._threads, 1, 1,
                                self._shared_bytes, stream, buf.params_ptr, 0)
        except Exception as e:
            self.kernel.relaunch(e, grid, stream, buf.params_ptr)

    def _thread_buffer(self) -> ArgBuffer:
        ident = get_ident()
        buf = self._buffers.get(ident)
        if buf is None:
            buf = self._buffers[ident] = ArgBuffer(self.codes, self.taken)
        return buf

    @staticmethod
    def direct_tail(out: list[str], hand_off: str) -> tuple[list[str], list[str], dict]:
        """`__call__` as source lines of a generated warm launch (`args._direct_source`),
        with `_tc_l` the launcher and `out` the expressions of the values: the lines that
        pack them, the lines that launch on `_tc_g3`, and the names they read.  In a
        thread other than the launcher's (whose block this is; a launcher of another
        backend has no thread), and for a float that must saturate, they run `hand_off`:
        the launcher's own call."""
        prepare = [
            "if _tc_l._owner != _tc_ident():",
            f"    {hand_off}",
            "_tc_pack, _tc_storage, _tc_launch, _tc_handle, _tc_threads, _tc_shared, "
            "_tc_stream, _tc_dev, _tc_params, _tc_kernel = _tc_l.direct",
            "try:",
            f"    _tc_pack(_tc_storage, 0{''.join(', ' + o for o in out)})",
            "except _tc_error:  # a float beyond fp16 / fp32: the launcher saturates it",
            f"    {hand_off}",
        ]
        launch = [
            "_tc_s = _tc_stream(_tc_dev)",
            "try:",
            "    _tc_launch(_tc_handle, _tc_g3[0], _tc_g3[1], _tc_g3[2], _tc_threads, 1, 1,",
            "               _tc_shared, _tc_s, _tc_params, 0)",
            "except Exception as _tc_e:",
            "    _tc_kernel.relaunch(_tc_e, _tc_g3, _tc_s, _tc_params)",
        ]
        return prepare, launch, {"_tc_ident": get_ident,
                                 "_tc_error": (struct.error, OverflowError)}


class TensorMapLauncher(Launcher):
    """A launcher for a kernel that takes tensor maps after its parameters: each launch
    encodes them (cuTensorMapEncodeTiled) from its descriptors' base, shape and strides —
    again only when those changed — and passes each as 16 u64 slots, the first taken (the
    driver copies the parameter's 128 bytes from there).  Launched through `__call__`
    alone: the generated warm path hands off to it (`_owner` is no thread).

    A descriptor the kernel made from its arguments was compiled assuming what Triton
    requires of its strides; a launch whose values break that goes to `fallback()`, the
    launcher of a build that reads such descriptors with bounds-checked loads (the JIT
    sets it; without one, the launch raises the ValueError).  So does a launch whose
    arguments break what a map of loaded pointer blocks requires of them
    (`TensorMap.requires`, passes.pointer_tiles), and one whose rows end inside a box of
    a map of pointer blocks that copies A's rows in one (`ragged_boxes`: only a speed
    matter, so only where a fallback build exists).  A launch declined is remembered by
    its map's values: the next one with the same values goes to the fallback at once."""

    __slots__ = ("maps", "encoded", "fallback", "_fallback", "_keys", "_tails", "_sms")

    def __init__(self, kernel, layout: tuple[str, tuple[bool, ...]],
                 stream_of: Callable[[int], int]):
        codes, taken = layout
        self.maps = kernel.tensor_maps
        n = len(self.maps)
        super().__init__(kernel, (codes + "Q" * 16 * n, taken + ((True,) + (False,) * 15) * n),
                         stream_of)
        self._owner = None
        self.encoded: list = [None] * n  # per map: (its key, the map's 16 words or None)
        self.fallback: Callable[[], Launcher] | None = None
        self._fallback: Launcher | None = None
        # per map, what of the values its encoding depends on, read in one C call: the
        # parts compiled in are the same at every launch of this build
        self._keys = [_getter(tuple(j for j, _ in picks if j is not None))
                      for picks, _, _ in self.maps]
        # per map: whether its values leave a tail block of several 8-row copies
        # (`tail_copies`), which a grid of one wave waits for (the SMs: `_sms`)
        self._tails = [False] * n
        self._sms = 0

    def _one_wave(self, grid: tuple[int, int, int]) -> bool:
        """Whether every program of `grid` runs at once (one per SM at least)."""
        if not self._sms:
            self._sms = _driver().deviceGetAttribute(_MULTIPROCESSOR_COUNT, self.device_id)
        return grid[0] * grid[1] * grid[2] <= self._sms

    def __call__(self, grid: tuple[int, int, int], values) -> None:
        words: tuple = ()
        for i, key in enumerate(self._keys):
            got = self.encoded[i]
            if got is None or got[0] != key(values):
                return self._encode(grid, values)
            if got[1] is None:  # (declined before, with these values)
                return self._fallback_launcher()(grid, values)
            words += got[1]
        self._launch(grid, values, words)

    def _launch(self, grid: tuple[int, int, int], values, words: tuple) -> None:
        if any(self._tails) and self._one_wave(grid):  # (the build without the tail's copies)
            return self._fallback_launcher()(grid, values)
        super().__call__(grid, (*values, *words))

    def _fallback_launcher(self) -> Launcher:
        if self._fallback is None:
            self._fallback = self.fallback()
        return self._fallback

    def _encode(self, grid: tuple[int, int, int], values) -> None:
        """A launch whose descriptors' values changed: encode the maps again (or decline
        to the fallback), then launch."""
        driver = _driver()
        for i, (picks, ndim, m) in enumerate(self.maps):
            key = self._keys[i](values)
            got = self.encoded[i]
            if got is not None and got[0] == key:
                if got[1] is None:  # (declined before)
                    return self._fallback_launcher()(grid, values)
                continue
            full = tuple(values[j] if j is not None else c for j, c in picks)
            address, shape, strides = full[0], full[1:1 + ndim], full[1 + ndim:1 + 2 * ndim]
            short = [f"{name} >= {least}" for v, (name, least) in
                     zip(full[1 + 2 * ndim:], m.requires) if v < least]
            if m.args is not None and (short or (all(n > 0 for n in shape) and (
                    breaks_tma_rule(m, address, strides) or
                    (self.fallback is not None and ragged_boxes(m, shape))))):
                if self.fallback is not None:
                    self.encoded[i] = (key, None)  # (the next launch alike declines)
                    return self._fallback_launcher()(grid, values)
                if short:  # (strides: tensor_map_arguments raises Triton's error)
                    raise ValueError(f"{m.what}: its TMA copies were compiled for "
                                     f"{', '.join(short)}")
            args = tensor_map_arguments(m, address, shape, strides)
            if args is None:  # an empty tensor: a map that reads the padding alone
                word, args = padding_map_arguments(m)
                # (one that stores writes nothing of the tensor: its element is a
                # word of its own, not the padding other maps read)
                where = (self.device_id, "written" if m.store else word)
                if where not in _padding_memory:
                    _padding_memory[where] = driver.memAllocFilled(256, word)
                address = _padding_memory[where]
            self.encoded[i] = (key, tuple(driver.tensorMapEncodeTiled(address=address,
                                                                      **args)))
            self._tails[i] = m.args is not None and self.fallback is not None and \
                tail_copies(m, shape) > 1
        self._launch(grid, values, tuple(w for _, words in self.encoded for w in words))

    @staticmethod
    def direct_tail(out: list[str], hand_off: str) -> tuple[list[str], list[str], dict]:
        """The generated warm launch calls the launcher (`__call__`): its maps are checked
        there, and it runs in any thread (the values are packed by `Launcher.__call__`)."""
        return [], [f"_tc_l(_tc_g3, ({', '.join(out)}{',' if len(out) == 1 else ''}))"], {}


def _getter(slots: tuple[int, ...]) -> Callable:
    """values -> the values at `slots` (a tuple of them; () for none)."""
    if not slots:
        return lambda values: ()
    if len(slots) == 1:
        return operator.itemgetter(slots[0])
    return operator.itemgetter(*slots)


def launcher(kernel, layout, frameworks: set[str]) -> Launcher:
    if getattr(kernel, "tensor_maps", None):
        return TensorMapLauncher(kernel, layout, stream_getter(frameworks))
    return Launcher(kernel, layout, stream_getter(frameworks))
