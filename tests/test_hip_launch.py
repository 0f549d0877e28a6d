"""The HIP launch path (`runtime/launch/hip.py`) without an AMD GPU: hip-python replaced by
a recording stand-in (`fake_hip.py`, installed in `sys.modules`) that checks what each call
receives as the HIP runtime does.  Loading a code object, finding the kernel, the bytes
each argument kind puts in the kernel's arguments, grid, block and shared memory, the
framework's current stream, the device made current and put back, HIP errors by name,
and the device's shared-memory limit checked before a launch."""

import ctypes
import struct
import sys
import types

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from conftest_compilers import require_hip_compiler
from fake_hip import (ENUMS, ERROR_STRINGS, FUNCTIONS, FakeDevice, FakeHip, hipError_t,
                      pack_extra)
from test_launch_path import BASE, FakeTensor
from tilecc.errors import OutOfResources
from tilecc.runtime import autotune
from tilecc.runtime import compiler as C
from tilecc.runtime import launch as L
from tilecc.runtime.binary import Binary
from tilecc.runtime.launch import hip as H
from tilecc.transpiler.target import resolve_target

GFX90A = "gfx90a:sramecc+:xnack-"


@pytest.fixture
def fake(monkeypatch):
    """hip-python replaced by a recording stand-in with two devices; device 0 current."""
    return FakeHip(devices=[FakeDevice(GFX90A), FakeDevice(GFX90A)]).install(monkeypatch)


def code_object(*names: str) -> bytes:
    """Bytes that pass for a code object holding these kernels (see fake_hip)."""
    return b"\x7fELF\x02\x01\x01" + b"\0".join(n.encode() for n in names)


def binary(name="k", shared_bytes=0) -> Binary:
    return Binary("hip", "gfx90a", code_object(name), "", shared_bytes)


def kernarg(codes: str, values) -> bytes:
    """The kernel's argument bytes as the C ABI lays them out (CUDA's argument block)."""
    buf = L.ArgBuffer(codes)
    buf.pack(values)
    return ctypes.string_at(ctypes.addressof(buf.storage), buf.size)


def taken(specs, values):
    """The struct codes and values of the parameters a kernel takes (not constexprs, not
    ints specialized to 1)."""
    codes, used = L.slot_layout(specs)
    return ("".join(c for c, t in zip(codes, used) if t),
            [v for v, t in zip(values, used) if t])


# --- the stand-in is hip-python's shape ---------------------------------------------------------

def test_the_fake_has_hip_pythons_names_values_and_parameters():
    real = pytest.importorskip("hip.hip")  # hip-python, where installed
    if isinstance(real, FakeHip):
        pytest.skip("hip-python is replaced here")
    for name in FUNCTIONS:
        first_line = getattr(real, name).__doc__.splitlines()[0]  # "f(a, int b)"
        params = [p.split()[-1] for p in first_line[len(name) + 1:-1].split(",") if p.strip()]
        mine = list(getattr(FakeHip, name).__code__.co_varnames[1:1 + len(params) + 1])
        assert mine[:len(params)] == params and \
            getattr(FakeHip, name).__code__.co_argcount == len(params) + 1, name
    for enum in ENUMS:
        theirs = getattr(real, enum.__name__)
        for member in enum:
            assert int(getattr(theirs, member.name)) == member.value, member.name


def test_extra_is_laid_out_at_natural_alignment():
    got = pack_extra([ctypes.c_bool(True), ctypes.c_int64(-2), ctypes.c_uint16(7),
                      ctypes.c_float(0.5), ctypes.c_void_p(BASE)])
    assert got == kernarg("?qHfQ", [True, -2, 7, 0.5, BASE])


# --- loading ----------------------------------------------------------------------------------

def test_a_kernel_is_loaded_from_its_code_object_and_found_by_name(fake):
    b = binary("tc_add")
    k = H.load(b, "tc_add", 256, 0, ())
    assert fake.names() == ["hipGetDevice", "hipModuleLoadData", "hipModuleGetFunction"]
    assert fake.of("hipModuleLoadData")[0]["image"] == b.data
    assert fake.of("hipModuleGetFunction")[0]["kname"] == b"tc_add"
    assert k.function.name == "tc_add" and k.module.device == 0


