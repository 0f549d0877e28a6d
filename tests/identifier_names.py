"""Python identifiers that C++ cannot take as they are, for tests/test_identifiers.py:
C++20 keywords and alternative tokens, CUDA / HIP built-ins, types and macros, math
functions, tilecc's own header and generated names, reserved underscore forms and
non-ASCII names.  Every one is a legal Python name (Python's keywords are left out)."""

from __future__ import annotations

import keyword

CXX_KEYWORDS = """
alignas alignof and_eq asm atomic_cancel atomic_commit atomic_noexcept auto bitand bitor bool
case catch char char8_t char16_t char32_t co_await co_return co_yield compl concept const
consteval constexpr constinit const_cast decltype default delete do double dynamic_cast enum
explicit export extern false final float friend goto inline int long module mutable namespace
new noexcept not_eq nullptr operator or_eq override private protected public reflexpr register
reinterpret_cast requires short signed sizeof static static_assert static_cast struct switch
synchronized template this thread_local throw true typedef typeid typename union unsigned
using virtual void volatile wchar_t xor xor_eq
""".split()

CUDA_HIP = """
threadIdx blockIdx blockDim gridDim warpSize printf malloc free memcpy memset NULL nullptr_t
INFINITY NAN HUGE_VALF M_PI size_t ptrdiff_t half half2 float2 float4 int2 int4 uint uint4
dim3 char4 double2 longlong2 uchar ushort ulong clock clock64 atomicAdd atomicCAS atomicMax
syncthreads main std cuda hip nvcuda cudaStream_t hipStream_t hipLaunchKernelGGL
HIP_KERNEL_NAME HIP_DYNAMIC_SHARED HIP_VERSION_MAJOR FP_FAST_FMAF CUDART_VERSION texture
linux unix errno assert_ EOF int32_t uint64_t intptr_t make_float2 A7
""".split()

MATH = """
sin cos tan exp exp2 exp10 expf log log2 log10 logf pow powf sqrt sqrtf rsqrt rsqrtf cbrt
fabs fabsf floor ceil trunc round rint fma fmaf fmin fmax fmod min max abs erf erfc erfinv
lgamma tgamma j0 j1 jn y0 y1 yn sinpi cospi sincos hypot norm rnorm normcdf nan ldexp frexp
modf copysign signbit isnan isinf isfinite fdividef sinf cosf tanhf llrint lround
""".split()

TILECC = """
tc tilecc TC_DEVICE TC_HIP TC_WARP_SIZE TC_DEVICE_ASSERT Blocked0 Blocked1 Sliced0 r v k o j
chunk acc acc0 acc1 acc_other acc0_other lane_mask warp line line0 step first buffer combine
result smem dynamic_smem partial0 out0 out1 kThreads stream grid cdiv aligned16 detail
launch same row col g q s t kk mi ni a_frag b_frag a_base b_base b_desc0 x_sum x_tile
""".split()

UNDERSCORES = """
_ _x _X __x x__y _Foo __init ___ main_ int_ int_1 tc_ x_ xor_ this_ __CUDA_ARCH__ __HIP__
__global__ __shared__ __half _Complex __CUDACC_RTC__ _int_ __syncthreads
""".split()

# differ only in case from a reserved name, or from each other
CASES = """
Int INT Float Tc TC Min MAX Auto Printf THIS New
""".split()

NON_ASCII = """
αβ 变量 xé café π Σ ñ_count λx ｘｙ ℌ
""".split()

ALL = [n for n in CXX_KEYWORDS + CUDA_HIP + MATH + TILECC + UNDERSCORES + CASES + NON_ASCII
       if n.isidentifier() and not keyword.iskeyword(n)]


# --- kernels over these names, written as a module (tilecc reads kernels' source) ---------

def _chunks(names: list[str], size: int) -> list[list[str]]:
    return [names[i:i + size] for i in range(0, len(names), size)]


PARAM_CHUNK = 64  # parameters per kernel


def module_source() -> str:
    """`locals_kernel` (every name a block local), `roles_kernel` (names as scalars, loop
    variables, loop-carried values, reductions and helpers), `params_<i>` (every name a
    parameter) and `KERNELS`: one kernel named after each name."""
    out = ["import tilecc", "import tilecc.language as tl", "",
           "jit_ = tilecc.jit  # kernels below are named `tilecc` and `tc` too", "", ""]
    out += ["@tilecc.jit", "def locals_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):",
            "    offs = tl.arange(0, BLOCK)", "    mask = offs < n",
            "    x = tl.load(x_ptr + offs, mask=mask, other=0.0)", "    total = x * 0.0"]
    for i, name in enumerate(ALL):
        out += [f"    {name} = x + {i}.0", f"    total += {name}"]
    out += ["    tl.store(out_ptr + offs, total, mask=mask)", "", ""]
    # helpers named like C++ and CUDA names, inlined into roles_kernel
    out += ["@tilecc.jit", "def this(a):", "    return a * 2.0", "", "",
            "@tilecc.jit", "def sinf(a):", "    new = a + 1.0", "    return new", "", "",
            "@tilecc.jit", "def αβ(int, float):", "    tc = int * float", "    return tc", "",
            "",
            "@tilecc.jit", "def roles_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):",
            "    this_ = tl.program_id(0)",
            "    αβ_ = this_ * BLOCK + tl.arange(0, BLOCK)",
            "    int = αβ_ < n",
            "    r = tl.load(x_ptr + αβ_, mask=int, other=0.0)",
            "    acc = tl.sum(r, axis=0)",
            "    v = tl.max(r, axis=0)",
            "    tc = acc * 0.0",
            "    for new in range(3):",
            "        tc += acc * new",
            "    k = this(r) + sinf(r) + αβ(r, 3.0)",
            "    row = tl.cumsum(r, axis=0)",
            "    tl.store(out_ptr + αβ_, k + tc + v + row, mask=int)", "", ""]
    for c, names in enumerate(_chunks(ALL, PARAM_CHUNK)):
        out += ["@tilecc.jit", f"def params_{c}(out_ptr, {', '.join(names)}):",
                "    total = 0"]
        for i, name in enumerate(names):
            out.append(f"    total += {name} * {i + 1}")
        out += ["    tl.store(out_ptr, total)", "", ""]
    # in a function: module-level definitions would replace the helpers above
    out += ["KERNELS = {}", "", "", "def _define_kernels():"]
    for i, name in enumerate(ALL):
        out += [f"    def {name}(out_ptr):", f"        tl.store(out_ptr, {i}.0)",
                f"    KERNELS[{name!r}] = jit_({name})", ""]
    out += ["", "_define_kernels()"]
    return "\n".join(out) + "\n"


def param_chunks() -> list[list[str]]:
    return _chunks(ALL, PARAM_CHUNK)


def load_module(directory):
    """Write the module into `directory` and import it."""
    import importlib.util
    import os

    path = os.path.join(str(directory), "identifier_kernels.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(module_source())
    spec = importlib.util.spec_from_file_location("identifier_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
