"""Each kind of launch argument on the warm path, without a GPU: torch tensors, CuPy arrays,
`__cuda_array_interface__` objects, DLPack objects and NumPy scalars — the values each
launch passes, what the warm key specializes on (dtype, pointer % 16, device, == 1 and
% 16 of NumPy ints), host arrays still refused, and kernels launched with several sets of
argument types in turn (one generated warm launch per set).  Stand-ins of
test_launch_path; a DLPack stand-in exports real capsules."""

import ctypes
import struct
import sys

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from test_launch_path import (BASE, CAIArray, FakeCuPyArray, FakeTensor, counting,  # noqa: F401
                              F16, F32, gpu)
from tilecc.errors import HostArrayError
from tilecc.language import dtypes as D
from tilecc.runtime import cache
from tilecc.runtime import launch as L
from tilecc.transpiler import dlpack
from tilecc.transpiler.specialize import array_info

_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_NAMES = {"dltensor": b"dltensor", "dltensor_versioned": b"dltensor_versioned"}

DL_TYPES = {"<f4": (2, 32), "<f2": (2, 16), "<i4": (0, 32), "bf16": (4, 16), "?": (6, 8)}


class DLPackArray:
    """A device array that speaks DLPack only: each `__dlpack__` exports a new capsule
    over one DLManagedTensor (no deleter); the streams asked for are kept."""

    def __init__(self, ptr, dtype="<f4", device=0, device_type=2, byte_offset=0,
                 name="dltensor"):
        code, bits = DL_TYPES[dtype]
        self.device = (device_type, device)
        self.streams = []
        self.name = _NAMES[name]
        self._shape = (ctypes.c_int64 * 1)(64)
        self._tensor = ctypes.create_string_buffer(struct.pack(
            "=QiiiBBHQQQQQ", ptr, device_type, device, 1, code, bits, 1,
            ctypes.addressof(self._shape), 0, byte_offset, 0, 0))

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return _new_capsule(ctypes.addressof(self._tensor), self.name, None)

    def __dlpack_device__(self):
        return self.device


MAKERS = {"torch": lambda p, dev=0: FakeTensor(p, device=dev),
          "cupy": lambda p, dev=0: FakeCuPyArray(p, device=dev),
          "cai": lambda p, dev=0: CAIArray(p, device=dev),
          "dlpack": lambda p, dev=0: DLPackArray(p, device=dev)}
STREAMS = {"torch": 0x7000, "cupy": 0x9000, "cai": 0x5000, "dlpack": 0x5000}


def copy(src, dst, n, scale, BLOCK: tl.constexpr):
    pass


@pytest.fixture
def no_slow_path(monkeypatch):
    """Call `no_slow_path()` to make any further slow-path launch fail."""
    def forbid():
        def fail(*a, **kw):
            raise AssertionError("the slow path ran")
        monkeypatch.setattr(L, "_slow_path", fail)
    return forbid


# --- DLPack capsules ---------------------------------------------------------------------------

def test_dlpack_arguments_are_read_from_their_capsule(gpu):
    x = DLPackArray(BASE, "<f2", device=1, byte_offset=32)
    assert dlpack.read(x, 2, 1) == (BASE + 32, 2, 16, 1)
    assert x.streams == [0x9000 + 1]  # CuPy's current stream of the device: the launch's
    info = array_info(x)
    assert (info.ptr, info.dtype, info.device, info.device_id) == (BASE + 32, D.float16,
                                                                    "cuda", 1)
    assert array_info(DLPackArray(BASE, "bf16")).dtype == D.bfloat16
    assert array_info(DLPackArray(BASE, "?")).dtype == D.int1
    assert array_info(DLPackArray(BASE, device_type=1)).device == "cpu"
    assert dlpack.read(DLPackArray(BASE, name="dltensor_versioned"), 2, 0) is None


