"""`triton.tools` under the compatibility mode: the host-side tensor descriptor and the
microscaling helpers (`triton.tools.mxfp`)."""

from tilecc.compat.triton.tools import mxfp, tensor_descriptor  # noqa: F401
