"""DLPack arguments: the pointer, element type and device of an object that speaks the
DLPack protocol (`__dlpack__`, `__dlpack_device__`), read from the capsule it exports —
no framework imported, no array made.  Both the specialization (`specialize.array_info`)
and the warm launch (`runtime.launch.args`) read DLPack arguments here, so they agree.

The capsule asked for is the unversioned one ("dltensor": `__dlpack__` without
`max_version`, which every producer gives); its `DLManagedTensor` starts with the
`DLTensor`, laid out as:

    void *data; int32 device_type, device_id; int32 ndim;
    uint8 code, bits; uint16 lanes; int64 *shape, *strides; uint64 byte_offset

The capsule is not consumed (not renamed "used_dltensor"): dropping it runs the
producer's deleter, and the memory stays alive through the argument itself.

Reading a capsule through ctypes calls (PyCapsule_GetPointer, string_at) costs about a
microsecond each; a launch reads it instead with `struct.unpack_from` on a view of the
process's memory: the capsule object's pointer and name (right after the object header),
the name checked to be "dltensor", and the DLTensor.  The first read checks that this
agrees with PyCapsule_GetPointer on a capsule of its own, and uses the ctypes calls where
it does not (another object layout).
"""

from __future__ import annotations

import struct
import sys

from tilecc.language import dtypes as D

# DLDeviceType of the devices kernels launch on
DL_CUDA, DL_ROCM = 2, 10
DEVICES = {1: "cpu", DL_CUDA: "cuda", 3: "cpu", DL_ROCM: "rocm", 13: "cpu"}

# of the start of a DLTensor (data, device, ndim, dtype, shape, strides, byte_offset):
# data, the device as one word (type, id), the dtype as one word (code, bits, lanes),
# byte_offset
_DLTENSOR = struct.Struct("=QQ4xI16xQ")
_DTYPE = struct.Struct("=BBH")  # the word's parts
_CAPSULE = struct.Struct("=QQ")  # a PyCapsule after its header: pointer, name
_NAME = b"dltensor"
_NAME_C = struct.Struct(f"={len(_NAME) + 1}s")

# DLDataTypeCode (DLPack 1.1) and bits -> the element type
_INT, _UINT, _FLOAT, _BFLOAT, _BOOL = 0, 1, 2, 4, 6
ELEMENTS = {
    (_INT, 8): D.int8, (_INT, 16): D.int16, (_INT, 32): D.int32, (_INT, 64): D.int64,
    (_UINT, 8): D.uint8, (_UINT, 16): D.uint16, (_UINT, 32): D.uint32, (_UINT, 64): D.uint64,
    (_FLOAT, 16): D.float16, (_FLOAT, 32): D.float32, (_FLOAT, 64): D.float64,
    (_BFLOAT, 16): D.bfloat16, (_BOOL, 8): D.int1,
    (9, 8): D.BY_LONG_NAME["float8e4b15"], (10, 8): D.BY_LONG_NAME["float8e4nv"],
    (11, 8): D.BY_LONG_NAME["float8e4b8"], (12, 8): D.BY_LONG_NAME["float8e5"],
    (13, 8): D.BY_LONG_NAME["float8e5b16"],
}


def exchange_stream(device_type: int, device_id: int):
    """The stream a DLPack producer is told the data will be used on (`__dlpack__`'s
    `stream`): the one a launch of arrays of no known framework uses — CuPy's current
    stream where CuPy is loaded, else the default stream, which DLPack spells 1 (the
    legacy default stream) on CUDA and None on ROCm."""
    cupy = sys.modules.get("cupy")
    ptr = cupy.cuda.get_current_stream(device_id).ptr if cupy is not None else 0
    if ptr:
        return ptr
    return 1 if device_type == DL_CUDA else None


def torch_exchange_stream(device_type: int, device_id: int):
    """`exchange_stream` of a launch that has torch tensors among its arguments, which
    runs on torch's current stream (the capturing one inside `torch.cuda.graph`)."""
    ptr = sys.modules["torch"]._C._cuda_getCurrentRawStream(device_id)
    if ptr:
        return ptr
    return 1 if device_type == DL_CUDA else None


def read(x, device_type: int, device_id: int,
         stream_of=exchange_stream) -> tuple[int, int, int, int] | None:
    """(pointer, type code, bits, lanes) of DLPack object `x` on a device (its
    `__dlpack_device__()`), from the capsule it exports for the launch's stream
    (`stream_of(device_type, device_id)`); None where the capsule is not an unversioned
    DLPack tensor."""
    got = _read(x.__dlpack__(stream=stream_of(device_type, device_id)))
    return None if got is None else (got[0], *_DTYPE.unpack(_DTYPE_WORD.pack(got[2])))


_DTYPE_WORD = struct.Struct("=I")


