"""The GPU launch path without a GPU: the warm key, argument packing, launcher caching,
grids, devices and streams — with stand-in arrays (torch-like, CuPy-like, and plain
`__cuda_array_interface__` objects) and a recording stand-in for cuLaunchKernel."""

import ctypes
import itertools
import struct
import sys
import threading
import types

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.errors import LaunchError
from tilecc.language import dtypes as D
from tilecc.runtime import cache
from tilecc.runtime import launch as L


# --- stand-ins -------------------------------------------------------------------------------

class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


F32, F16, I32 = FakeDtype("float32"), FakeDtype("float16"), FakeDtype("int32")


class FakeTensor:
    """What the launcher reads of a torch tensor (the test installs a stand-in `torch`)."""

    def __init__(self, ptr, dtype=F32, device=0):
        self.ptr, self.dtype, self.index = ptr, dtype, device
        self.device = types.SimpleNamespace(type="cuda" if device >= 0 else "cpu",
                                            index=device if device >= 0 else None)

    def data_ptr(self):
        return self.ptr

    def get_device(self):
        return self.index


FakeTensor.__module__ = "torch"  # as a torch tensor's type says


class FakeCuPyArray:
    """What the launcher reads of a CuPy array (a stand-in `cupy` is installed too)."""

    def __init__(self, ptr, typestr="<f4", device=0):
        self._mem = types.SimpleNamespace(ptr=ptr, device_id=device)
        self.dtype = np.dtype(typestr)
        self.device = types.SimpleNamespace(id=device)

    @property
    def data(self):  # a MemoryPointer: .ptr, .device_id
        return self._mem

    @property
    def __cuda_array_interface__(self):
        return {"data": (self._mem.ptr, False), "typestr": self.dtype.str, "shape": (64,),
                "version": 3}


FakeCuPyArray.__module__ = "cupy._core.core"


class CAIArray:
    """Any other device array: only the CUDA array interface (and a device id)."""

    def __init__(self, ptr, typestr="<f4", device=0):
        self.ptr, self.typestr = ptr, typestr
        self.device = types.SimpleNamespace(id=device)

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "typestr": self.typestr, "shape": (64,),
                "version": 3}