def test_dlpack_capsules_read_through_ctypes_alike(gpu, monkeypatch):
    """Where the view of memory cannot be used (another object layout), ctypes calls
    read the capsule: the same values, the same refusal of other capsule names."""
    def both():
        arrays = [DLPackArray(BASE + 16 * i, dt, byte_offset=8) for i, dt in enumerate(DL_TYPES)]
        return ([dlpack.read(a, 2, 0) for a in arrays],
                [dlpack.warm_key(a.__dlpack__(), (2, 0)) for a in arrays])

    fast = both()
    assert dlpack._fast  # (CPython's layout: the view is used)
    monkeypatch.setattr(dlpack, "_memory", False)
    monkeypatch.setattr(dlpack, "_fast", False)
    assert fast == both()
    assert fast[0][1] == (BASE + 24, 2, 16, 1)
    assert len({key for _, key in fast[1]}) == len(DL_TYPES)  # the dtype is in the key
    assert dlpack.read(DLPackArray(BASE, name="dltensor_versioned"), 2, 0) is None


@pytest.mark.parametrize("memory", ["view", "ctypes"])
def test_a_dlpack_export_that_is_no_capsule_is_not_read(gpu, monkeypatch, memory):
    class NotACapsule(DLPackArray):
        def __dlpack__(self, stream=None):
            return (1 << 40) + 7  # read as a capsule, its "name" would point anywhere

    dlpack.read(DLPackArray(BASE), 2, 0)  # (the view is set up)
    if memory == "ctypes":
        monkeypatch.setattr(dlpack, "_memory", False)
        monkeypatch.setattr(dlpack, "_fast", False)
    assert dlpack.read(NotACapsule(BASE), 2, 0) is None
    assert dlpack.warm_key((1 << 40) + 7, (2, 0)) == (0, None)


def test_dlpack_producers_are_told_the_launch_stream(gpu):
    """A DLPack object's producer is told the stream the launch goes to: torch's where a
    torch tensor is among the arguments (inside `torch.cuda.graph`: the capturing one),
    else CuPy's — on the first launch (the slow path) and on warm ones."""
    k = tilecc.jit(copy)
    alone, mixed = DLPackArray(BASE), DLPackArray(BASE)
    t = FakeTensor(BASE + 64)
    for _ in range(3):
        k[(1,)](alone, alone, 64, 0.5, BLOCK=64)
        k[(1,)](t, mixed, 64, 0.5, BLOCK=64)
    gpu.streams["torch"] = 0x7770  # `with torch.cuda.stream(s):`
    k[(1,)](t, mixed, 64, 0.5, BLOCK=64)
    # (0x5000: the stand-in `_default_stream`, CuPy's current stream, as 0x9000 is here)
    assert [e["stream"] for e in gpu.log] == [0x5000, 0x7000] * 3 + [0x7770]
    assert set(alone.streams) == {0x9000}
    slow = [s for s in mixed.streams if s not in (0x7000, 0x7770)]
    assert slow == [0x9000] and mixed.streams[-1] == 0x7770  # (the slow path's: CuPy's)


def test_a_warm_launch_asks_one_dlpack_producer_for_its_device(gpu, no_slow_path):
    """The warm launch asks the first DLPack argument's producer for its device (which
    names the stream) and each producer for one capsule; the others' devices come from
    their capsules (and key the launch: one on another GPU finds no launch filed)."""
    class Counting(DLPackArray):
        asked = 0

        def __dlpack_device__(self):
            Counting.asked += 1
            return super().__dlpack_device__()

    k = tilecc.jit(copy)
    a, b = Counting(BASE), Counting(BASE + 64)
    for _ in range(2):
        k[(1,)](a, b, 64, 0.5, BLOCK=64)
    no_slow_path()
    Counting.asked, a.streams[:], b.streams[:] = 0, [], []
    for _ in range(3):
        k[(1,)](a, b, 64, 0.5, BLOCK=64)
    assert Counting.asked == 3 and a.streams == b.streams == [0x9000] * 3
    assert [e["values"][:2] for e in gpu.log[-3:]] == [[BASE, BASE + 64]] * 3
    with pytest.raises(AssertionError, match="the slow path ran"):  # another GPU: declined
        k[(1,)](a, Counting(BASE + 64, device=1), 64, 0.5, BLOCK=64)


def test_dlpack_exchange_stream_without_cupy(gpu, monkeypatch):
    monkeypatch.delitem(sys.modules, "cupy")
    assert dlpack.exchange_stream(2, 0) == 1  # CUDA's legacy default stream, in DLPack
    assert dlpack.exchange_stream(10, 0) is None  # ROCm's default stream


