"""The names of Triton's that tilecc refuses, each with why and what to use instead.

Everything else Triton 3.6 offers (`tests/data/triton_surface.json`, recorded by
`scripts/triton_surface.py`) the compatibility mode provides with Triton's parameters;
`tests/test_triton_surface.py` holds the two to that.  What is refused is Triton's
compiler: its IR and MLIR bindings, its backends, launchers and caches, the machinery of
its frontend.  While the mode is installed, reaching a refused name — importing a module,
reading a module's attribute or a class's — raises an error that gives the reason.

A key is a dotted Triton name: a module (everything under it is refused with it), a
module's attribute, or a class's member (`triton.runtime.jit.JITFunction.device_caches`).
"""

from __future__ import annotations

from tilecc.compat.surface import Refusal

_COMPILER = Refusal(
    "Triton's compiler (its IR, PTX/AMDGCN and cubins) is not part of tilecc",
    "read the CUDA/HIP tilecc writes with kernel.source() or `tilecc emit`, its binary with "
    "kernel.compile(), or compile a launch with kernel.warmup(*args, grid=...)")
_MLIR = Refusal("it is a handle on Triton's MLIR IR, which tilecc does not have",
                "tilecc's tile IR is kernel.ir(signature)")
_FRONTEND = Refusal("it is machinery of Triton's compiler frontend, which tilecc does not "
                    "use (tilecc parses kernels with its own frontend)",
                    "kernels use the `tl` functions and Python's operators")
_EXTERN = Refusal("it declares functions of an external LLVM bitcode library for Triton's "
                  "linker, and tilecc has no link step",
                  "use tl.extra.libdevice's functions or tl.inline_asm_elementwise")
_CACHE = Refusal("Triton's cache of compiled kernels (file, remote and Redis managers, its "
                 "dump and override directories) is not tilecc's",
                 "tilecc caches in $TILECC_CACHE_DIR (`tilecc cache list`, "
                 "tilecc.runtime.cache)")
_LAUNCHER = Refusal("it belongs to Triton's launcher (its argument binder, specialization "
                    "keys and per-device kernel caches)",
                    "launch with kernel[grid](*args); kernel.warmup(*args, grid=...) "
                    "compiles without launching")
_ASYNC = Refusal("Triton's asynchronous compile mode hands its compiler a thread pool; tilecc "
                 "compiles the candidates of an autotuner in parallel by itself")

_TUPLE = Refusal("Triton's tuple values are objects of its compiler frontend",
                 "kernels take, build and return plain Python tuples")
_VOID = Refusal("every kernel value in tilecc has an element type (Triton's void types the "
                "results of calls that return nothing)")