def test_load_errors_name_the_call_and_the_hip_error(fake):
    with pytest.raises(H.HIPError) as e:
        H.load(binary("tc_add"), "tc_other", 256, 0, ())
    assert str(e.value) == ("hipModuleGetFunction failed: HIP error 500 hipErrorNotFound: "
                            "named symbol not found")
    assert len(fake.of("hipModuleUnload")) == 1  # the module it was not found in
    assert e.value.status == 500 and e.value.call == "hipModuleGetFunction"
    with pytest.raises(H.HIPError, match="hipModuleLoadData failed: HIP error 200 "
                                         "hipErrorInvalidImage: device kernel image is invalid"):
        H.load(Binary("hip", "gfx90a", b"not elf", ""), "k", 256, 0, ())
    fake.fail("hipModuleLoadData", hipError_t.hipErrorOutOfMemory)
    with pytest.raises(H.HIPError, match="hipErrorOutOfMemory: out of memory"):
        H.load(binary(), "k", 256, 0, ())


def test_a_hip_error_is_one_the_autotuner_skips(fake):
    fake.fail("hipModuleLaunchKernel", hipError_t.hipErrorLaunchOutOfResources)
    k = H.load(binary(), "k", 1024, 0, ())
    with pytest.raises(RuntimeError) as e:
        k.launch_values((1, 1, 1), [], None)
    assert "hipErrorLaunchOutOfResources: too many resources requested for launch" in \
        str(e.value)
    assert autotune._skippable(e.value)


# --- devices ----------------------------------------------------------------------------------

def test_current_device_is_hips(fake):
    fake.current = 1
    assert H.current_device() == 1
    fake.fail("hipGetDevice", hipError_t.hipErrorNoDevice)
    with pytest.raises(H.HIPError, match="hipGetDevice failed: .*hipErrorNoDevice"):
        H.current_device()


def test_device_arch_drops_the_feature_suffixes(fake):
    fake.devices[1] = FakeDevice("gfx942:sramecc+:xnack-")
    assert (H.device_arch(0), H.device_arch(1)) == ("gfx90a", "gfx942")
    with pytest.raises(H.HIPError, match="hipErrorInvalidDevice: invalid device ordinal"):
        H.device_arch(2)


def test_loading_on_another_device_puts_the_current_one_back(fake):
    k = H.load(binary(), "k", 256, 1, ())
    assert k.module.device == 1 and fake.current == 0
    assert [(c.name, c.args.get("deviceId")) for c in fake.calls] == [
        ("hipGetDevice", None), ("hipSetDevice", 1), ("hipModuleLoadData", None),
        ("hipModuleGetFunction", None), ("hipSetDevice", 0)]
    fake.fail("hipModuleLoadData", hipError_t.hipErrorOutOfMemory)
    with pytest.raises(H.HIPError):
        H.load(binary(), "k", 256, 1, ())
    assert fake.current == 0  # put back after a failure too


def test_a_launch_makes_the_kernels_device_current_and_puts_the_callers_back(fake):
    k = H.load(binary(), "k", 256, 1, ())
    fake.streams[0x51] = 1  # a stream of device 1, as torch.cuda.current_stream gives
    k.launch_values((2, 1, 1), [], 0x51)
    k.launch_values((3, 1, 1), [], None)  # device 1's null stream
    assert [(x.device, x.stream, x.grid) for x in fake.launches] == [
        (1, 0x51, (2, 1, 1)), (1, None, (3, 1, 1))]
    assert fake.current == 0
    fake.current = 1  # already current: nothing to set
    before = len(fake.of("hipSetDevice"))
    k.launch_values((1, 1, 1), [], None)
    assert len(fake.of("hipSetDevice")) == before and fake.current == 1
    fake.current = 0
    fake.fail("hipModuleLaunchKernel", hipError_t.hipErrorLaunchFailure)
    with pytest.raises(H.HIPError, match="hipModuleLaunchKernel failed: HIP error 719 "
                                         "hipErrorLaunchFailure: unspecified launch failure"):
        k.launch_values((1, 1, 1), [], None)
    assert fake.current == 0


# --- arguments --------------------------------------------------------------------------------

def every_kind(x_ptr, none_ptr, a, b, c, d, e, f, g, h, i, j, k, m, n, o, BLOCK: tl.constexpr):
    pass


