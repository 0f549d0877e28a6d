"""`triton.errors` under the compatibility mode."""

# Triton's base of its errors.  tilecc's errors derive from Exception (and some from
# ValueError / RuntimeError, as Python's own would), so the base that catches them all is
# Exception itself.
TritonError = Exception
