# raises: CompilationError
# error: NVRTC, which compiles CUDA source, is not installed or does not load (no libnvrtc.so found (pip install nvidia-cuda-nvrtc); CuPy, the other way to NVRTC, is not installed): pip install 'nvidia-cuda-nvrtc>=13' (in a checkout of tilecc: pip install '.[nvrtc]')

import tilecc
import tilecc.language as tl


@tilecc.jit
def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def run():
    # A machine without the nvidia-cuda-nvrtc wheel, the CUDA toolkit or CuPy: no libnvrtc
    # is found and CuPy does not import.
    import builtins

    from tilecc.runtime import nvrtc_location

    nvrtc_location.nvrtc_files = lambda: []
    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name.startswith("cupy"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    builtins.__import__ = no_cupy
    copy.compile("*fp32,*fp32", BLOCK=16)