def every_kind_arguments():
    """One argument of each kind tilecc passes: a pointer, ints of every width (one == 1,
    compiled in), bool, fp16, bf16, fp32, fp64; a None pointer and a constexpr, which the
    kernel is not given."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    return dict(x_ptr=np.zeros(16, np.float32), none_ptr=None, a=np.int8(-3),
                b=np.int16(-300), c=7, d=1 << 40, e=1 << 63, f=1, g=np.uint8(250),
                h=np.uint16(60000), i=np.uint32(4_000_000_000), j=True, k=np.float16(1.5),
                m=ml_dtypes.bfloat16(2.5), n=0.25, o=np.float64(1e300), BLOCK=64)


def test_every_argument_kind_reaches_the_kernel_as_c_lays_it_out(fake):
    fn = tilecc.jit(every_kind)
    given = every_kind_arguments()
    x = given["x_ptr"]
    specs, passed = fn.specs_for(given)
    types_ = [s.type.short for s in specs if not s.is_constexpr]
    assert types_ == ["ptr", "i8", "i16", "i32", "i64", "u64", "i32", "u8", "u16", "u32",
                      "i1", "fp16", "bf16", "fp32", "fp64"]  # None and BLOCK: constexprs
    values = L.slot_values(specs, passed)
    kernel = H.load(binary("every_kind"), "every_kind", 256, 0, specs)
    kernel.launch_values((4, 5, 6), values, None)
    (launch,) = fake.launches
    codes, used = taken(specs, values)
    assert codes == "QbhiqQBHI?eHfd"  # f == 1 is compiled in, not passed
    assert launch.kernarg == kernarg(codes, used)
    assert launch.values[0].value == x.ctypes.data and launch.values[-1].value == 1e300
    assert launch.values[10].value == 0x3E00 and launch.values[11].value == 0x4020  # 1.5, 2.5
    call = fake.of("hipModuleLaunchKernel")[0]
    assert (call["gridDimX"], call["gridDimY"], call["gridDimZ"]) == (4, 5, 6)
    assert (call["blockDimX"], call["blockDimY"], call["blockDimZ"]) == (256, 1, 1)
    assert call["sharedMemBytes"] == 0 and call["kernelParams"] is None


def test_each_argument_lands_where_the_code_object_reads_it(monkeypatch, tilecc_cache_dir):
    """hiprtc's code object declares where its kernel reads each argument (the AMDGPU
    metadata note): the bytes hip-python's `extra` puts there are each value's."""
    require_hip_compiler()
    fn = tilecc.jit(every_kind)
    specs, passed = fn.specs_for(every_kind_arguments())
    art = C.compile(fn, specs, resolve_target("hip", "gfx90a"),
                    C.resolve_options(fn, arch="gfx90a"))
    fake = FakeHip().install(monkeypatch)  # after hiprtc ran: it is hip-python's too
    values = L.slot_values(specs, passed)
    H.load(art.binary, art.symbol, 256, 0, specs).launch_values((1, 1, 1), values, None)
    (launch,) = fake.launches
    declared = [a for a in launch.declared if not a[".value_kind"].startswith("hidden_")]
    codes, used = taken(specs, values)
    assert [a[".size"] for a in declared] == [struct.calcsize("=" + c) for c in codes]
    for a, code, value in zip(declared, codes, used):
        at = a[".offset"]
        assert launch.kernarg[at:at + a[".size"]] == struct.pack("=" + code, value), a


def test_a_float_beyond_fp16_is_infinity_as_a_c_cast_makes_it(fake):
    fn = tilecc.jit(every_kind)
    specs, passed = fn.specs_for(dict(x_ptr=np.zeros(1, np.float32), none_ptr=None, a=0, b=0,
                                      c=0, d=0, e=0, f=0, g=0, h=0, i=0, j=0, k=np.float16(0),
                                      m=0, n=0.0, o=0.0, BLOCK=1))
    kernel = H.load(binary("every_kind"), "every_kind", 64, 0, specs)
    values = L.slot_values(specs, passed)
    values[11], values[13] = -1e6, 1e300  # the fp16 slot; the fp32 one
    kernel.launch_values((1, 1, 1), values, None)
    got = fake.launches[0].values
    assert got[11].value == 0xFC00 and got[13].value == float("inf")  # -inf, +inf


# --- shared memory ----------------------------------------------------------------------------

def test_a_kernel_asking_for_more_lds_than_the_device_has_is_refused_before_launch(fake):
    fake.static_shared["k"] = 16 * 1024
    with pytest.raises(OutOfResources) as e:
        H.load(binary("k", shared_bytes=48 * 1024 + 1), "k", 256, 0, ())
    assert (e.value.required, e.value.limit) == (64 * 1024 + 1, 64 * 1024)
    assert e.value.details == ("k needs 16384 bytes of static and 49153 of dynamic shared "
                               "memory (LDS) per program; device 0 allows 65536")
    assert "out of resource: shared memory, Required: 65537, Hardware limit: 65536" in \
        str(e.value)
    assert not fake.of("hipFuncSetAttribute") and not fake.launches
    assert [c["module"].image for c in fake.of("hipModuleUnload")] == [binary("k").data]
    attrs = [c["attr"].name for c in fake.of("hipDeviceGetAttribute")]
    assert attrs == ["hipDeviceAttributeMaxSharedMemoryPerBlock",
                     "hipDeviceAttributeSharedMemPerBlockOptin"]
    assert fake.current == 0


def test_dynamic_lds_within_the_limit_is_set_and_given_at_each_launch(fake):
    fake.static_shared["k"] = 16 * 1024
    k = H.load(binary("k", shared_bytes=48 * 1024), "k", 256, 1, ())
    (set_attr,) = fake.of("hipFuncSetAttribute")
    assert set_attr["attr"].name == "hipFuncAttributeMaxDynamicSharedMemorySize"
    assert set_attr["value"] == 48 * 1024 and set_attr["func"] is k.function
    assert [c["deviceId"] for c in fake.of("hipDeviceGetAttribute")] == [1, 1]
    k.launch_values((1, 1, 1), [], None)
    assert fake.launches[0].shared == 48 * 1024


@pytest.mark.parametrize("optin, limit", [(None, 64 * 1024), (48 * 1024, 64 * 1024),
                                          (96 * 1024, 96 * 1024)])
def test_the_limit_is_the_larger_the_device_reports(fake, optin, limit):
    """The per-block maximum; the opt-in one where larger (a device may refuse it: it is
    CUDA's notion)."""
    fake.devices[0] = FakeDevice(GFX90A, shared_per_block=64 * 1024, shared_optin=optin)
    assert H.shared_memory_limit(fake, 0) == limit
    H.load(binary("k", shared_bytes=limit), "k", 256, 0, ())
    with pytest.raises(OutOfResources):
        H.load(binary("k", shared_bytes=limit + 1), "k", 256, 0, ())


# --- streams ----------------------------------------------------------------------------------

def torch_module(raw_stream: bool):
    torch = types.ModuleType("torch")
    if raw_stream:
        torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda dev: 0x7000 + dev)
    else:  # only the public API
        torch._C = types.SimpleNamespace()
        torch.cuda = types.SimpleNamespace(current_stream=lambda dev: types.SimpleNamespace(
            cuda_stream=0x7000 + dev))
    return torch


