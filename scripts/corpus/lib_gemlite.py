"""gemlite (github.com/mobiusml/gemlite): low-bit weight GEMMs and GEMVs.  Its Triton
unpacks weights packed several to an int32 with shifts and masks inside the K loop,
dequantizes per group (scales, zeros), accumulates with `tl.dot` or with broadcast
products and `tl.sum` (the GEMVs), splits K over programs with `tl.atomic_add`, picks
kernels by `triton.autotune` with `prune_configs_by`, and quantizes activations
(int8, fp8, MXFP8/MXFP4/NVFP4 with bit-level packing and `tl.inline_asm_elementwise`
on NVIDIA).

The GEMM references dequantize in PyTorch (W = (W_q - zeros)·scales per group of K) and
multiply in float32, written here; the activation-quantization references are gemlite's
own PyTorch versions (`*_torch` in gemlite.quant_utils), plain PyTorch.
"""

from __future__ import annotations

import sys

import torch

from common import Case, Ops, module, without_torch_compile

RELEASE = "gemlite==0.6.0.post2"
ARCHIVE = "gemlite-0.6.0.post2.tar.gz"
ROOT = "gemlite-0.6.0.post2"
DEPS = ["tqdm-4.67.1-py3-none-any.whl"]
MARKERS = ("gemlite/",)

OPS = Ops()
N, K = 128, 256  # out and in features; groups of 64 along K (gemlite loads its scales
# unmasked along N: N must be a multiple of its blocks)


def load(src: str, device: str) -> None:
    sys.path.insert(0, src)  # imported by the first case (after the stand-ins)


def _imported(dev: str):
    if "gemlite" not in sys.modules and dev == "cpu":
        _per_device_tables_on_cpu()
    return module("gemlite.core")


def _per_device_tables_on_cpu() -> None:
    """gemlite builds, at import, tables with one tensor per CUDA device (indexed by a
    tensor's device index later): on the CPU, one of each, on the CPU, answering index None."""
    tensor, count = torch.tensor, torch.cuda.device_count
    torch.tensor = lambda *args, device=None, **kwargs: tensor(*args, **kwargs)
    torch.cuda.device_count = lambda: 1
    try:
        import gemlite  # noqa: F401
    finally:
        torch.tensor, torch.cuda.device_count = tensor, count
    for name, mod in list(sys.modules.items()):
        if name.startswith("gemlite"):
            for attr, value in list(vars(mod).items()):
                if (isinstance(value, list) and len(value) == 1
                        and isinstance(value[0], torch.Tensor)):
                    setattr(mod, attr, _AnyDevice(value))


def standins() -> None:
    """Driver-side stand-ins for Triton API beyond the language: `triton.autotune`'s
    `use_cuda_graph` (benchmark each config in a CUDA graph) dropped where it is refused;
    `torch.compile` (on host-side helpers) left out."""
    import inspect

    import triton

    without_torch_compile()

    autotune = triton.autotune
    if "use_cuda_graph" in inspect.signature(autotune).parameters:
        return

    def without_graphs(*args, use_cuda_graph=False, **kwargs):
        return autotune(*args, **kwargs)

    triton.autotune = without_graphs


