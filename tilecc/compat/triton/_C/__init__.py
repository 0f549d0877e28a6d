"""`triton._C`: Triton's C++ extension.  Of it the compatibility mode gives only the BLAS
products that Triton's tutorials time their kernels against (`libtriton`); its compiler
bindings (MLIR, LLVM, passes) are refused (tilecc.compat.refused)."""