def cupy_module():
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(
        get_current_stream=lambda dev: types.SimpleNamespace(ptr=0x9000 + dev))
    return cupy


@pytest.mark.parametrize("frameworks, modules, stream", [
    ({"torch"}, {"torch": True}, 0x7001),
    ({"torch"}, {"torch": False}, 0x7001),
    ({"torch", "cupy"}, {"torch": True, "cupy": True}, 0x7001),
    ({"cupy"}, {"cupy": True}, 0x9001),
    ({"other"}, {"cupy": True}, 0x9001),
    ({"other"}, {}, None),
])
def test_a_launch_runs_on_the_frameworks_current_stream(fake, monkeypatch, frameworks, modules,
                                                        stream):
    for name in ("torch", "cupy"):
        if name in modules:
            module = torch_module(modules[name]) if name == "torch" else cupy_module()
            monkeypatch.setitem(sys.modules, name, module)
        else:
            monkeypatch.delitem(sys.modules, name, raising=False)
    fake.streams.update({0x7000: 0, 0x7001: 1, 0x9000: 0, 0x9001: 1})
    kernel = H.load(binary(), "k", 256, 1, ())
    launcher = H.launcher(kernel, ("", ()), frameworks)
    launcher((1, 1, 1), [])
    assert [x.stream for x in fake.launches] == [stream]
    assert fake.launches[0].device == 1 and fake.current == 0


# --- through kernel[grid](...) ----------------------------------------------------------------

def axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask) +
             tl.load(y_ptr + offs, mask=mask), mask=mask)