# --- every kind on the warm path ---------------------------------------------------------------

@pytest.mark.parametrize("fw", ["torch", "cupy", "cai", "dlpack"])
def test_each_array_kind_launches_warm(gpu, fw, no_slow_path):
    k = tilecc.jit(copy)
    x, y = MAKERS[fw](BASE), MAKERS[fw](BASE + 256)
    k[(1,)](x, y, 64, 1.5, BLOCK=64)
    k[(1,)](x, y, 64, 1.5, BLOCK=64)  # the second: its warm launch is generated
    no_slow_path()
    direct = k._direct
    assert direct((1,), (1, 1, 1), L.declined, x, y, 80, 2.5, BLOCK=64) is not False
    k[(2,)](x, y, 96, 0.5, BLOCK=64)
    assert len(gpu.builds) == 1 and [e["stream"] for e in gpu.log] == [STREAMS[fw]] * 4
    assert [e["values"] for e in gpu.log] == [[BASE, BASE + 256, 64, 1.5]] * 2 + \
        [[BASE, BASE + 256, 80, 2.5], [BASE, BASE + 256, 96, 0.5]]


@pytest.mark.parametrize("n, scale, code", [(np.int64(48), np.float32(0.5), "qf"),
                                            (np.int32(-5), np.float64(0.25), "id"),
                                            (np.uint64(1 << 63), np.float16(1.5), "Qe"),
                                            (np.int8(7), np.bool_(True), "b?")])
def test_numpy_scalars_launch_warm_as_the_first_launch(gpu, no_slow_path, n, scale, code):
    k = tilecc.jit(copy)
    x = FakeTensor(BASE)
    k[(1,)](x, x, n, scale, BLOCK=64)
    k[(1,)](x, x, n, scale, BLOCK=64)
    no_slow_path()
    k[(1,)](x, x, n, scale, BLOCK=64)
    assert len(gpu.builds) == 1 and k._direct is not None
    assert "".join(L.slot_layout(gpu.builds[0])[0][2:]) == code
    first = gpu.log[0]["values"]
    assert first == [BASE, BASE, int(n), scale.item()]
    assert all(e["values"] == first for e in gpu.log)


def test_numpy_ints_specialize_on_one_and_16(gpu):
    k = tilecc.jit(copy)
    x = FakeTensor(BASE)
    for n in [np.int64(32), np.int64(48), np.int64(1), np.int64(17), np.int32(32), 32] * 2:
        k[(1,)](x, x, n, 0.5, BLOCK=64)
    specs = [(s[2].type.short, s[2].equals_one, s[2].divisible_by_16) for s in gpu.builds]
    assert specs == [("i64", False, True), ("i64", True, False), ("i64", False, False),
                     ("i32", False, True)]  # np.int32(32) and 32: one specialization
    assert [e["values"][2:-1] for e in gpu.log[:6]] == [[32], [48], [], [17], [32], [32]]


@pytest.mark.parametrize("fw", ["torch", "cupy", "cai", "dlpack"])
def test_dtype_alignment_and_device_change_the_specialization(gpu, fw):
    """Each change of an array's dtype, pointer % 16 or device compiles or loads anew,
    on the warm path too; repeating an earlier launch does not."""
    k = tilecc.jit(copy)
    make = {"torch": lambda p, dt, dev: FakeTensor(p, F16 if dt == "<f2" else F32, dev),
            "cupy": lambda p, dt, dev: FakeCuPyArray(p, dt, dev),
            "cai": lambda p, dt, dev: CAIArray(p, dt, dev),
            "dlpack": lambda p, dt, dev: DLPackArray(p, dt, dev)}[fw]
    arrays = [(BASE, "<f4", 0), (BASE + 8, "<f4", 0), (BASE, "<f2", 0), (BASE, "<f4", 1)]
    for ptr, dt, dev in arrays:
        x, y = make(ptr, dt, dev), make(BASE + 512, "<f4", dev)
        for _ in range(3):
            k[(1,)](x, y, 64, 1.5, BLOCK=64)
    builds = gpu.builds
    assert len(builds) == 4
    assert [s[0].divisible_by_16 for s in builds] == [True, False, True, True]
    assert [s[0].type.element_ty.short for s in builds] == ["fp32", "fp32", "fp16", "fp32"]
    assert [e["device"] for e in gpu.log[::3]] == [0, 0, 0, 1]
    assert [e["values"][0] for e in gpu.log] == [BASE] * 3 + [BASE + 8] * 3 + [BASE] * 6