class RecordingKernel:
    """A loaded kernel whose cuLaunchKernel records what the GPU would receive."""

    def __init__(self, specs, num_warps, device_id, log):
        self.codes, self.taken = L.slot_layout(specs)
        self.specs = specs
        self.num_warps = num_warps
        self.handle = 0x1234
        self.threads = num_warps * 32
        self.device_id = device_id
        self.log = log
        self.shared_bytes = 0

    def launch_kernel(self, f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        assert f == self.handle and (bx, by, bz) == (self.threads, 1, 1)
        assert shmem == self.shared_bytes
        assert extra == 0
        taken = [c for c, t in zip(self.codes, self.taken) if t]
        values = []
        for i, code in enumerate(taken):  # follow each kernelParams pointer
            addr = ctypes.c_void_p.from_address(params + i * ctypes.sizeof(ctypes.c_void_p))
            size = struct.calcsize("=" + code)
            values.append(struct.unpack("=" + code, ctypes.string_at(addr.value, size))[0])
        self.log.append({"grid": (gx, gy, gz), "stream": stream, "values": values,
                         "device": self.device_id, "specs": self.specs, "threads": bx})

    def relaunch(self, error, *args):
        raise error

    def launch_values(self, grid, values, stream):  # hip-python's launch: the values as given
        taken = [v for v, t in zip(values, self.taken) if t]
        self.log.append({"grid": grid, "stream": stream, "values": taken,
                         "device": self.device_id, "specs": self.specs, "threads": self.threads})


_REAL_BUILD = L._build  # the `gpu` fixture replaces it


@pytest.fixture
def gpu(monkeypatch):
    """Stand-ins for torch, CuPy and the driver; yields the launch log and build list."""
    torch = types.ModuleType("torch")
    torch.Tensor = FakeTensor
    torch.version = types.SimpleNamespace(hip=None)
    streams = {"torch": 0x7000}  # the current stream (device 0), as torch.cuda.stream sets it
    torch._C = types.SimpleNamespace(
        _cuda_getCurrentRawStream=lambda dev: streams["torch"] + dev)
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(
        get_current_stream=lambda dev: types.SimpleNamespace(ptr=0x9000 + dev))
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    for t in (FakeTensor, FakeCuPyArray, CAIArray):
        L._KINDS.pop(t, None)
    log, builds = [], []

    def build(jit_fn, specs, num_warps, debug, backend, device_id, num_stages=None):
        builds.append(specs)
        return RecordingKernel(specs, num_warps, device_id, log)

    monkeypatch.setattr(L, "_build", build)
    monkeypatch.setattr(L, "_current_device", lambda backend: 0)
    monkeypatch.setattr(L.cuda, "_default_stream", lambda dev: 0x5000 + dev)
    monkeypatch.delenv("TILECC_INTERPRET", raising=False)
    yield types.SimpleNamespace(log=log, builds=builds, streams=streams)
    for t in (FakeTensor, FakeCuPyArray, CAIArray):
        L._KINDS.pop(t, None)


def ten(a, b, c, d, e, f, n, m, k, alpha, BLOCK: tl.constexpr):
    pass


def copy(src, dst, n, flag, BLOCK: tl.constexpr):
    pass


BASE = 0x7F0000000000
MAKERS = {"torch": lambda p, dev=0: FakeTensor(p, device=dev),
          "cupy": lambda p, dev=0: FakeCuPyArray(p, device=dev),
          "cai": lambda p, dev=0: CAIArray(p, device=dev)}
STREAMS = {"torch": 0x7000, "cupy": 0x9000, "cai": 0x5000}


# --- the argument block --------------------------------------------------------------------

def test_arg_buffer_aligns_like_c_and_points_at_taken_values():
    buf = L.ArgBuffer("?qifHd", taken=(True, False, True, True, True, True))
    assert buf.offsets == (0, 8, 16, 20, 24, 32) and buf.size == 40
    base = ctypes.addressof(buf.storage)
    ptr = buf.pack([True, 1, -7, 0.5, 65535, 2.25])
    assert ptr == buf.params_ptr
    assert buf.kernel_params() == [base + o for o in (0, 16, 20, 24, 32)]
    assert buf.unpack() == (True, 1, -7, 0.5, 65535, 2.25)
    assert struct.unpack("=i", ctypes.string_at(base + 16, 4))[0] == -7
    assert L.ArgBuffer("").kernel_params() == [None]  # no parameters: kernelParams unused


def test_slot_layout_and_values_from_specs():
    k = tilecc.jit(copy)
    x = np.zeros(64, np.float32)
    specs, passed = k.specs_for({"src": x, "dst": x, "n": 1, "flag": np.float16(1.5),
                                 "BLOCK": 64})
    codes, taken = L.slot_layout(specs)
    assert codes == "QQie" and taken == (True, True, False, True)
    values = L.slot_values(specs, passed)
    assert values == [x.ctypes.data, x.ctypes.data, 1, 1.5]


# --- launches ------------------------------------------------------------------------------

@pytest.mark.parametrize("fw", ["torch", "cupy", "cai"])
def test_warm_launch_passes_what_the_first_launch_passes(gpu, fw):
    k = tilecc.jit(ten)
    arrays = [MAKERS[fw](BASE + i * 4096) for i in range(6)]
    for _ in range(3):
        k[(5,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024)
    assert len(gpu.builds) == 1  # compiled and loaded once
    first, *warm = gpu.log
    assert all(w == first for w in warm) and len(warm) == 2
    assert first["grid"] == (5, 1, 1) and first["stream"] == STREAMS[fw]
    # k == 1 is compiled in: the kernel is not given it
    assert first["values"] == [BASE + i * 4096 for i in range(6)] + [1000, 3, 0.5]
    [binder] = k._binders
    assert len(binder.bound) == 1 and len(k._entries) == 1
    assert {"torch": "data_ptr()", "cupy": ".ptr", "cai": "__cuda_array_interface__"}[fw] in \
        binder.source


@pytest.mark.parametrize("fw", ["torch", "cupy", "cai"])
def test_every_specialized_fact_is_in_the_warm_key(gpu, fw):
    """Each change of what the specialization depends on compiles anew; repeating an
    earlier launch does not.  The kernel receives the right values every time."""
    k = tilecc.jit(copy)
    mk = MAKERS[fw]
    x, y = mk(BASE), mk(BASE + 256)
    calls = [
        ((x, y, 64, 1.5), {"BLOCK": 64}),
        ((mk(BASE + 4), y, 64, 1.5), {"BLOCK": 64}),  # not 16-byte aligned
        ((x, y, 65, 1.5), {"BLOCK": 64}),  # not a multiple of 16
        ((x, y, 1, 1.5), {"BLOCK": 64}),  # == 1
        ((x, y, 1 << 31, 1.5), {"BLOCK": 64}),  # i64
        ((x, y, 1 << 63, 1.5), {"BLOCK": 64}),  # u64
        ((x, y, 64, 2), {"BLOCK": 64}),  # int instead of float
        ((x, y, 64, True), {"BLOCK": 64}),  # bool
        ((x, y, 64, 1.5), {"BLOCK": 128}),  # constexpr value
        ((x, y, 64, 1.5), {"BLOCK": 64.0}),  # constexpr type (64 == 64.0)
        ((x, y, 64, 1.5), {"BLOCK": 64, "num_warps": 8}),
    ]
    for args, kwargs in calls + calls:
        k[(1,)](*args, **kwargs)
    assert len(gpu.builds) == len(calls)
    got = [entry["values"] for entry in gpu.log[:len(calls)]]
    assert got == [entry["values"] for entry in gpu.log[len(calls):]]
    assert got[1][0] == BASE + 4 and got[3] == [BASE, BASE + 256, 1.5]  # n == 1 not given
    assert got[5][2] == 1 << 63 and got[7][3] is True
    assert [e["threads"] for e in gpu.log[:len(calls)]] == [128] * 10 + [256]
    assert gpu.builds[8][-1].constexpr == 128 and gpu.builds[9][-1].constexpr == 64.0


def test_warm_keys_decide_the_specialization(gpu):
    """Equal warm keys (generic loop or generated binder) mean equal specializations."""
    k = tilecc.jit(copy)
    flags = k._param_constexpr
    arrays = [FakeTensor(BASE), FakeTensor(BASE + 8), FakeTensor(BASE, F16),
              FakeCuPyArray(BASE), FakeCuPyArray(BASE + 4, "<f2"), CAIArray(BASE + 32),
              CAIArray(BASE + 4), CAIArray(BASE, "<f2"), CAIArray(BASE, device=1)]
    scalars = [0, 1, 2, 16, -16, 17, (1 << 31) - 1, 1 << 31, 1 << 40, 1 << 63, 0.0, 1.0,
               True, False]
    constexprs = [1, 1.0, True, 2, "a", None]
    combos = list(itertools.product(arrays[:3] + arrays[3:], scalars, constexprs))
    by_key, by_bound = {}, {}
    binders = [L.make_binder(flags, (arrays[i], arrays[i], 5, 0.5, 64)) for i in (0, 3, 5)]
    for a, s, ce in combos:
        values = (a, a, s, 0.5, ce)
        specs, _ = k.specs_for(dict(zip(k._param_names, values)))
        spec = repr(cache.spec_key(specs))
        key = tuple(L.arg_key(flags, values)[0])
        assert by_key.setdefault(key, spec) == spec, values
        for i, binder in enumerate(binders):  # one key space per binder (its types)
            bound = binder(values)
            if bound is not None:
                assert by_bound.setdefault((i, bound[0]), spec) == spec, values
                assert bound[1] == L.arg_key(flags, values)[1]
    assert len(by_bound) > 30 and {i for i, _ in by_bound} == {0, 1, 2}


def test_binder_declines_other_types(gpu):
    flags = (False, False, True)
    assert L.make_binder(flags, (np.longdouble(1), 2, 3)) is None  # converted on the slow path
    assert L.make_binder(flags, (1, 2, tl.float32)) is None  # a non-plain constexpr
    binder = L.make_binder(flags, (FakeTensor(BASE), 2, 3))
    assert binder((FakeCuPyArray(BASE), 2, 3)) is None  # another type: the generic loop
    assert binder((FakeTensor(BASE), 2.0, 3)) is None
    assert binder((FakeTensor(BASE), 2, 3)) is not None
    binder = L.make_binder(flags, (CAIArray(BASE), 2, 3))
    assert binder((FakeTensor(BASE), 2, 3)) is None and binder((CAIArray(BASE), 2, 3))


def test_numpy_scalars_and_defaults_take_the_slow_path_correctly(gpu):
    def kern(x, n, scale, BLOCK: tl.constexpr = 32):
        pass

    k = tilecc.jit(kern)
    x = FakeTensor(BASE)
    for _ in range(2):
        k[(2,)](x, np.int64(40), np.float64(0.25))  # BLOCK from its default
    assert len(gpu.builds) == 1
    assert gpu.log[0]["values"] == gpu.log[1]["values"] == [BASE, 40, 0.25]
    assert [s.type.short for s in gpu.builds[0][1:3]] == ["i64", "fp64"]


def test_empty_grid_compiles_but_launches_nothing(gpu):
    k = tilecc.jit(copy)
    x = FakeTensor(BASE)
    k[(0,)](x, x, 64, 1.5, BLOCK=64)
    k[(4, 0)](x, x, 64, 1.5, BLOCK=64)
    k[lambda meta: (0,)](x, x, 64, 1.5, BLOCK=64)
    assert len(gpu.builds) == 1 and gpu.log == []


def test_grids(gpu):
    k = tilecc.jit(copy)
    x = FakeTensor(BASE)
    k[4](x, x, 64, 1.5, BLOCK=64)
    k[(2, 3)](x, x, 64, 1.5, BLOCK=64)
    k[(2, 3, 4)](x, x, 64, 1.5, BLOCK=64)
    k[[5]](x, x, 64, 1.5, BLOCK=64)
    k[lambda meta: (tilecc.cdiv(meta["n"], meta["BLOCK"]), meta["num_warps"])](
        x, x, 640, 1.5, BLOCK=64)
    assert [e["grid"] for e in gpu.log] == [(4, 1, 1), (2, 3, 1), (2, 3, 4), (5, 1, 1),
                                            (10, 4, 1)]
    assert k[(2, 3)] is k[(2, 3)]  # bound launches are kept per grid
    for bad in [(-1,), (1, 2, 3, 4), (), (1, 65536), (1 << 31,), "x"]:
        with pytest.raises(ValueError, match="grid"):
            k[bad](x, x, 64, 1.5, BLOCK=64)
    assert len(gpu.log) == 5


def test_device_checks(gpu):
    k = tilecc.jit(copy)
    with pytest.raises(TypeError, match="`src` is a host"):
        k[(1,)](np.zeros(4, np.float32), FakeTensor(BASE), 64, 1.5, BLOCK=64)
    with pytest.raises(TypeError, match="`dst` is a host"):
        k[(1,)](FakeTensor(BASE), FakeTensor(BASE, device=-1), 64, 1.5, BLOCK=64)
    with pytest.raises(ValueError, match="`dst` is a host"):  # Triton's kind for it
        k[(1,)](FakeTensor(BASE), FakeTensor(BASE, device=-1), 64, 1.5, BLOCK=64)
    k[(1,)](FakeTensor(BASE), FakeTensor(BASE), 64, 1.5, BLOCK=64)  # warm on device 0
    with pytest.raises(ValueError, match=r"different devices: \[0, 1\]"):
        k[(1,)](FakeTensor(BASE), FakeTensor(BASE, device=1), 64, 1.5, BLOCK=64)
    k[(1,)](FakeTensor(BASE, device=1), FakeTensor(BASE, device=1), 64, 1.5, BLOCK=64)
    assert [(e["device"], e["stream"]) for e in gpu.log] == [(0, 0x7000), (1, 0x7001)]
    with pytest.raises(TypeError, match="missing argument `BLOCK`"):
        k[(1,)](FakeTensor(BASE), FakeTensor(BASE), 64, 1.5)
    with pytest.raises(TypeError, match="takes 5 arguments"):
        k[(1,)](FakeTensor(BASE), FakeTensor(BASE), 64, 1.5, 64, 7)
    with pytest.raises(TypeError, match="unexpected keyword argument `BLOK`"):
        k[(1,)](FakeTensor(BASE), FakeTensor(BASE), 64, 1.5, BLOK=64)


@pytest.mark.parametrize("fw", ["torch", "cupy", "cai"])
def test_warm_launches_follow_the_arrays_device(gpu, fw):
    k = tilecc.jit(copy)
    for dev in (0, 0, 0, 1, 1, 0):
        x = MAKERS[fw](BASE, dev)
        k[(1,)](x, x, 64, 1.5, BLOCK=64)
    assert [e["device"] for e in gpu.log] == [0, 0, 0, 1, 1, 0] and len(gpu.builds) == 2
    assert k._direct is not None


def test_streams_follow_the_array_framework(gpu):
    k = tilecc.jit(copy)
    t, c, o = FakeTensor(BASE), FakeCuPyArray(BASE), CAIArray(BASE)
    k[(1,)](t, t, 64, 1.5, BLOCK=64)
    k[(1,)](c, c, 64, 1.5, BLOCK=64)
    k[(1,)](o, o, 64, 1.5, BLOCK=64)
    k[(1,)](c, t, 64, 1.5, BLOCK=64)  # torch among the arguments: torch's stream
    gpu.streams["torch"] = 0x7770  # `with torch.cuda.stream(s):`
    k[(1,)](t, t, 64, 1.5, BLOCK=64)
    assert [e["stream"] for e in gpu.log] == [0x7000, 0x9000, 0x5000, 0x7000, 0x7770]


def test_each_thread_packs_its_own_block(gpu):
    k = tilecc.jit(copy)
    x = FakeTensor(BASE)
    k[(1,)](x, x, 64, 1.5, BLOCK=64)
    th = threading.Thread(target=lambda: k[(1,)](x, x, 96, 2.5, BLOCK=64))
    th.start()
    th.join()
    [launcher] = k._binders[0].bound.values()
    assert len(launcher._buffers) == 1
    assert [e["values"][2:] for e in gpu.log] == [[64, 1.5], [96, 2.5]]


def test_interpreter_switch_after_a_warm_launch(gpu, monkeypatch):
    @tilecc.jit
    def fill(out, v, BLOCK: tl.constexpr):
        tl.store(out + tl.arange(0, BLOCK), tl.full((BLOCK,), v, tl.float32))

    x = FakeTensor(BASE)
    fill[(1,)](x, 2.0, BLOCK=8)
    monkeypatch.setenv("TILECC_INTERPRET", "1")
    out = np.zeros(8, np.float32)
    fill[(1,)](out, 3.0, BLOCK=8)
    assert (out == 3.0).all() and len(gpu.log) == 1


def test_kernel_grid_calls_the_warm_launch_straight(gpu, monkeypatch):
    """From the launch that generates a kernel's warm launch on, `kernel[grid]` is a partial
    of it: no Python call between the user's line and the warm launch.  What it does not
    take goes to the general path: missing or extra arguments (the general path's errors),
    a profiler observing launches, the interpreter asked for; an argument given twice is
    Python's TypeError, naming the kernel."""
    @tilecc.jit
    def fill(out, v, BLOCK: tl.constexpr):
        tl.store(out + tl.arange(0, BLOCK), tl.full((BLOCK,), v, tl.float32))

    x = FakeTensor(BASE)
    fill[(1,)](x, 2.0, BLOCK=8)
    fill[(1,)](x, 2.0, BLOCK=8)  # generates the warm launch
    bound = fill[(1,)]
    assert bound.func is fill._direct and bound.args[:2] == ((1,), (1, 1, 1))
    [launcher] = fill._binders[0].bound.values()
    launcher.compiled = marker = object()
    assert bound(x, 2.5, BLOCK=8) is marker and fill[(1,)](out=x, v=3.5, BLOCK=8) is marker
    with pytest.raises(LaunchError, match="BLOCK"):
        fill[(1,)](x, 2.5)
    with pytest.raises(LaunchError, match="takes 3 arguments but 4 were given"):
        fill[(1,)](x, 2.5, 8, 9)
    with pytest.raises(TypeError, match=r"fill\[grid\]\(\) got multiple values for argument "
                                        "'out'"):
        fill[(1,)](x, 2.5, out=x, BLOCK=8)
    seen = []

    def observer(jit_fn, grid, args, kwargs, interpreted, launch):
        # (the arguments by name: positional ones may come as keywords)
        seen.append((jit_fn, grid, jit_fn.bind(args, dict(kwargs))[0], interpreted))
        return launch(grid)

    L.set_launch_observer(observer)
    try:
        assert fill[(1,)](x, 4.5, BLOCK=8) is marker
    finally:
        L.set_launch_observer(None)
    assert seen == [(fill, (1,), {"out": x, "v": 4.5, "BLOCK": 8}, False)]
    assert [e["values"][1] for e in gpu.log] == [2.0, 2.0, 2.5, 3.5, 4.5]
    monkeypatch.setenv("TILECC_INTERPRET", "1")
    out = np.zeros(8, np.float32)
    fill[(1,)](out, 3.0, BLOCK=8)
    assert (out == 3.0).all() and len(gpu.log) == 5


def test_relaunch_makes_the_kernels_device_current(monkeypatch):
    calls = []
    runtime = types.SimpleNamespace(getDevice=lambda: 0,
                                    setDevice=lambda d: calls.append(("set", d)))
    monkeypatch.setattr(L.cuda, "_runtime", lambda: runtime)
    kernel = object.__new__(L.CudaKernel)
    kernel.handle, kernel.threads, kernel.device_id = 7, 64, 1
    kernel.shared_bytes = 0
    kernel.launch_kernel = lambda *a: calls.append(("launch", a[0], a[8]))

    class DriverError(Exception):
        def __init__(self, status):
            self.status = status

    kernel.relaunch(DriverError(201), (1, 1, 1), 0x42, 0)
    assert calls == [("set", 1), ("launch", 7, 0x42), ("set", 0)]
    with pytest.raises(DriverError):
        kernel.relaunch(DriverError(700), (1, 1, 1), 0x42, 0)  # not a context problem
    calls.clear()
    kernel.device_id = 0  # a new thread: device 0, but no context bound yet
    kernel.relaunch(DriverError(201), (1, 1, 1), 0x42, 0)
    assert calls == [("set", 0), ("launch", 7, 0x42)]


def test_interpret_env_is_read_cheaply(monkeypatch):
    monkeypatch.delenv("TILECC_INTERPRET", raising=False)
    assert not L.interpret_requested()
    monkeypatch.setenv("TILECC_INTERPRET", "1")
    assert L.interpret_requested()
    monkeypatch.setenv("TILECC_INTERPRET", "0")
    assert not L.interpret_requested()


def test_floats_beyond_fp32_become_inf_as_a_c_cast_makes_them(gpu):
    k = tilecc.jit(copy)
    x = FakeTensor(BASE)
    k[(1,)](x, x, 64, 1e300, BLOCK=64)
    k[(1,)](x, x, 64, -1e300, BLOCK=64)
    assert [e["values"][3] for e in gpu.log] == [float("inf"), float("-inf")]


def test_the_second_launch_is_warm(gpu, monkeypatch):
    k = tilecc.jit(copy)
    x = FakeTensor(BASE)
    k[(1,)](x, x, 64, 1.5, BLOCK=64, num_warps=2)

    def no_slow_path(*a, **kw):
        raise AssertionError("the slow path ran again")

    monkeypatch.setattr(L, "_slow_path", no_slow_path)
    monkeypatch.setattr(k, "specs_for", no_slow_path)
    k[(1,)](x, x, 64, 1.5, BLOCK=64, num_warps=2)
    k[(2,)](x, x, 80, 2.5, BLOCK=64, num_warps=2)
    assert [e["values"][2:] for e in gpu.log] == [[64, 1.5], [64, 1.5], [80, 2.5]]


def counting(direct, taken: list):
    """`direct` (a generated warm launch), appending to `taken` whether it took each launch
    (True) or declined it.  kernel[grid] calls it with the general path to decline to,
    launch.run with `declined` (False: run takes the general path): either way, a decline
    goes through the function it is given."""
    def launch(grid, g3, decline, *args, **kwargs):
        took = [True]

        def declining(*a, **kw):
            took[0] = False
            return decline(*a, **kw)
        got = direct(grid, g3, declining, *args, **kwargs)
        taken.append(took[0])
        return got
    return launch


@pytest.mark.parametrize("fw", ["torch", "cupy", "cai"])
def test_warm_launches_take_the_direct_path(gpu, fw, monkeypatch):
    """From the second launch on, one generated function binds, keys, packs and launches —
    with a normalized grid or one to resolve (a callable, a list: `kernel.run`, autotuned
    kernels), a float that needs saturating, in another thread; it hands a key or launch
    option not seen yet and arguments that do not bind to the general path, and every
    launch passes the same values either way."""
    k = tilecc.jit(ten)
    arrays = [MAKERS[fw](BASE + i * 4096) for i in range(6)]
    k[(5,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024)
    k[(5,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024)  # the second: the binder is generated
    direct = k._direct
    assert direct is not None and \
        "def direct(_tc_grid, _tc_g3, _tc_decline, a=_MISSING, b=_MISSING" in direct.source
    taken = []
    monkeypatch.setattr(k, "_direct", counting(direct, taken))
    k._grids.clear()  # kernel[grid]'s partials, bound from now on to the counting one
    k[(5,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024)
    k[(6, 2)](*arrays, n=1016, m=4, k=1, alpha=0.25, BLOCK=1024)  # keywords bind too
    assert taken == [True, True]
    k[(5,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024, num_warps=8)  # a new key: general path
    k[(5,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024, num_warps=8)  # ... and then direct
    k[(5,)](*arrays, 1000, 3, 1, 1e300, BLOCK=1024)  # beyond fp32: the launcher saturates
    th = threading.Thread(target=lambda: k[(5,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024))
    th.start()
    th.join()
    with pytest.raises(TypeError, match="BLCK"):  # does not bind: the general path says why
        k[(5,)](*arrays, 1000, 3, 1, 0.5, BLCK=1024)
    assert taken[2:] == [False, True, True, True]
    k[lambda meta: (meta["BLOCK"] // 256, meta["num_warps"], meta["n"] // 1000)](
        *arrays, 1000, 3, 1, 0.5, BLOCK=1024, num_warps=8)
    k[[3, 2]](*arrays, 1000, 3, 1, 0.5, BLOCK=1024)
    k.run(*arrays, 1000, 3, 1, 0.5, grid=lambda meta: (7,), warmup=False, BLOCK=1024)
    with pytest.raises(ValueError, match="grid"):  # a bad grid: reported at the call
        k[lambda meta: (-1,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024)
    k[(0,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024)  # an empty grid launches nothing
    assert taken[6:] == [True] * 4 and len(taken) == 10
    values = [e["values"] for e in gpu.log]
    assert values[0] == values[1] == values[2] == values[4] == values[5] == values[7]
    assert values[3][6:] == [1016, 4, 0.25] and gpu.log[3]["grid"] == (6, 2, 1)
    assert values[6][-1] == float("inf")
    assert values[8] == values[9] == values[10] == values[0]
    assert [e["grid"] for e in gpu.log[8:]] == [(4, 8, 1), (3, 2, 1), (7, 1, 1)]
    assert [e["threads"] for e in gpu.log] == [128] * 4 + [256] * 2 + [128] * 2 + \
        [256] + [128] * 2
    assert gpu.log[2]["stream"] == STREAMS[fw] and len(gpu.builds) == 2 and len(gpu.log) == 11


class IterableTensor(FakeTensor):
    """A tensor that iterates over its elements, as torch's does."""

    def __init__(self, ptr, elements):
        super().__init__(ptr)
        self.elements = elements

    def __iter__(self):
        return iter(range(self.elements))

    def __len__(self):
        return self.elements


@pytest.mark.parametrize("elements", [1, 3])
def test_a_kernel_of_one_parameter_launches_warm(gpu, elements):
    """The generated warm launch of a one-parameter kernel takes the argument as it is:
    it does not iterate it (a tensor of many elements would not unpack, one of a single
    element would unpack to its element)."""
    def fill(x):
        pass

    k = tilecc.jit(fill)
    x = IterableTensor(BASE, elements)
    for _ in range(3):
        k[(2,)](x)
    assert k._direct is not None
    assert k._direct((2,), (2, 1, 1), L.declined, x) is not False  # taken, not declined
    assert [e["values"] for e in gpu.log] == [[BASE]] * 4 and len(gpu.builds) == 1


class Recorded(list):
    """A launcher for TailRecorder: the values of each launch, and what a launch returns."""
    compiled = "the launched kernel"


class TailRecorder:
    """A launcher class whose generated launch appends its values to the launcher (a
    `Recorded` list)."""

    @staticmethod
    def direct_tail(out, hand_off):
        return [], [f"_tc_l.append([{', '.join(out)}])"], {}


@pytest.mark.parametrize("values, names", [((), ()), ((IterableTensor(BASE, 5),), ("x",)),
                                           ((IterableTensor(BASE, 1), 7), ("x", "n")),
                                           ((IterableTensor(BASE, 2), 16), ("x", "N"))])
def test_generated_launch_binds_any_number_of_parameters(gpu, values, names):
    """`make_binder`'s warm launch of zero, one or more parameters (a constexpr among
    them) reads each argument as given."""
    flags = tuple(n.isupper() for n in names)
    bound: dict = {}
    binder = L.make_binder(flags, values, names, bound, TailRecorder)
    key, out = binder(values)
    recorder = bound[L.launch_key(key)] = Recorded()
    assert binder.direct((3,), (3, 1, 1), L.declined, *values) == Recorded.compiled
    assert binder.direct((3,), (0, 1, 1), L.declined, *values) == Recorded.compiled  # empty
    assert recorder == [out] and out == [BASE if hasattr(v, "ptr") else v
                                         for v, ce in zip(values, flags) if not ce]


def test_launch_options_give_one_key_on_both_paths(gpu):
    """A launcher the general path files under a launch with options is the one the
    generated warm launch finds for the same options (`launch_key`, written inline)."""
    k = tilecc.jit(copy)
    x = FakeTensor(BASE)
    k[(1,)](x, x, 64, 1.5, BLOCK=64)
    k[(1,)](x, x, 64, 1.5, BLOCK=64)  # the generated warm launch exists from here
    direct = k._direct
    for opts in [{"num_stages": 2}, {"debug": True}, {"num_warps": 2, "debug": False},
                 {"debug": None, "num_stages": 3, "num_warps": 8}]:
        assert direct((1,), None, L.declined, x, x, 64, 1.5, BLOCK=64, **opts) is False
        k[(1,)](x, x, 64, 1.5, BLOCK=64, **opts)  # the general path compiles and files it
        assert direct((1,), None, L.declined, x, x, 64, 1.5, BLOCK=64, **opts) is not False
    assert len(gpu.builds) == 5
    assert [e["threads"] for e in gpu.log] == [128] * 2 + [128] * 4 + [64] * 2 + [256] * 2


def test_hip_launches_take_the_same_paths(gpu, monkeypatch):
    """Arrays on a ROCm device launch through hip-python (values, not a packed block) on
    the general path and on the generated warm launch alike, on torch's current stream."""
    monkeypatch.setattr(sys.modules["torch"].version, "hip", "6.0", raising=False)
    k = tilecc.jit(ten)
    arrays = [FakeTensor(BASE + i * 4096) for i in range(6)]
    k[(5,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024)
    k[(5,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024)
    direct = k._direct
    assert direct is not None and "_tc_l(_tc_g3, [p0, p1" in direct.source
    taken = []
    monkeypatch.setattr(k, "_direct", lambda *a, **kw: taken.append(direct(*a, **kw)) or
                        taken[-1])
    k._grids.clear()
    [launcher] = k._binders[0].bound.values()
    k[(5,)](*arrays, 1000, 3, 1, 0.5, BLOCK=1024)
    k[lambda meta: (2, meta["num_warps"])](*arrays, 1000, 3, 1, 0.5, BLOCK=1024)
    assert taken == [launcher.compiled] * 2 and len(gpu.builds) == 1
    assert isinstance(launcher, L.HipLauncher)
    assert [e["grid"] for e in gpu.log] == [(5, 1, 1)] * 3 + [(2, 4, 1)]
    assert all(e["values"] == [BASE + i * 4096 for i in range(6)] + [1000, 3, 0.5] and
               e["stream"] == STREAMS["torch"] for e in gpu.log)


def test_module_loads_in_the_current_context_or_the_devices_primary_one(monkeypatch):
    calls = []
    current = {"device": 0}

    def ctx_get_device():
        if current["device"] is None:
            raise RuntimeError("CUDA_ERROR_INVALID_CONTEXT")
        return current["device"]

    driver = types.SimpleNamespace(
        ctxGetDevice=ctx_get_device, launcher=lambda: None,
        funcSetAttribute=lambda f, attr, value: calls.append(("attr", f, attr, value)),
        deviceGetAttribute=lambda attr, device: {97: 100 * 1024}[attr],  # opt-in shared memory
        funcGetAttribute=lambda attr, f: {1: 4096}[attr],  # the kernel's static shared memory
        moduleLoadData=lambda data: calls.append(("load", current["device"], data)) or 11,
        moduleGetFunction=lambda module, name: calls.append(("get", module, name)) or 22)

    def set_device(d):
        calls.append(("set", d))
        current["device"] = d

    runtime = types.SimpleNamespace(getDevice=lambda: current["device"] or 0,
                                    setDevice=set_device)
    monkeypatch.setattr(L.cuda, "_driver", lambda: driver)
    monkeypatch.setattr(L.cuda, "_runtime", lambda: runtime)
    binary = types.SimpleNamespace(data=b"cubin", shared_bytes=0)
    k = L.CudaKernel(binary, "kern", 128, 0)  # torch / CuPy made device 0's context current
    assert (k.module, k.handle) == (11, 22)
    assert calls == [("load", 0, b"cubin"), ("get", 11, "kern")]
    calls.clear()  # more than 48 KiB of dynamic shared memory must be allowed first
    big = L.CudaKernel(types.SimpleNamespace(data=b"cubin", shared_bytes=96 * 1024), "kern",
                       128, 0)
    assert big.shared_bytes == 96 * 1024 and ("attr", 22, 8, 96 * 1024) in calls
    calls.clear()  # 96 + 4 KiB static: just what the device allows; 98 + 4 KiB: refused
    with pytest.raises(tilecc.OutOfResources, match="Required: 104448, Hardware limit: 102400"):
        L.CudaKernel(types.SimpleNamespace(data=b"cubin", shared_bytes=98 * 1024), "kern", 128, 0)
    assert not [c for c in calls if c[0] == "attr"]
    calls.clear()
    L.CudaKernel(binary, "kern", 128, 1)  # another device: its primary context, then back
    assert calls == [("set", 1), ("load", 1, b"cubin"), ("get", 11, "kern"), ("set", 0)]
    calls.clear()
    current["device"] = None  # a thread without a context
    L.CudaKernel(binary, "kern", 128, 0)
    assert calls[:2] == [("set", 0), ("load", 0, b"cubin")]


def test_device_arch_from_torch_or_the_runtime(monkeypatch):
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_initialized=lambda: True,
                                       get_device_capability=lambda d: (9, 0))
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(L, "_archs", {})
    assert L._device_arch(0, "cuda") == "sm_90"
    torch.cuda.is_initialized = lambda: False
    runtime = types.SimpleNamespace(deviceGetAttribute=lambda attr, d: {75: 12, 76: 0}[attr])
    monkeypatch.setattr(L.cuda, "_runtime", lambda: runtime)
    assert L._device_arch(1, "cuda") == "sm_120"
    assert L._device_arch(0, "cuda") == "sm_90"  # kept per device


def test_launch_gives_the_kernels_dynamic_shared_memory():
    """tl.dot pipelines keep their stages in dynamic shared memory: every launch passes it."""
    specs = [types.SimpleNamespace(is_constexpr=False, equals_one=False, type=D.int32)]
    log: list = []
    kernel = RecordingKernel(specs, 4, 0, log)
    kernel.shared_bytes = 98304
    launcher = L.Launcher(kernel, L.slot_layout(specs), lambda dev: 0)
    launcher((2, 1, 1), [5])
    assert log and log[0]["values"] == [5] and log[0]["grid"] == (2, 1, 1)


def test_driver_calls_need_no_cupy(monkeypatch):
    """Loading goes through libcuda by ctypes; launches take CuPy's compiled binding only
    when CuPy is loaded anyway."""
    from tilecc.runtime import cuda_driver

    monkeypatch.delitem(sys.modules, "cupy_backends.cuda.api.driver", raising=False)
    assert cuda_driver.launcher() is cuda_driver.launchKernel
    fake = types.SimpleNamespace(launchKernel=object())
    monkeypatch.setitem(sys.modules, "cupy_backends.cuda.api.driver", fake)
    assert cuda_driver.launcher() is fake.launchKernel
    e = cuda_driver.CUDADriverError("cuLaunchKernel", 201)
    assert e.status == 201 and "201" in str(e)  # what CudaKernel.relaunch reads


def test_the_launch_package_does_not_import_the_jit():
    """One direction only: `runtime.jit` imports `runtime.launch`; launch does not import
    jit, not even inside a function (it gets what it needs through the kernel object)."""
    import ast
    import pathlib

    init = pathlib.Path(L.__file__)
    files = sorted(init.parent.glob("*.py")) if init.name == "__init__.py" else [init]
    package = L.__name__ if init.name == "__init__.py" else L.__name__.rpartition(".")[0]
    found = []
    for f in files:
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, up level - 1 packages
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            if any(n == "tilecc.runtime.jit" or n.startswith("tilecc.runtime.jit.")
                   for n in names):
                found.append(f"{f.name}:{node.lineno}")
    assert len(files) >= 1 and found == []


def test_none_pointer_arguments_specialize_and_stay_on_the_warm_path(gpu):
    """None for an array parameter compiles a kernel without it (a constexpr None, as
    Triton), keyed apart from arrays; warm launches with None need no new build."""
    def optional(src, bias, dst, BLOCK: tl.constexpr):
        pass

    k = tilecc.jit(optional)
    x, y = FakeTensor(BASE), FakeTensor(BASE + 64)
    flags = k._param_constexpr
    assert L.arg_key(flags, (x, None, y, 16)) is not None  # not the slow path each time
    assert L.arg_key(flags, (x, None, y, 16))[0] != L.arg_key(flags, (x, x, y, 16))[0]
    for _ in range(2):
        k[(1,)](x, None, y, BLOCK=16)
    k[(1,)](x, x, y, BLOCK=16)
    assert len(gpu.builds) == 2
    assert [s.is_constexpr for s in gpu.builds[0]] == [False, True, False, True]
    assert gpu.log[0]["values"] == gpu.log[1]["values"] == [BASE, BASE + 64]
    assert gpu.log[2]["values"] == [BASE, BASE, BASE + 64]


def test_cupy_arrays_of_bfloat16_and_float8_are_taken_by_their_dtype() -> None:
    """CuPy's array interface spells bfloat16 and the float8 types as anonymous bytes
    ("<V2", "<V1"): the array's own dtype says which (they were refused as unsupported)."""
    import ml_dtypes

    from tilecc.transpiler import specialize as SP

    pytest.importorskip("cupy")
    for np_type, short in ((ml_dtypes.bfloat16, "bf16"), (ml_dtypes.float8_e5m2, "fp8e5")):
        dtype = np.dtype(np_type)
        fake = type("ndarray", (), {"__module__": "cupy._core.core", "dtype": dtype,
                                    "__cuda_array_interface__": {"data": (0x7f0000000000, False),
                                                                 "typestr": dtype.str}})()
        info = SP.array_info(fake)
        assert info.dtype.short == short and info.ptr == 0x7f0000000000


def scaled_tiles(x_desc, y_desc, scale, BLOCK: tl.constexpr):
    pass


def _descriptor(array, shape, strides, block=(64, 32), padding="zero"):
    return tilecc.TensorDescriptor(array, list(shape), list(strides), list(block), padding)


@pytest.mark.parametrize("fw", ["torch", "cupy"])
def test_host_descriptors_take_the_generated_warm_launch(gpu, fw, monkeypatch):
    """Host-side TensorDescriptor arguments bind, key and launch in the generated warm
    launch, which passes what the general path passes; each change of what the
    specialization reads of a descriptor (its base's alignment and dtype, the dims' and
    strides' residues, block shape, padding) compiles anew, and one it cannot key (a
    last stride other than 1, another rank) goes to the general path, which decides."""
    k = tilecc.jit(scaled_tiles)
    mk = MAKERS[fw]
    x, y = mk(BASE), mk(BASE + (1 << 20))
    dx, dy = _descriptor(x, (512, 256), (256, 1)), _descriptor(y, (512, 256), (256, 1))
    k[(4,)](dx, dy, 0.5, BLOCK=64)
    k[(4,)](dx, dy, 0.5, BLOCK=64)  # the second: the warm launch is generated
    taken = []
    monkeypatch.setattr(k, "_direct", counting(k._direct, taken))
    k._grids.clear()
    variants = [
        (dx, dy),
        (_descriptor(mk(BASE + 32), (512, 256), (256, 1)), dy),  # another base, aligned
        (_descriptor(x, (500, 256), (256, 1)), dy),  # a dim not a multiple of 16
        (_descriptor(x, (512, 256), (264, 1)), dy),  # a stride of another residue
        (_descriptor(x, (512, 256), (256, 1), block=(32, 32)), dy),
        (_descriptor(x, (512, 256), (256, 1), padding="nan"), dy),
        (dx, _descriptor(mk(BASE + (1 << 21)), (512, 256), (256, 1))),  # the same again
    ]
    if fw == "torch":  # another dtype
        variants.append((dx, _descriptor(FakeTensor(BASE, F16), (512, 256), (256, 1))))
    for pair in variants + variants:
        k[(4,)](*pair, 0.5, BLOCK=64)
    specs = {repr(cache.spec_key(k.specs_for(dict(zip(k._param_names, (*p, 0.5, 64))))[0]))
             for p in variants}
    assert len(gpu.builds) == len(specs) == len(variants) - 3  # (the residues key alone)
    # the first time, keys seen before only (an aligned base like the first, the first
    # again); the second time, every one
    assert taken[:len(variants)] == [True, True] + [False] * 4 + [True] + \
        [False] * (len(variants) - 7)
    assert all(taken[len(variants):])
    values = [e["values"] for e in gpu.log]
    assert values[2:2 + len(variants)] == values[2 + len(variants):]
    assert values[2][:4] == [BASE, 512, 256, 256]  # base, dims, strides but the last
    assert values[3][0] == BASE + 32 and values[5][3] == 264
    # a last stride other than 1 (refused by the specialization) and another rank: the
    # general path, every time
    bad = _descriptor(x, (512, 256), (256, 1))
    bad.strides = [256, 2]  # (a descriptor is a dataclass: its fields may change)
    with pytest.raises(ValueError, match="last"):
        k[(4,)](bad, dy, 0.5, BLOCK=64)
    cube = _descriptor(x, (4, 512, 256), (512 * 256, 256, 1), block=(2, 64, 32))
    k[(4,)](cube, dy, 0.5, BLOCK=64)
    k[(4,)](cube, dy, 0.5, BLOCK=64)
    assert taken[2 * len(variants):] == [False, False]  # (the error left no record)
    assert gpu.log[-1]["values"][:6] == [BASE, 4, 512, 256, 512 * 256, 256]


def test_tensor_map_launches_take_the_generated_warm_launch(gpu, monkeypatch):
    """A kernel that takes tensor maps of its host-side descriptors launches warm through
    the generated launch too: the maps are encoded once for the descriptors' values and
    passed after the parameters; a descriptor over other memory encodes its map again."""
    from tilecc.runtime import cuda_driver
    from tilecc.runtime.launch import cuda as launch_cuda
    from tilecc.transpiler.specs import TensorMap

    encoded = []

    def encode(address, **args):
        encoded.append(address)
        return tuple(range(address, address + 16))

    monkeypatch.setattr(cuda_driver, "tensorMapEncodeTiled", encode)

    class MapKernel(RecordingKernel):
        def launch_kernel(self, f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
            super().launch_kernel(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra)
            at = ctypes.c_void_p.from_address(params + sum(self.taken) * 8).value
            self.log[-1]["map"] = struct.unpack("=16Q", ctypes.string_at(at, 128))

    def build(jit_fn, specs, num_warps, debug, backend, device_id, num_stages=None):
        gpu.builds.append(specs)
        kernel = MapKernel(specs, num_warps, device_id, gpu.log)
        m = TensorMap("x_desc", "fp32", (64, 32), 128, "zero")
        kernel.tensor_maps = launch_cuda.map_slots([m], specs)
        return kernel

    monkeypatch.setattr(L, "_build", build)
    k = tilecc.jit(scaled_tiles)
    x, y = FakeTensor(BASE), FakeTensor(BASE + (1 << 20))
    dy = _descriptor(y, (512, 256), (256, 1))
    for base in (x, x, x, FakeTensor(BASE + 4096), x):
        k[(4,)](_descriptor(base, (512, 256), (256, 1)), dy, 0.5, BLOCK=64)
    assert k._direct is not None and "_tc_l(_tc_g3, (" in k._direct.source
    assert len(gpu.builds) == 1 and encoded == [BASE, BASE + 4096, BASE]
    assert [e["map"][0] for e in gpu.log] == [BASE] * 3 + [BASE + 4096, BASE]
    assert all(e["values"][:4] == [e["map"][0], 512, 256, 256] for e in gpu.log)
    assert all(e["values"][-1] == 0.5 for e in gpu.log)