REFUSED: dict[str, Refusal] = {
    # whole modules
    "triton.compiler": _COMPILER,
    "triton.backends": Refusal("tilecc has no Triton backends: it renders CUDA or HIP source "
                               "and compiles it with NVRTC or hiprtc"),
    "triton._C": Refusal("Triton's C++ extension (MLIR, LLVM) is not part of tilecc",
                         "of it the mode gives the cuBLASLt / hipBLASLt products its "
                         "tutorials compare with: triton._C.libtriton.nvidia.cublas.CublasLt, "
                         ".amd.hipblas.HipblasLt"),
    "triton.knobs": Refusal("Triton's knobs configure its compiler",
                            "tilecc's options are the launch options (num_warps, num_stages, "
                            "debug, maxnreg, enable_fp_fusion) and TILECC_* variables"),
    "triton.runtime.cache": _CACHE,
    "triton.runtime.build": Refusal("it builds the C extensions of Triton's launchers",
                                    "tilecc launches through the CUDA driver or HIP"),
    "triton.profiler.hooks": Refusal(
        "Triton's profiler hooks attach to Triton's launcher (knobs.runtime.launch_enter_hook)",
        "tilecc's triton.profiler records every launch of a session started with "
        "hook='triton' by itself"),
    "triton.profiler.mode": Refusal(
        "the modes of Triton's profiler (PC sampling, in-kernel instrumentation) need "
        "Triton's compiler and CUPTI",
        "tilecc's profiler times launches and scopes with GPU events"),
    "triton.tools.disasm": Refusal("it disassembles Triton's cubins",
                                   "kernel.compile() gives tilecc's cubin, kernel.source() "
                                   "its CUDA; `tilecc export` writes C++ with a launcher"),
    "triton.tools.compile": Refusal("Triton's ahead-of-time compiler",
                                    "`tilecc export` writes a kernel as C++ with a launcher"),
    "triton.tools.link": Refusal("it links the C of Triton's ahead-of-time compiler",
                                 "`tilecc export` writes a kernel as C++ with a launcher"),
    # triton
    "triton.compile": _COMPILER,
    "triton.AsyncCompileMode": _ASYNC,
    "triton.FutureKernel": _ASYNC,
    # triton.runtime
    "triton.runtime.RemoteCacheBackend": _CACHE,
    "triton.runtime.RedisRemoteCacheBackend": _CACHE,
    # triton.runtime.jit
    "triton.runtime.jit.DependenciesFinder": Refusal(
        "Triton's hasher of the code and globals a kernel depends on",
        "kernel.cache_key is tilecc's hash of the same"),
    "triton.runtime.jit.JitFunctionInfo": Refusal("it describes kernels to Triton's compiler "
                                                   "hooks (knobs), which tilecc does not have"),
    "triton.runtime.jit.compute_cache_key": _LAUNCHER,
    "triton.runtime.jit.create_function_from_signature": _LAUNCHER,
    "triton.runtime.jit.mangle_type": _LAUNCHER,
    "triton.runtime.jit.serialize_specialization_data": _LAUNCHER,
    "triton.runtime.jit.convert_to_tuple_if_list": _LAUNCHER,
    # triton.runtime.jit.JITFunction
    "triton.runtime.jit.JITFunction.ASTSource": _COMPILER,
    "triton.runtime.jit.JITFunction.CompiledKernel": _COMPILER,
    "triton.runtime.jit.JITFunction.create_binder": _LAUNCHER,
    "triton.runtime.jit.JITFunction.device_caches": _LAUNCHER,
    "triton.runtime.jit.JITFunction.preload": Refusal(
        "it loads Triton's serialized specialization data into Triton's kernel cache",
        "tilecc's disk cache ($TILECC_CACHE_DIR) keeps compiled kernels between processes"),
    "triton.runtime.jit.JITFunction.used_global_vals": Refusal(
        "Triton's record of the globals a kernel read, which it checks at each launch",
        "tilecc hashes the globals a kernel reads into its cache key (kernel.cache_key)"),
    # the compiled kernel
    "triton.compiler.compiler.CompiledKernel.run": _LAUNCHER,
    "triton.compiler.compiler.CompiledKernel.packed_metadata": _LAUNCHER,
    "triton.compiler.compiler.CompiledKernel.metadata_group": Refusal(
        "the files of Triton's cache entry for the kernel",
        "kernel.asm holds tilecc's source and binary"),
    # triton.language
    "triton.language.core.base_type": _FRONTEND,
    "triton.language.core.base_value": _FRONTEND,
    "triton.language.core.binary_op_type_legalization": _FRONTEND,
    "triton.language.core.check_bit_width": _FRONTEND,
    "triton.language.core.builtin_max": _FRONTEND,
    "triton.language.core.builtin_min": _FRONTEND,
    "triton.language.core.is_negative_zero": _FRONTEND,
    "triton.language.core.TRITON_BUILTIN": _FRONTEND,
    "triton.language.core.slice": _FRONTEND,
    "triton.language.core.slice_type": _FRONTEND,
    "triton.language.slice": _FRONTEND,
    "triton.language.core.tuple_type": _FRONTEND,
    "triton.language.tuple": _TUPLE,
    "triton.language.core.tuple": _TUPLE,
    "triton.language.void": _VOID,
    "triton.language.core.void": _VOID,
    "triton.language.core.tensor_descriptor_base": _FRONTEND,
    "triton.language.core.tensor_descriptor_base_type": _FRONTEND,
    "triton.language.core.tensor_descriptor_type": _FRONTEND,
    "triton.language.core.dispatch": _EXTERN,
    "triton.language.core.extern": _EXTERN,
    "triton.language.core.extern_elementwise": _EXTERN,
    "triton.language.standard.sort_impl": _FRONTEND,
    "triton.language.target_info": Refusal(
        "Triton's queries of the compile target from inside kernels read its compiler's "
        "options", "branch on the device in the host code and pass a tl.constexpr"),
    "triton.language.core.dtype.to_ir": _MLIR,
    "triton.language.core.tensor.handle": _MLIR,
    "triton.language.core.tensor_descriptor.handle": _MLIR,
    # triton.testing
    "triton.testing.cuda_memcheck": Refusal(
        "a helper of Triton's own test suite (it reruns a pytest test under cuda-memcheck)",
        "run the test under `compute-sanitizer pytest ...`"),
}


def refusal_of(path: str) -> Refusal | None:
    """The refusal of `path` or of a module that holds it."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        hit = REFUSED.get(".".join(parts[:i]))
        if hit is not None:
            return hit
    return None


class RefusedAttribute:
    """A refused member of a class: reading it raises AttributeError with the reason (so
    `hasattr` answers False, as for a member that is not there)."""

    def __init__(self, path: str, refusal: Refusal):
        self.text = refusal.message(path)

    def __get__(self, obj, owner=None):
        raise AttributeError(self.text)