def test_equal_warm_keys_mean_equal_specializations_for_every_kind(gpu):
    """As test_launch_path's test of torch, CuPy and CAI: for DLPack objects and NumPy
    scalars, on the generic key and on each generated binder's."""
    k = tilecc.jit(copy)
    flags = k._param_constexpr
    arrays = [DLPackArray(BASE), DLPackArray(BASE + 8), DLPackArray(BASE, "<f2"),
              DLPackArray(BASE, "<i4"), DLPackArray(BASE, device=1), FakeTensor(BASE)]
    scalars = [1, 16, np.int64(1), np.int64(16), np.int64(17), np.int32(16), np.uint8(1),
               np.uint64(1 << 63), np.float32(1), np.float64(1), np.float16(1), np.bool_(1),
               0.5, True]
    binders = [L.make_binder(flags, (a, a, s, 0.5, 64))
               for a in (arrays[0], arrays[5]) for s in (np.int64(3), np.float32(1), 5)]
    by_key, by_bound = {}, {}
    for a in arrays:
        for s in scalars:
            for scale in (0.5, np.float32(0.5), np.float16(0.5)):
                values = (a, a, s, scale, 64)
                specs, _ = k.specs_for(dict(zip(k._param_names, values)))
                spec = repr(cache.spec_key(specs))
                key, out = L.arg_key(flags, values)
                assert by_key.setdefault(tuple(key), spec) == spec, values
                for i, binder in enumerate(binders):
                    bound = binder(values)
                    if bound is not None:
                        assert by_bound.setdefault((i, bound[0]), spec) == spec, values
                        assert bound[1] == out
    assert len(by_key) > 100 and {i for i, _ in by_bound} == set(range(len(binders)))


# --- host arrays stay refused ------------------------------------------------------------------

class RefusingHostArray(DLPackArray):
    """A host array's producer as NumPy's is: it takes no stream."""

    def __dlpack__(self, stream=None):
        if stream is not None:
            raise BufferError("a host array takes no stream")
        return super().__dlpack__(stream)


@pytest.mark.parametrize("host", [
    lambda: DLPackArray(BASE, device_type=1), lambda: RefusingHostArray(BASE, device_type=1),
    lambda: np.zeros(4, np.float32), lambda: FakeTensor(BASE, device=-1)])
def test_host_arrays_are_refused_after_warm_launches(gpu, host):
    """A host array after warm launches of device arrays: the warm launch asks a DLPack
    argument after the first for its capsule without asking its device (the capsule says
    where it is); one whose producer refuses the launch's stream, or whose capsule is on
    the host, finds no launch filed, and the general path refuses it."""
    k = tilecc.jit(copy)
    x = DLPackArray(BASE)
    for _ in range(3):
        k[(1,)](x, x, 64, 0.5, BLOCK=64)
    h = host()
    for _ in range(2):
        with pytest.raises(HostArrayError, match="`dst` is a host"):
            k[(1,)](x, h, 64, 0.5, BLOCK=64)
    assert len(gpu.log) == 3


# --- several sets of argument types on one kernel ----------------------------------------------

def test_kinds_in_turn_each_keep_a_warm_launch(gpu, no_slow_path):
    """torch tensors and CuPy arrays (and others) in turn on one kernel: each set of types
    gets its generated lines, all in the kernel's one warm launch; none falls back to the
    general path."""
    k = tilecc.jit(copy)
    sets = [(FakeTensor(BASE), 0.5), (FakeCuPyArray(BASE), 0.5), (DLPackArray(BASE), 0.5),
            (FakeTensor(BASE), True), (FakeTensor(BASE), np.float32(0.5))]
    for _ in range(2):
        for x, s in sets:
            k[(1,)](x, x, 64, s, BLOCK=64)
    no_slow_path()
    taken, direct = [], k._direct
    k._direct = counting(direct, taken)
    k._grids.clear()  # kernel[grid] binds the counting launch from here
    for x, s in sets:
        k[(1,)](x, x, 64, s, BLOCK=64)
    assert len(k._binders) == len(sets) and taken == [True] * len(sets)
    # one function tests each set's types in turn (no call from one set's launch to the
    # next's): every set's launchers are looked up in it
    assert all(f"_tc_bound_{i}.get(_tc_key)" in direct.source for i in range(len(sets)))
    # a float and a bool key alike on their own binders: each finds its own launcher
    assert [e["values"][3] for e in gpu.log[-5:]] == [0.5, 0.5, 0.5, True, 0.5]
    assert [e["stream"] for e in gpu.log[-5:]] == [0x7000, 0x9000, 0x5000, 0x7000, 0x7000]
    assert len(gpu.builds) == 2  # fp32 (torch, CuPy, DLPack, np.float32 alike), i1


