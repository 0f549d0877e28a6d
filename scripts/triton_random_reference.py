"""Reference numbers of Triton's random functions, for tests/test_random.py.

Runs the cases of tests/triton_random_kernels.py under Triton's interpreter and writes
every output's bits to tests/data/triton_random_reference.json, so that the tests check
tilecc against Triton bit for bit without Triton installed.  Run it where Triton and
torch (CPU) are installed, after changing the cases:

    TRITON_INTERPRET=1 python scripts/triton_random_reference.py
"""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, os.pardir, "tests")
OUT = os.path.join(TESTS, "data", "triton_random_reference.json")


def bits(a: np.ndarray) -> list[int]:
    """An array's elements as unsigned integers of their width (floats by their bits)."""
    return [int(x) for x in a.view(f"u{a.itemsize}")]


def main() -> None:
    if os.environ.get("TRITON_INTERPRET") != "1":
        sys.exit("run with TRITON_INTERPRET=1 (Triton's interpreter on torch CPU tensors)")
    import torch
    import triton

    sys.path.insert(0, TESTS)
    import triton_random_kernels as K

    results = {"triton": triton.__version__, "cases": {}}
    for case in K.CASES:
        name, kernel, scalars, arrays, constexprs, outputs, out_dtype = case
        out = torch.zeros(K.output_size(case), dtype=getattr(torch, out_dtype))
        inputs = {k: torch.from_numpy(v) for k, v in K.case_arrays(case).items()}
        values = {**scalars, **inputs}
        getattr(K, kernel)[(1,)](out, *[values[a] for a in K.argument_order(case)],
                                 **constexprs)
        results["cases"][name] = bits(out.numpy())
    with open(OUT, "w") as f:
        json.dump(results, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(results['cases'])} cases to {os.path.relpath(OUT)}")


if __name__ == "__main__":
    main()
