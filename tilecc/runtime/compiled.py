"""`kernel.warmup(*args, grid=..., **meta)`: compile what a launch would, and describe it
as Triton's `CompiledKernel` does.

    k = kernel.warmup(y, x, n, BLOCK=1024, num_warps=8, grid=(1,))
    k._init_handles()                      # load it on the GPU (no-op without one)
    k.n_regs, k.n_spills, k.metadata.shared, k.metadata.num_warps
    k.asm["cu"], k.asm["ptx"], k.asm["cubin"]        # ("hip", "hsaco" on AMD)
    k[(programs, 1, 1)](y, x, n, 1024)               # launch it, every argument in order

Arrays may be device arrays, host arrays (NumPy, CPU tensors) or their dtypes alone (a
torch dtype, `MockTensor`): only their element types and alignment matter.  The target is
the device's (the arrays', else the current one) where there is a GPU, else CUDA (HIP
under a ROCm PyTorch) for the target's default architecture (sm_90, gfx90a), so warm-up
compiles on a machine without a GPU wherever NVRTC / hiprtc are installed.

What is known without a GPU: the binary and the source, `metadata` (shared memory,
warps, stages, target), and on CUDA `n_regs` / `n_spills` from ptxas's report, on HIP from
the code object's notes.  `_init_handles()` on a GPU loads the kernel and reads them from
the driver instead (as Triton does), with `n_max_threads`, `module` and `function`.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import namedtuple
from collections.abc import Mapping
from typing import Any, Callable

from tilecc.errors import OutOfResources
from tilecc.runtime import compiler
from tilecc.runtime.options import launch_arch
from tilecc.transpiler.target import resolve_target

GPUTarget = namedtuple("GPUTarget", ["backend", "arch", "warp_size"])
KernelMetadata = namedtuple("KernelMetadata", [
    "name", "hash", "target", "arch", "backend_name", "num_warps", "num_stages", "num_ctas",
    "shared", "debug", "maxnreg", "enable_fp_fusion", "warp_size"])
KernelSource = namedtuple("KernelSource", ["fn", "signature", "constexprs"])


class AsmDict(Mapping):
    """What Triton's `asm` holds, for tilecc: the generated source ("cu" / "hip"), the
    binary ("cubin" / "hsaco") and, on CUDA, the PTX, made by NVRTC when first read."""

    def __init__(self, entries: dict[str, Callable[[], Any]]):
        self._make = entries
        self._made: dict[str, Any] = {}

    def __getitem__(self, key: str):
        if key not in self._make:
            raise KeyError(f"{key!r}: tilecc's compiled kernels hold {', '.join(self._make)} "
                           "(Triton's IR levels ttir, ttgir, llir do not exist in tilecc)")
        if key not in self._made:
            self._made[key] = self._make[key]()
        return self._made[key]

    def __iter__(self):
        return iter(self._make)

    def __len__(self) -> int:
        return len(self._make)


class CompiledKernel:
    """One specialization of a kernel, compiled (Triton's `CompiledKernel`): what
    `kernel.warmup(...)` and every GPU launch `kernel[grid](...)` return.  Made once per
    loaded kernel at little cost: the hash, the compiler's report and the metadata are
    worked out when first read, the asm entries when first asked for.

    `name` is the binary's symbol, or what the kernel's `@jit(repr=f)` makes of the
    specialization (`f(proxy)`, `proxy.signature`: each parameter's Triton type, '*fp32',
    'i32', 'constexpr'...; `proxy.constants`: the constexprs and the ints specialized to
    1), as Triton names it.  `loaded`: the kernel a launch loaded (`_init_handles` reads
    it rather than loading again)."""

    def __init__(self, jit_fn, artifact: compiler.Artifact, options: dict[str, Any],
                 device: int | None, constexprs: dict[str, Any], loaded: Any = None):
        self._fn = jit_fn
        self._artifact = artifact
        self._options = dict(options)  # the launch options it was built with
        self._device = device
        self._loaded = loaded
        binary = artifact.binary
        self._built_for = built_for = resolve_target(artifact.target, binary.arch)  # sm_90a
        self.kernel = binary.data  # the cubin / code object
        signature = {s.name: _type_name(s) for s in artifact.specs}
        self.src = KernelSource(jit_fn, signature, constexprs)
        self.name = kernel_name(jit_fn, artifact)
        self.module = self.function = None
        # its bounds (a producer warpgroup's threads too: passes.warp_roles)
        self.n_max_threads = binary.threads or artifact.options.num_warps * built_for.warp_size
        entries = {built_for.source_suffix[1:]: lambda: artifact.source,  # cu, cubin...
                   built_for.binary_suffix[1:]: lambda: binary.data}
        if built_for.assembly_suffix:
            entries[built_for.assembly_suffix[1:]] = lambda: compiler.ptx_of(artifact)
        self.asm = AsmDict(entries)

    # read when first asked for (a launch returns this object: most callers read nothing)
    @functools.cached_property
    def hash(self) -> str:
        return hashlib.sha256(self.kernel).hexdigest()

    @functools.cached_property
    def _report(self) -> dict[str, Any]:
        return _report(self._artifact)

    @functools.cached_property
    def n_regs(self) -> int | None:
        return self._report["regs"]

    @functools.cached_property
    def n_spills(self) -> int | None:
        return self._report["spills"]

    @functools.cached_property
    def metadata(self) -> KernelMetadata:
        art, built_for = self._artifact, self._built_for
        opts = art.options
        return KernelMetadata(
            name=self.name, hash=self.hash,
            target=GPUTarget(art.target, built_for.arch_number, built_for.warp_size),
            arch=art.binary.arch, backend_name=art.target, num_warps=opts.num_warps,
            num_stages=opts.num_stages, num_ctas=1,
            shared=self._report["static_shared"] + art.binary.shared_bytes, debug=opts.debug,
            maxnreg=opts.maxnreg, enable_fp_fusion=opts.enable_fp_fusion,
            warp_size=built_for.warp_size)

    def __repr__(self) -> str:
        return (f"<CompiledKernel {self.name} for {self.metadata.arch}, "
                f"num_warps={self.metadata.num_warps}>")

    def _init_handles(self) -> None:
        """Load the kernel on the GPU and read its registers, spills and thread limit
        from the driver; without a GPU, keep what the compiler reported."""
        if self.module is not None:
            return
        from tilecc.runtime import launch

        try:
            with launch._gpu_required():
                self._load(launch)
        except Exception as e:
            if type(e).__name__ != "NoDeviceError":
                raise

    def _load(self, launch) -> None:
        art = self._artifact
        backend = art.target
        threads = art.binary.threads or self.metadata.num_warps * self.metadata.warp_size
        loaded = self._loaded
        if loaded is None:
            device = self._device if self._device is not None else \
                launch._current_device(backend)
            loaded = launch._BACKENDS[backend].load(art.binary, art.symbol, threads, device,
                                                    art.specs)
        if backend == "cuda":
            from tilecc.runtime import cuda_driver as cu

            handle = loaded.handle
            self.module, self.function = loaded.module, handle
            self.n_regs = cu.funcGetAttribute(4, handle)  # CU_FUNC_ATTRIBUTE_NUM_REGS
            self.n_spills = cu.funcGetAttribute(3, handle) // 4  # LOCAL_SIZE_BYTES
            self.n_max_threads = cu.funcGetAttribute(0, handle)  # MAX_THREADS_PER_BLOCK
            static = cu.funcGetAttribute(1, handle)  # SHARED_SIZE_BYTES
        else:
            hip = loaded.hip
            attrs = hip.hipFuncAttributes()
            hip.hipFuncGetAttributes(attrs, loaded.function)
            self.module, self.function = loaded.module, loaded.function
            self.n_regs, self.n_spills = attrs.numRegs, attrs.localSizeBytes // 4
            self.n_max_threads = attrs.maxThreadsPerBlock
            static = attrs.sharedSizeBytes
        self.metadata = self.metadata._replace(shared=static + art.binary.shared_bytes)
        if threads > self.n_max_threads:
            raise OutOfResources(threads, self.n_max_threads, "threads")

    def launch_metadata(self, grid, stream, *args):
        """Triton's data for its launch hooks, which tilecc does not have: None (as
        Triton's answer when no hook is set)."""
        return None

    def __getitem__(self, grid) -> Callable:
        """`k[grid](*args)`: launch this kernel with every argument of the kernel in
        order (constexprs too, as given to warmup), on the current stream or `stream`."""
        def runner(*args, stream=None):
            if stream is None:
                return self._fn[grid](*args, **self._options)
            with _on_stream(stream, args):
                return self._fn[grid](*args, **self._options)
        return runner


def warm_up(jit_fn, args: tuple, kwargs: dict) -> CompiledKernel:
    """Compile what `jit_fn[grid](*args, **kwargs)` would launch (`kernel.warmup`)."""
    import sys

    from tilecc.runtime import launch
    from tilecc.transpiler.specialize import ArrayInfo

    by_name, options = jit_fn.bind(args, dict(kwargs))
    given_arch = options.pop("arch", None)  # a launch's arch=, checked as a launch checks it
    specs, passed = jit_fn.specs_for(by_name)
    on_device = [a for a in passed if isinstance(a, ArrayInfo) and a.device in ("cuda", "rocm")]
    torch = sys.modules.get("torch")
    rocm = torch is not None and getattr(torch.version, "hip", None)
    backend = "hip" if any(a.device == "rocm" for a in on_device) or \
        (not on_device and rocm) else "cuda"
    device = on_device[0].device_id if on_device else None
    arch = None
    try:
        with launch._gpu_required():
            if device is None:
                device = launch._current_device(backend)
            arch = launch._device_arch(device, backend)
    except Exception as e:
        if type(e).__name__ != "NoDeviceError":
            raise
        device = None  # no GPU: the target's default architecture
    if given_arch is not None:
        arch = launch_arch(backend, given_arch, arch)
        options["arch"] = given_arch
    art = compiler.compile(jit_fn, specs, backend, compiler.resolve_options(
        jit_fn, **{k: v for k, v in options.items() if k != "arch"}, arch=arch))
    constexprs = {p.name: by_name[p.name] for p in jit_fn.params if p.is_constexpr}
    return CompiledKernel(jit_fn, art, options, device, constexprs)


def _type_name(spec) -> str:
    """A parameter's type as Triton's signatures spell it: '*fp32', 'i32', 'u64', 'fp32',
    'u1' (a bool), 'constexpr' (constexprs, None, and the ints specialized to 1)."""
    if spec.is_constexpr or spec.equals_one:
        return "constexpr"
    t = spec.type
    if t.is_ptr():
        return f"*{t.element_ty.short}"
    return "u1" if t.short == "i1" else t.short


SpecializationProxy = namedtuple("SpecializationProxy", ["constants", "signature"])


def kernel_name(jit_fn, artifact: compiler.Artifact) -> str:
    """The compiled kernel's name: `repr(proxy)` where the kernel has `@jit(repr=...)`
    (Triton's naming of a specialization), else the binary's symbol."""
    make = getattr(jit_fn, "_repr", None)
    if make is None:
        return artifact.symbol
    specs = artifact.specs
    proxy = SpecializationProxy(
        constants={s.name: 1 if s.equals_one else s.constexpr for s in specs
                   if s.is_constexpr or s.equals_one},
        signature={s.name: _type_name(s) for s in specs})
    return str(jit_fn.repr(proxy))


def _report(art) -> dict[str, Any]:
    """Registers, spills (4-byte words of local memory) and static shared memory, as the
    compiler reported them: ptxas's `-v` lines on CUDA, the code object's notes on HIP."""
    return _REPORTS[art.target](art.binary)


def _ptxas_report(binary) -> dict[str, Any]:
    def number(pattern: str) -> int | None:
        m = re.search(pattern, binary.log)
        return int(m.group(1)) if m else None
    regs = number(r"Used (\d+) registers")
    stack = number(r"(\d+) bytes stack frame")
    return {"regs": regs, "spills": None if stack is None else stack // 4,
            "static_shared": number(r"(\d+) bytes smem") or 0}


def _code_object_report(binary) -> dict[str, Any]:
    regs = _note_int(binary.data, b".vgpr_count")
    private = _note_int(binary.data, b".private_segment_fixed_size")
    return {"regs": regs, "spills": None if private is None else private // 4,
            "static_shared": _note_int(binary.data, b".group_segment_fixed_size") or 0}


_REPORTS = {"cuda": _ptxas_report, "hip": _code_object_report}  # by target


def _note_int(data: bytes, key: bytes) -> int | None:
    """An unsigned integer of the AMDGPU metadata note (MessagePack) after `key`."""
    i = data.find(key)
    if i < 0:
        return None
    at = i + len(key)
    head = data[at]
    if head < 0x80:  # positive fixint
        return head
    width = {0xcc: 1, 0xcd: 2, 0xce: 4, 0xcf: 8}.get(head)
    return int.from_bytes(data[at + 1:at + 1 + width], "big") if width else None


class _on_stream:
    """Make `stream` (a raw CUDA/HIP stream handle) current for one launch, through the
    framework of the arguments (torch's when a tensor is among them, else CuPy's)."""

    def __init__(self, stream: int, args: tuple):
        self.stream, self.args = stream, args

    def __enter__(self):
        if any(type(a).__module__.startswith("torch") for a in self.args):
            import torch

            self.ctx = torch.cuda.stream(torch.cuda.ExternalStream(self.stream))
        else:
            import cupy

            self.ctx = cupy.cuda.ExternalStream(self.stream)
        self.ctx.__enter__()

    def __exit__(self, *exc):
        return self.ctx.__exit__(*exc)