def test_more_sets_of_types_than_warm_launches_still_launch(gpu):
    k = tilecc.jit(copy)
    x = FakeTensor(BASE)
    kinds = [int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
             np.uint64, np.float32, np.float16]
    for _ in range(2):
        for t in kinds:
            k[(1,)](x, x, t(48), 0.5, BLOCK=64)
    assert len(k._binders) == L.MAX_DIRECT_LAUNCHES < len(kinds)
    assert [e["values"][2] for e in gpu.log] == [48] * 2 * len(kinds)


def test_parameters_named_like_the_generated_locals(gpu, no_slow_path):
    """The generated warm launch reads its arguments right whatever the parameters are
    called (its own names — p0, d1, k2... — are assigned after it has read them)."""
    def named(d0, p0, k1, i2, xs, BLOCK: tl.constexpr):
        pass

    k = tilecc.jit(named)
    a, b, c = DLPackArray(BASE), FakeTensor(BASE + 64), DLPackArray(BASE + 128)
    for _ in range(2):
        k[(1,)](a, b, c, np.int64(48), 0.5, BLOCK=64)
    no_slow_path()
    k[(1,)](a, b, c, np.int64(48), 0.5, BLOCK=64)
    assert len(k._binders) == 1
    assert [e["values"] for e in gpu.log] == [[BASE, BASE + 64, BASE + 128, 48, 0.5]] * 3


def test_a_declined_launch_passes_the_arguments_not_the_generated_locals(gpu):
    """Parameters named like the warm launch's own locals (a DLPack argument's `d0`, `p1`,
    `w1`, `o0`...): a launch it declines after those were assigned (a new alignment: a key
    not seen) gives the general path the arguments, not the locals."""
    def named(d0, p1, w1, o0, BLOCK: tl.constexpr):
        pass

    k = tilecc.jit(named)
    a, b = DLPackArray(BASE), DLPackArray(BASE + 64)
    for _ in range(2):
        k[(1,)](a, b, 48, 0.5, BLOCK=64)
    assert len(k._binders) == 1
    k[(1,)](DLPackArray(BASE + 8), b, 48, 0.5, BLOCK=64)  # declined: the slow path
    assert len(gpu.builds) == 2 and gpu.log[-1]["values"] == [BASE + 8, BASE + 64, 48, 0.5]


def test_no_launch_is_filed_under_a_capsule_that_cannot_be_read(gpu):
    """A DLPack export the warm path cannot read (another capsule name) keys as
    `dlpack.UNREAD`: the binder files nothing under it, so each such launch goes to the
    slow path, which reads the argument itself."""
    k = tilecc.jit(copy)
    flags = k._param_constexpr
    good, versioned = DLPackArray(BASE), DLPackArray(BASE, name="dltensor_versioned")
    binder = L.make_binder(flags, (good, good, 64, 0.5, 64))
    assert binder((good, good, 64, 0.5, 64)) is not None
    assert binder((versioned, good, 64, 0.5, 64)) is None
    # a later argument's device comes from its capsule: a host one keys apart from the
    # device arrays (and the general path, which asks each, files no launch for it)
    on_host = binder((good, DLPackArray(BASE, device_type=1), 64, 0.5, 64))
    assert on_host is not None and on_host[0] != binder((good, good, 64, 0.5, 64))[0]
    assert binder((DLPackArray(BASE, device_type=1), good, 64, 0.5, 64)) is None  # not asked
