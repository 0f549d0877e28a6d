# raises: builtins.TypeError
# error: tilecc.jit needs a function defined with `def` (a lambda, at {file}:8, has no statements to compile): write the kernel as `def`

import tilecc


def run():
    tilecc.jit(lambda x_ptr: None)
