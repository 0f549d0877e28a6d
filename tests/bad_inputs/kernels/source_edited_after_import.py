# result: ok
# A kernel file edited on disk after Python imported it: what compiles (and runs on the
# interpreter) is the function Python imported, the disk cache keys on it, and an error's
# caret shows its text.

import importlib.util
import os
import sys
import tempfile

import numpy as np

KERNEL = '''
import tilecc
import tilecc.language as tl


@tilecc.jit
def scale(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)


@tilecc.jit
def broken(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.sine(offs))
'''


def run():
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "user_kernels.py")
    with open(path, "w") as f:
        f.write(KERNEL)
    spec = importlib.util.spec_from_file_location("user_kernels", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["user_kernels"] = module
    spec.loader.exec_module(module)
    from tilecc.runtime.cache import fingerprint

    key = fingerprint(module.scale.fn)  # what the disk cache keys on
    with open(path, "w") as f:  # edited after the import: a different body, lines moved
        f.write("\n\n" + KERNEL.replace("* 2.0", "* 3.0").replace("tl.sine(offs)", "offs"))
    os.utime(path, (1, 1))  # the edit must be seen even where mtimes are coarse

    assert fingerprint(module.scale.fn) == key  # the imported function's, not the file's
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    module.scale.interpret[(1,)](x, out, BLOCK=16)
    assert (out == x * 2).all(), out
    src = module.scale.source("*fp32,*fp32", BLOCK=16)
    assert "2.0f" in src and "3.0f" not in src, src
    try:
        module.broken.source("*fp32", BLOCK=16)
    except Exception as e:
        text = str(e)
        assert f"{path}:15:28 in broken:" in text and "tl.sine(offs)" in text, text
    else:
        raise AssertionError("the imported `broken` calls tl.sine: it must not compile")