def warm_key(capsule, device) -> tuple[int, tuple | None]:
    """The warm path's `read`: the pointer of an exported capsule and its part of the
    launch's warm key (device type and id, dtype word, pointer % 16), for an argument on
    `device` (its `__dlpack_device__()`); (0, None) for one on no GPU or a capsule that
    is not a DLPack tensor (the slow path then decides: host arrays are refused there).
    The generated warm launch reads capsules in place instead (`inline_reader`)."""
    dev_type, dev_id = device  # (ints, or IntEnums: equal, alike hashed)
    if dev_type != DL_CUDA and dev_type != DL_ROCM:
        return 0, None
    got = _read(capsule)
    if got is None:
        return 0, None
    ptr, _, word = got
    return ptr, ("dlpack", dev_type, dev_id, word, ptr & 15 == 0)


# a dtype word no capsule has: the warm key of an argument whose capsule could not be read
# (`read_capsule`), under which no launch is filed (the slow path decides at each call)
UNREAD = None


def inline_reader() -> tuple[bool, dict]:
    """What generated code reads capsules in place with (the warm launch,
    `launch.args`): whether the view of memory is in use (else every capsule goes through
    `read_capsule`), and the names its lines read — the capsule type, the view, where a
    capsule's pointer lies, the two layouts, the capsule names read before, and
    `read_capsule` for the rest."""
    if _memory is None:
        _set_up()
    return _fast, {"_tc_capsule": _capsule_type, "_tc_memory": _memory, "_tc_head": _head,
                   "_tc_capsule_fields": _CAPSULE.unpack_from,
                   "_tc_dltensor": _DLTENSOR.unpack_from, "_tc_names": _names,
                   "_tc_dlpack_read": read_capsule}


def read_capsule(capsule) -> tuple[int, int, int | None]:
    """(pointer, device word, dtype word) of an exported capsule (None: no capsule, as for
    a host array); (0, 0, UNREAD) where it is not an unversioned DLPack tensor."""
    got = _read(capsule) if capsule is not None else None
    return (0, 0, UNREAD) if got is None else got


def _read(capsule) -> tuple[int, int, int] | None:
    """(pointer, device word, dtype word) of an exported capsule; None for another capsule
    name.  The device word is the DLDevice's type and id as one 64-bit word."""
    if _memory is None:
        _set_up()
    if _memory is False:  # another object layout: through ctypes
        return _read_by_ctypes(capsule)
    if type(capsule) is not _capsule_type:  # read as one only if it is one
        return None
    address, name = _CAPSULE.unpack_from(_memory, id(capsule) + _head)
    if name not in _names:
        if _NAME_C.unpack_from(_memory, name)[0] != _NAME + b"\0":
            return None  # another capsule name (a versioned tensor): the caller decides
        if len(_names) < 64:  # (producers name capsules with one static string each)
            _names.add(name)
    data, device, word, offset = _DLTENSOR.unpack_from(_memory, address)
    return data + offset, device, word


_memory = None  # a view of the process's memory from address 0; False: read by ctypes
_fast = False  # the view is in use
_head = 0  # the size of an object's header: where a PyCapsule's pointer is
_names: set[int] = set()  # addresses of capsule names that hold "dltensor"
_capsule_type = None


def _set_up() -> None:
    """The view `read` uses, checked against PyCapsule_GetPointer on a capsule made here;
    False (ctypes calls) where they disagree or no such view can be made."""
    global _memory, _head, _capsule_type, _fast
    import ctypes

    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                   ctypes.c_void_p]
    probe = ctypes.create_string_buffer(_DLTENSOR.size)
    capsule = new(ctypes.addressof(probe), _NAME, None)
    _capsule_type = type(capsule)
    memory, head = False, 0
    try:
        view = memoryview((ctypes.c_char * sys.maxsize).from_address(0)).cast("B")
        address, name = _CAPSULE.unpack_from(view, id(capsule) + object.__basicsize__)
        if address == _get_pointer()(capsule, _NAME) and \
                _NAME_C.unpack_from(view, name)[0] == _NAME + b"\0":
            memory, head = view, object.__basicsize__
    except (ValueError, OverflowError, struct.error, MemoryError):
        pass
    _memory, _head, _fast = memory, head, memory is not False


def _get_pointer():
    import ctypes

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get


def _read_by_ctypes(capsule) -> tuple[int, int] | None:
    import ctypes

    try:
        address = _get_pointer()(capsule, _NAME)
    except ValueError:  # another capsule name
        return None
    data, device, word, offset = _DLTENSOR.unpack(ctypes.string_at(address, _DLTENSOR.size))
    return data + offset, device, word


def element_type(code: int, bits: int, lanes: int) -> D.dtype:
    """The element type of a DLPack dtype; TypeError for one kernels cannot take."""
    got = ELEMENTS.get((code, bits)) if lanes == 1 else None
    if got is None:
        raise TypeError(f"DLPack dtype (code {code}, {bits} bits, {lanes} lanes) is not "
                        "supported")
    return got
