# The kernels this project exports, and how: shared by the CUDA project (this directory)
# and the HIP one (hip/).  Each header is regenerated whenever its Python source, or
# tilecc itself, changes.
#
#   TILECC_PYTHON   the Python interpreter that has tilecc (default: python3 on PATH)

set(TILECC_PYTHON "python3" CACHE STRING "Python interpreter with tilecc importable")
get_filename_component(TILECC_EXAMPLES_DIR ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
get_filename_component(TILECC_REPO_DIR ${TILECC_EXAMPLES_DIR}/.. ABSOLUTE)
set(TILECC_EXPORT_DIR ${CMAKE_CURRENT_BINARY_DIR}/tilecc)
# The tilecc of this repository comes first, whatever the interpreter has installed.
if(DEFINED ENV{PYTHONPATH} AND NOT "$ENV{PYTHONPATH}" STREQUAL "")
  set(TILECC_PYTHONPATH "${TILECC_REPO_DIR}:$ENV{PYTHONPATH}")
else()
  set(TILECC_PYTHONPATH "${TILECC_REPO_DIR}")
endif()
file(GLOB_RECURSE TILECC_PACKAGE_FILES CONFIGURE_DEPENDS
     ${TILECC_REPO_DIR}/tilecc/*.py ${TILECC_REPO_DIR}/tilecc/*.j2 ${TILECC_REPO_DIR}/tilecc/*.h)

# tilecc_export(TARGET NAME HEADERS_VAR SOURCE KERNEL... ARGS ...): one header, NAME.cuh or
# NAME.hip.hpp, from kernels of one Python file; ARGS are the rest of `tilecc export`'s.
function(tilecc_export target name headers_var source)
  cmake_parse_arguments(ARG "" "" "KERNELS;ARGS" ${ARGN})
  if(target STREQUAL "hip")
    set(header ${TILECC_EXPORT_DIR}/${name}.hip.hpp)
  else()
    set(header ${TILECC_EXPORT_DIR}/${name}.cuh)
  endif()
  set(refs)
  foreach(kernel IN LISTS ARG_KERNELS)
    list(APPEND refs ${source}:${kernel})
  endforeach()
  add_custom_command(
    OUTPUT ${header}
    COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${TILECC_PYTHONPATH}"
            ${TILECC_PYTHON} -m tilecc export ${refs} --target ${target} --name ${name}
            ${ARG_ARGS} -o ${TILECC_EXPORT_DIR}
    DEPENDS ${source} ${TILECC_PACKAGE_FILES}
    COMMENT "tilecc export ${name} (${target})"
    VERBATIM)
  set(${headers_var} ${${headers_var}} ${header} PARENT_SCOPE)
endfunction()

function(tilecc_export_kernels target headers_var)
  set(headers)
  # Vector add, fp32: 16-byte aligned (vectorized, n % 16 == 0 or not) and any-pointer
  # versions; the launcher picks per call.  Grid derived: cdiv(n_elements, BLOCK_SIZE).
  tilecc_export(${target} vector_add headers ${TILECC_EXAMPLES_DIR}/vector_add.py
    KERNELS add_kernel
    ARGS --signature "*fp32:16,*fp32:16,*fp32:16,i32:16,1024"
         --signature "*fp32:16,*fp32:16,*fp32:16,i32,1024"
         --signature "*fp32,*fp32,*fp32,i32,1024")
  # SiLU-and-multiply in fp16 (aligned only) and fp32: two overloads of one launcher.
  # The grid is given explicitly here, as Triton's AOT compiler takes it.
  tilecc_export(${target} fused_elementwise headers ${TILECC_EXAMPLES_DIR}/fused_elementwise.py
    KERNELS silu_mul_kernel
    ARGS --signature "*fp16:16,*fp16:16,*fp16:16,i32,2048"
         --signature "*fp32:16,*fp32:16,*fp32:16,i32,1024"
         --signature "*fp32,*fp32,*fp32,i32,1024"
         --grid "(n_elements + BLOCK_SIZE - 1) / BLOCK_SIZE,1,1" --num-warps 8)
  # Row softmax, fp32, one program per row.  The kernel has no row count, so the launcher
  # gets one for the grid only (--grid-arg n_rows, after the kernel's own arguments).
  # BLOCK_SIZE is fixed at 1024: rows of up to 1024 columns (a wider row needs another
  # specialization, e.g. 2048 or 4096 with --num-warps 8, exported under another --name).
  tilecc_export(${target} softmax headers ${TILECC_EXAMPLES_DIR}/softmax.py
    KERNELS softmax_kernel
    ARGS --signature "*fp32:16,*fp32:16,i32,i32,i32,1024"
         --signature "*fp32,*fp32,i32,i32,i32,1024"
         --grid "n_rows,1,1" --grid-arg n_rows --num-warps 4)
  # Tiled GEMM, fp16, C = leaky_relu(A @ B) for row-major matrices whose sizes and row
  # strides are multiples of 16 (16-byte vectors); 128 x 128 x 32 tiles, grouped program
  # order.  The tl.dot operand stages use dynamic shared memory, which the launcher gives.
  tilecc_export(${target} matmul headers ${TILECC_EXAMPLES_DIR}/matmul.py
    KERNELS matmul_kernel
    ARGS --signature "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1,128,128,32,8,'leaky_relu'"
         --grid "cdiv(M, 128) * cdiv(N, 128),1,1" --num-warps 4)
  set(${headers_var} ${headers} PARENT_SCOPE)
endfunction()
