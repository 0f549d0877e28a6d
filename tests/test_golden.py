"""The examples' generated CUDA and HIP are checked in beside them (examples/NAME.cu,
examples/NAME.hip) and reviewed like code; this test fails when the generator's output
drifts from them.  Regenerate with: TILECC_UPDATE_GOLDEN=1 pytest tests/test_golden.py
"""

import importlib.util
import os

import pytest

from conftest_compilers import require_cuda_compiler, require_hip_compiler

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
# golden file stem → (example file, kernel name, signature, num_warps)
GOLDEN = {
    "vector_add": ("vector_add", "add_kernel", "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024", 4),
    "fused_elementwise": ("fused_elementwise", "silu_mul_kernel",
                          "*fp16:16, *fp16:16, *fp16:16, i32:16, 2048", 8),
    "gelu_tanh": ("gelu_tanh", "gelu_tanh_kernel", "*fp16:16, *fp16:16, i32:16, 1024", 4),
    "dropout": ("dropout", "seeded_dropout_kernel", "*fp32:16, *fp32:16, i32, fp32, i32, 1024", 4),
    "softmax": ("softmax", "softmax_kernel", "*fp32:16, *fp32:16, i32:16, i32:16, i32, 1024", 4),
    "layernorm_fwd": ("layernorm", "layer_norm_fwd",
                      "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, i32:16, "
                      "i32:16, fp32, 1024", 4),
    "layernorm_bwd_dx": ("layernorm", "layer_norm_bwd_dx",
                         "*fp16:16, *fp16:16, *fp32:16, *fp32:16, *fp16:16, *fp16:16, *fp32:16, "
                         "*fp32:16, i32:16, i32, i32:16, 1024", 4),
    "layernorm_bwd_dwdb": ("layernorm", "layer_norm_bwd_dwdb",
                           "*fp32:16, *fp32:16, *fp32:16, *fp32:16, i32, i32:16, 32, 128", 4),
    "attention": ("attention", "attention_fwd",
                  "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, fp32, i32:16, i32:16, "
                  "i32:16, i32, i32, 64, 128, 64, True", 8),
    "attention_bwd_preprocess": ("attention", "attention_bwd_preprocess",
                                 "*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, i32, "
                                 "i32, 64, 64", 4),
    "attention_bwd_dkdv": ("attention", "attention_bwd_dkdv",
                           "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp16:16, "
                           "*fp32:16, *fp32:16, fp32, i32:16, i32:16, i32:16, i32, i32, 64, 32, "
                           "128, True", 8),
    "attention_bwd_dq": ("attention", "attention_bwd_dq",
                         "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, "
                         "fp32, i32:16, i32:16, i32:16, i32, i32, 64, 128, 64, True", 8),
    "matmul": ("matmul", "matmul_kernel",
               "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, "
               "i32:1, i32:16, i32:1, 128, 128, 32, 8, 'leaky_relu'", 4),
    "topk": ("topk", "topk_kernel", "*fp32:16, *fp32:16, *i32:16, i32, i32, 4, 128, 8", 4),
    "histogram": ("histogram", "histogram_kernel", "*u8:16, *i32:16, i32, 256, 1024", 4),
    "matmul_block_ptr": ("matmul_block_ptr", "matmul_block_ptr_kernel",
                         "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, "
                         "i32:16, i32:1, i32:16, i32:1, 128, 128, 32, 8", 4),
    "persistent_matmul": ("persistent_matmul", "persistent_matmul_kernel",
                          "tensordesc<fp16[128, 64]>:16, tensordesc<fp16[64, 128]>:16, "
                          "tensordesc<fp16[128, 128]>:16, i32, i32, i32, 128, 128, 64, 8, 132",
                          8),
    "block_scaled_matmul": ("block_scaled_matmul", "block_scaled_matmul_kernel",
                            "tensordesc<u8[128, 32]>:16, *u8:16, tensordesc<u8[128, 32]>:16, "
                            "*u8:16, *fp32:16, i32, i32, i32:16, i32:16, i32:16, i32:16, "
                            "'e2m1', 128, 128, 64", 8),
    "grouped_gemm": ("grouped_gemm", "grouped_matmul_kernel",
                     "*i64:16, *i64:16, *i64:16, *i32:16, *i32:16, i32, 132, 128, 128, 32", 4),
}


def _kernel(stem: str):
    example, name, signature, warps = GOLDEN[stem]
    spec = importlib.util.spec_from_file_location(f"example_{example}",
                                                  os.path.join(EXAMPLES, example + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), signature, warps


@pytest.mark.parametrize("target,suffix", [("cuda", ".cu"), ("hip", ".hip")])
@pytest.mark.parametrize("example", sorted(GOLDEN))
def test_generated_source_matches_checked_in(example, target, suffix):
    kernel, signature, warps = _kernel(example)
    text = kernel.source(signature, target=target, num_warps=warps)
    path = os.path.join(EXAMPLES, example + suffix)
    if os.environ.get("TILECC_UPDATE_GOLDEN") == "1":
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        assert f.read() == text, f"{path} is stale: regenerate with TILECC_UPDATE_GOLDEN=1"


@pytest.mark.parametrize("example", sorted(GOLDEN))
def test_examples_compile_cleanly(example):
    kernel, signature, warps = _kernel(example)
    require_cuda_compiler()
    for arch in ("sm_80", "sm_90"):
        binary = kernel.compile(signature, target="cuda", arch=arch, num_warps=warps)
        assert "warning" not in binary.log.lower(), binary.log
        assert "0 bytes spill stores" in binary.log, binary.log
    require_hip_compiler()
    binary = kernel.compile(signature, target="hip", arch="gfx90a", num_warps=warps)
    assert "warning" not in binary.log.lower(), binary.log
    assert binary.data[:4] == b"\x7fELF"
