"""Property-test tilecc kernels against NumPy with Hypothesis — on the interpreter
everywhere, and on the GPU where there is one.  See docs/testing.md.

    import tilecc.testing as tt

    add = tt.Launch(add_kernel,
                    args=lambda x, y: dict(x_ptr=x, y_ptr=y, out_ptr=tt.out_like(x),
                                           n_elements=x.size, BLOCK_SIZE=64),
                    grid=lambda meta: (tilecc.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),),
                    reference=lambda x, y: x + y)

    n, dt = st.shared(tt.sizes(64), key="n"), st.shared(tt.float_dtypes(), key="dt")

    @given(x=tt.arrays(dt, n), y=tt.arrays(dt, n))
    def test_add(x, y):
        add.check(x=x, y=y)

Parts: strategies (`sizes`, `shapes`, `*_dtypes`, `elements`, `arrays`), `Launch` with
`out` / `out_like` / `inout`, comparisons (`tolerance`, `Tolerance`, `assert_close`,
`Mismatch`), devices (`gpu_available`), and a pytest plugin (tilecc.testing.pytest_plugin,
loaded automatically where tilecc is installed: the `gpu` marker, the `tilecc_cache_dir`
fixture), and Hypothesis settings profiles (`tilecc.testing.profiles`: "tilecc", for property
tests whose first example compiles a kernel, and "tilecc-ci", "tilecc-dev", "tilecc-gpu").

Only the strategies need Hypothesis: they are imported on first use, so that comparisons,
`Launch.check` and the pytest plugin work where Hypothesis is not installed.
"""

from tilecc.errors import install_hint
from tilecc.testing.compare import (Comparison, Mismatch, assert_close, compare,
                                    format_array, is_floating)
from tilecc.testing.devices import gpu_available, gpu_frameworks
from tilecc.testing.launch import InOut, Launch, Out, default_backends, inout, out, out_like
from tilecc.testing.tolerances import ELEMENTWISE, EXACT, Tolerance, tolerance

__all__ = [
    "Launch", "out", "out_like", "inout", "Out", "InOut", "default_backends",
    "sizes", "shapes", "float_dtypes", "integer_dtypes", "kernel_dtypes", "float8_dtypes",
    "FLOAT8", "elements", "arrays", "LAYOUTS", "element_strides",
    "Tolerance", "tolerance", "ELEMENTWISE", "EXACT",
    "compare", "assert_close", "Comparison", "Mismatch", "format_array", "is_floating",
    "gpu_available", "gpu_frameworks",
]

_STRATEGIES = ("sizes", "shapes", "float_dtypes", "integer_dtypes", "kernel_dtypes",
               "float8_dtypes", "FLOAT8", "elements", "arrays", "LAYOUTS", "element_strides")


def __getattr__(name: str):
    """The strategies, imported on first use (they need Hypothesis; nothing else does)."""
    if name not in _STRATEGIES:
        raise AttributeError(f"module 'tilecc.testing' has no attribute {name!r}")
    try:
        from tilecc.testing import strategies
    except ImportError as e:
        if (e.name or "").split(".")[0] != "hypothesis":
            raise
        raise ImportError(f"tilecc.testing.{name} needs Hypothesis: "
                          f"{install_hint('testing')}", name="hypothesis") from None
    return getattr(strategies, name)
