"""tl.inline_asm_elementwise: Triton's operand packing and constraint checks, the C++ inline
assembly it becomes (PTX through NVRTC, GCN through hiprtc), the interpreter's refusal,
and GPU runs against NumPy."""

from __future__ import annotations

import linecache

import numpy as np
import pytest

import tilecc
import tilecc.language as tl
from tilecc.errors import CompilationError, InterpreterError
from tilecc.transpiler.render_asm import cxx_asm_text

try:
    from conftest_compilers import require_cuda_compiler, require_hip_compiler
    from test_compile_kernels import assert_clean_compile
except ImportError:  # tests/ imported as a package
    from tests.conftest_compilers import require_cuda_compiler, require_hip_compiler
    from tests.test_compile_kernels import assert_clean_compile


@tilecc.jit
def u8_max_kernel(A, B, C, D, BLOCK: tl.constexpr):
    """Triton's documentation example: four uint8 in one register, two outputs."""
    a = tl.load(A + tl.arange(0, BLOCK))
    b = tl.load(B + tl.arange(0, BLOCK))
    (c, d) = tl.inline_asm_elementwise(
        asm="""
        {
            .reg .b8 tmp<4>;
            mov.b32 {tmp0, tmp1, tmp2, tmp3}, $8;
            cvt.u32.u8 $0, tmp0;
            cvt.u32.u8 $1, tmp1;
            cvt.u32.u8 $2, tmp2;
            cvt.u32.u8 $3, tmp3;
        }
        cvt.rn.f32.s32 $4, $0;
        cvt.rn.f32.s32 $5, $1;
        cvt.rn.f32.s32 $6, $2;
        cvt.rn.f32.s32 $7, $3;
        max.f32 $4, $4, $9;
        max.f32 $5, $5, $10;
        max.f32 $6, $6, $11;
        max.f32 $7, $7, $12;
        """,
        constraints="=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r",
        args=[a, b], dtype=(tl.int32, tl.float32), is_pure=True, pack=4)
    tl.store(C + tl.arange(0, BLOCK), c)
    tl.store(D + tl.arange(0, BLOCK), d)


