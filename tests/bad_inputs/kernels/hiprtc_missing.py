# raises: CompilationError
# error: hiprtc, which compiles HIP source, is not installed or does not load (hip-python is not installed): install ROCm's hiprtc library, and pip install 'hip-python==6.2.0.499.16' (in a checkout of tilecc: pip install '.[hip]')

import tilecc
import tilecc.language as tl


@tilecc.jit
def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def run():
    # A machine without hip-python: `import hip` fails.
    import builtins

    real_import = builtins.__import__

    def no_hip(name, *args, **kwargs):
        if name == "hip" or name.startswith("hip."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    builtins.__import__ = no_hip
    copy.compile("*fp32,*fp32", target="hip", BLOCK=16)