@pytest.fixture
def rocm(fake, monkeypatch, tilecc_cache_dir):
    """torch on ROCm (stand-in tensors, torch's current stream per device) over the fake
    hip-python; tilecc's real build with hiprtc's compile replaced by a code object that
    names the kernel."""
    torch = torch_module(raw_stream=True)
    torch.Tensor = FakeTensor
    torch.version = types.SimpleNamespace(hip="6.2")
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.delenv("TILECC_INTERPRET", raising=False)
    monkeypatch.setattr(L, "_archs", {})
    monkeypatch.setattr(C, "_compiled", {})
    compiled = []

    def compile_source(art, target):
        compiled.append((art.symbol, art.arch))
        return Binary(target.name, art.arch, code_object(art.symbol), "")

    monkeypatch.setattr(C, "compile_source", compile_source)
    fake.streams.update({0x7000: 0, 0x7001: 1})
    L._KINDS.pop(FakeTensor, None)
    yield types.SimpleNamespace(compiled=compiled)
    L._KINDS.pop(FakeTensor, None)


def test_kernel_launches_through_hip_from_first_to_warm(fake, rocm):
    k = tilecc.jit(axpy)
    x, y, out = (FakeTensor(BASE + i * 4096, device=1) for i in range(3))
    for _ in range(3):  # the slow path, the general warm path, the generated one
        k[(7,)](x, y, out, 1000, 0.5, BLOCK=256)
    assert len(rocm.compiled) == 1 and rocm.compiled[0][1] == "gfx90a"
    assert len(fake.of("hipModuleLoadData")) == 1
    expected = kernarg("QQQif", [BASE, BASE + 4096, BASE + 8192, 1000, 0.5])
    assert [(x.grid, x.block, x.stream, x.device, x.kernarg) for x in fake.launches] == \
        [((7, 1, 1), (256, 1, 1), 0x7001, 1, expected)] * 3  # 4 waves of 64
    assert fake.current == 0  # the caller's device, throughout
    fake.current = 1  # the caller switches devices: the launch still finds its own
    k[(7,)](x, y, out, 1000, 0.5, BLOCK=256)
    assert fake.launches[-1].device == 1 and fake.current == 1


def test_launch_errors_reach_the_caller_with_the_hip_error(fake, rocm):
    k = tilecc.jit(axpy)
    x, y, out = (FakeTensor(BASE + i * 4096) for i in range(3))
    fake.fail("hipModuleLaunchKernel", hipError_t.hipErrorIllegalAddress, times=None)
    for _ in range(3):
        with pytest.raises(H.HIPError, match="hipErrorIllegalAddress: an illegal memory "
                                             "access was encountered"):
            k[(1,)](x, y, out, 10, 0.5, BLOCK=64)
    assert len(fake.of("hipModuleLaunchKernel")) == 3


def test_error_strings_cover_every_error_the_fake_returns():
    assert set(ERROR_STRINGS) == set(hipError_t)


def test_without_hip_python_a_launch_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "hip", None)  # `import hip` fails
    with pytest.raises(ImportError, match=r"needs hip-python .*pip install 'hip-python=="):
        H.load(binary(), "k", 256, 0, ())


def test_an_error_string_that_repeats_the_name_is_said_once(fake, monkeypatch):
    monkeypatch.setattr(fake, "hipGetErrorString", fake.hipGetErrorName)
    fake.fail("hipGetDevice", hipError_t.hipErrorInvalidContext)
    with pytest.raises(H.HIPError) as e:
        H.current_device()
    assert str(e.value) == "hipGetDevice failed: HIP error 201 hipErrorInvalidContext"


def test_cupy_arrays_of_a_rocm_build_are_on_the_amd_gpu(monkeypatch):
    """CuPy built for ROCm exposes CUDA's array interface too: its arrays go to the HIP
    backend (`cupy.cuda.runtime.is_hip`), a CUDA build's to CUDA."""
    from tilecc.transpiler.specialize import array_info

    class ndarray:  # the shape of a CuPy array, as a module named cupy would define it
        __module__ = "cupy._core.core"
        __cuda_array_interface__ = {"data": (4096, False), "typestr": "<f4", "shape": (4,),
                                    "version": 3}

    for is_hip, device in ((True, "rocm"), (False, "cuda")):
        fake = types.SimpleNamespace(cuda=types.SimpleNamespace(
            runtime=types.SimpleNamespace(is_hip=is_hip)))
        monkeypatch.setitem(sys.modules, "cupy", fake)
        info = array_info(ndarray())
        assert (info.device, info.framework, info.ptr) == (device, "cupy", 4096)