@tilecc.jit
def half2_add_kernel(X, Y, OUT, n, BLOCK: tl.constexpr):
    """Two fp16 per register (pack=2): one add.f16x2 per pair; a scalar operand broadcast."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    y = tl.load(Y)
    z = tl.inline_asm_elementwise("add.rn.f16x2 $0, $1, $2;", "=r,r,r", [x, y],
                                  dtype=tl.float16, is_pure=True, pack=2)
    tl.store(OUT + offs, z, mask=offs < n)


@tilecc.jit
def lane_kernel(OUT, X, BLOCK: tl.constexpr):
    """A side effect-free read of %laneid (PTX's own `%`), not pure; `f` operands."""
    offs = tl.arange(0, BLOCK)
    lane = tl.inline_asm_elementwise("mov.u32 $0, %laneid;", "=r,r", [offs], dtype=tl.int32,
                                     is_pure=False, pack=1)
    x = tl.load(X + offs)
    twice = tl.inline_asm_elementwise("add.f32 $0, $1, $1;", "=f,f", [x], dtype=tl.float32,
                                      is_pure=True, pack=1)
    tl.store(OUT + offs, lane.to(tl.float32) * 1000 + twice)


@tilecc.jit
def gcn_add_kernel(X, Y, OUT, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    z = tl.inline_asm_elementwise("v_add_u32 $0, $1, $2", "=v,v,v",
                                  [tl.load(X + offs), tl.load(Y + offs)], dtype=tl.int32,
                                  is_pure=True, pack=1)
    tl.store(OUT + offs, z)


def test_asm_text_takes_cxx_operand_syntax() -> None:
    assert cxx_asm_text("mov.u32 $0, %laneid;") == '"mov.u32 %0, %%laneid;"'
    assert cxx_asm_text("\n    a $1, $10;\n    b $$;\n") == '"a %1, %10;\\n"\n    "b $;"'


def test_triton_example_packs_as_triton_does() -> None:
    src = u8_max_kernel.source("*u8:16,*fp32:16,*i32:16,*fp32:16,1024")
    assert "asm(" in src and "asm volatile" not in src  # is_pure
    assert '"r"(tc::bitcast<unsigned int>(tc::Vec<unsigned char, 4>{{a[r], a[r + 1]' in src
    assert src.count('"=r"(') == 8 and "mov.b32 {tmp0, tmp1, tmp2, tmp3}, %8;" in src
    assert "for (int r = 0; r < 8; r += 4)" in src


def test_half2_packing_and_broadcast_scalar() -> None:
    src = half2_add_kernel.source("*fp16:16,*fp16:16,*fp16:16,i32,256")
    assert "tc::Vec<tc::half, 2>{{x[r], x[r + 1]}}" in src
    assert "tc::Vec<tc::half, 2>{{y, y}}" in src
    assert "tc::bitcast<tc::Vec<tc::half, 2>>(asm_out)" in src


def test_volatile_and_float_operands() -> None:
    src = lane_kernel.source("*fp32:16,*fp32:16,64")
    assert 'asm volatile("mov.u32 %0, %%laneid;"' in src
    assert '"=f"(asm_out' in src and '"f"(x[r])' in src


@pytest.mark.parametrize("kernel,signature,target,arch", [
    (u8_max_kernel, "*u8:16,*fp32:16,*i32:16,*fp32:16,1024", "cuda", "sm_80"),
    (u8_max_kernel, "*u8:16,*fp32:16,*i32:16,*fp32:16,1024", "cuda", "sm_90"),
    (half2_add_kernel, "*fp16:16,*fp16:16,*fp16:16,i32,256", "cuda", "sm_80"),
    (half2_add_kernel, "*fp16:16,*fp16:16,*fp16:16,i32,2", "cuda", "sm_90"),  # regs < pack
    (lane_kernel, "*fp32:16,*fp32:16,64", "cuda", "sm_80"),
    (gcn_add_kernel, "*i32:16,*i32:16,*i32:16,256", "hip", "gfx90a"),
], ids=["u8max-sm80", "u8max-sm90", "half2-sm80", "half2-tiny-sm90", "lane-sm80", "gcn"])
def test_inline_asm_compiles_cleanly(kernel, signature, target, arch) -> None:
    (require_cuda_compiler if target == "cuda" else require_hip_compiler)()
    assert_clean_compile(kernel, signature, target, arch)


def test_interpreter_refuses_inline_asm() -> None:
    x = np.ones(64, np.float32)
    with pytest.raises(InterpreterError, match="cannot execute"):
        lane_kernel.interpret[(1,)](np.zeros(64, np.float32), x, BLOCK=64)


def _kernel(call: str):
    code = ("import tilecc\nimport tilecc.language as tl\n"
            "@tilecc.jit\n"
            "def k(X, Y):\n"
            "    x = tl.load(X + tl.arange(0, 16))\n"
            f"    y = {call}\n"
            "    tl.store(Y + tl.arange(0, 16), y)\n")
    name = f"<asm-test-{abs(hash(call))}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    ns: dict = {}
    exec(compile(code, name, "exec"), ns)
    return ns["k"]


@pytest.mark.parametrize("call,message", [
    ("tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r,r', [x], tl.float32, True, 1)",
     "give 1 outputs and 2 inputs"),
    ("tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [x], tl.float32, True, 3)",
     "pack must be a power of 2"),
    ("tl.inline_asm_elementwise('mov.b32 $0, $1;', '=q,q', [x], tl.float32, True, 1)",
     "constraint 'q' is not supported"),
    ("tl.inline_asm_elementwise('mov.b32 $0, $1;', '=h,h', [x], tl.float32, True, 1)",
     "does not fit the constraint 'h'"),
    ("tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', x, tl.float32, True, 1)",
     "args must be a list"),
    ("tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [x], 'fp32', True, 1)",
     "dtype must be a dtype"),
])
def test_inline_asm_misuse_is_a_compilation_error(call, message) -> None:
    with pytest.raises(CompilationError) as e:
        _kernel(call).source("*fp32:16,*fp32:16")
    assert message in str(e.value), str(e.value)
    assert ":6:" in str(e.value)


@pytest.mark.gpu
def test_inline_asm_on_gpu() -> None:
    torch = pytest.importorskip("torch")
    a = torch.randint(0, 255, (1024,), dtype=torch.uint8, device="cuda")
    b = torch.randn(1024, device="cuda") * 100
    c = torch.empty(1024, dtype=torch.int32, device="cuda")
    d = torch.empty(1024, device="cuda")
    u8_max_kernel[(1,)](a, b, c, d, BLOCK=1024)
    assert torch.equal(c, a.int()) and torch.equal(d, torch.maximum(a.float(), b))
    x = torch.randn(1000, device="cuda", dtype=torch.float16)
    y = torch.tensor([1.5], device="cuda", dtype=torch.float16)
    out = torch.empty_like(x)
    half2_add_kernel[(4,)](x, y, out, 1000, BLOCK=256)
    assert torch.equal(out, x + y)
    xs = torch.randn(64, device="cuda")
    out = torch.empty(64, device="cuda")
    lane_kernel[(1,)](out, xs, BLOCK=64)
    lanes = torch.arange(64, device="cuda") % 32
    torch.testing.assert_close(out, lanes.float() * 1000 + 2 * xs)