def _layer(nbits: int, group: int, dev: str, K: int, fp16_weights=False):
    """(the packed layer, W_q, scales, zeros) for random weights."""
    core = _imported(dev)
    DType = module("gemlite.dtypes").DType
    layer = core.GemLiteLinearTriton(W_nbits=nbits, group_size=group, in_features=K,
                                     out_features=N, input_dtype=DType.FP16,
                                     output_dtype=DType.FP16)
    if fp16_weights:
        w = (torch.randn(N, K) * 0.05).half().to(dev)
        layer.pack(w, None, None, bias=None)
        return layer, w, None, None
    w_q = torch.randint(0, 2 ** nbits, (N, K), dtype=torch.uint8).to(dev)
    scales = (torch.rand(N, K // group) * 0.02 + 0.005).half().to(dev)
    zeros = torch.full((N, K // group), (2 ** nbits - 1) / 2).half().to(dev)
    layer.pack(w_q, scales, zeros, bias=None)
    return layer, w_q, scales, zeros


def _dequantized(w_q, scales, zeros, group):
    K = w_q.shape[1]
    w = w_q.float().reshape(N, K // group, group)
    return ((w - zeros.float()[..., None]) * scales.float()[..., None]).reshape(N, K)


def _matmul_cases(matmul_type: str, batches, dev, K=K):
    for nbits, group in ((4, 64), (2, 64), (8, 128), (16, None)):
        torch.manual_seed(nbits)
        layer, w_q, scales, zeros = _layer(nbits, group or K, dev, K, fp16_weights=nbits == 16)
        for m in batches:
            x = (torch.randn(m, K) * 0.5).half().to(dev)
            if nbits == 16:
                ref = (lambda x, w=w_q: x.float() @ w.float().t())
            else:
                w = _dequantized(w_q.cpu(), scales.cpu(), zeros.cpu(), group).to(dev)
                ref = (lambda x, w=w: x.float() @ w.t())
            yield Case(f"A16W{nbits}{f' g{group}' if group else ''} M{m} N{N} K{K}", [x],
                       lambda x, layer=layer: layer.forward_manual(x, matmul_type), ref,
                       5e-2, 2e-2, backward=False)


@OPS.op("gemm")
def gemm(dev):
    yield from _matmul_cases("GEMM", (16, 33), dev)


@OPS.op("gemm_splitK")
def gemm_splitk(dev):
    yield from _matmul_cases("GEMM_SPLITK", (8, 16), dev, K=512)  # whole K blocks per split:
    # it loads its scales unmasked along K too


class _AnyDevice(list):
    """gemlite's per-GPU table indexed by a tensor's device index: None on the CPU."""

    def __getitem__(self, i):
        return super().__getitem__(0 if i is None else i)


@OPS.op("gemv")
def gemv(dev):
    yield from _matmul_cases("GEMV", (1, 2), dev)


@OPS.op("gemv_revsplitK")
def gemv_revsplitk(dev):
    yield from _matmul_cases("GEMV_REVSPLITK", (1, 2), dev)


@OPS.op("gemv_splitK")
def gemv_splitk(dev):
    yield from _matmul_cases("GEMV_SPLITK", (1, 2), dev)


# --- activation quantization -----------------------------------------------------------------


def _quant_case(name, fn, ref, x, atol=1e-2, rtol=1e-2):
    def as_float(out):  # quantized values and scales, compared as numbers
        return [t.float() if t.dtype != torch.uint8 else t.int().float() for t in out]

    return Case(name, [x], lambda x: as_float(fn(x)), lambda x: as_float(ref(x.half())),
                atol, rtol, backward=False)


def _activations(dev):
    for m in (4, 7):
        yield m, torch.randn(m, K).half().to(dev)


@OPS.op("quant_int8_per_token")
def quant_int8_per_token(dev):
    _imported(dev)
    q = module("gemlite.quant_utils")
    for m, x in _activations(dev):
        yield _quant_case(f"{m}x{K}", lambda x: q.scale_activations_per_token(x, w_dtype=torch.int8),
                          lambda x: q.scale_activations_per_token_torch(x, w_dtype=torch.int8),
                          x, atol=1.01)  # a step of rounding where a scale differs in its last bit


@OPS.op("quant_fp8_per_token")
def quant_fp8_per_token(dev):
    _imported(dev)
    q = module("gemlite.quant_utils")
    for m, x in _activations(dev):
        yield _quant_case(f"{m}x{K}", lambda x: q.scale_activations_per_token(x, w_dtype=torch.float8_e4m3fn),
                          lambda x: q.scale_activations_per_token_torch(x, w_dtype=torch.float8_e4m3fn),
                          x, rtol=7e-2)


@OPS.op("quant_mxfp8")
def quant_mxfp8(dev):
    _imported(dev)
    q = module("gemlite.quant_utils")
    for m, x in _activations(dev):
        yield _quant_case(f"{m}x{K}", lambda x: q.scale_activations_mxfp8(x),
                          lambda x: q.scale_activations_mxfp8_torch(x), x, rtol=7e-2)


FP4 = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def _fp4_values(packed):
    """Two e2m1 codes a byte (the low nibble first) as the numbers they stand for: codes
    0 and 8 (+0, -0) compare equal."""
    p = packed.cpu().long()
    return torch.stack([FP4[p & 15], FP4[p >> 4]], -1).flatten(-2)


@OPS.op("quant_mxfp4")
def quant_mxfp4(dev):
    _imported(dev)
    q = module("gemlite.quant_utils")

    def decoded(out):  # the scales of the rows there are (not of the padding to 32 rows)
        return [_fp4_values(out[0]), out[1][:out[0].shape[0]].int().float()]

    for m, x in _activations(dev):
        yield Case(f"{m}x{K}", [x], lambda x: decoded(q.scale_activations_mxfp4(x)),
                   lambda x: decoded(q.scale_activations_mxfp4_torch(x.half())), 0, 0,
                   backward=False)
