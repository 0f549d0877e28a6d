"""`triton.tools.mxfp` under the compatibility mode: host-side helpers for the OCP
microscaling formats that `tl.dot_scaled` reads (Triton's tutorial 10 builds its inputs
with them), written with PyTorch (imported when first used).

    MXFP4Tensor   4-bit floats e2m1 (1 sign, 2 exponent, 1 mantissa bit), one per uint8
                  in `.data`, or two per byte packed (`to_packed_tensor`)
    MXScaleTensor 8-bit power-of-two scales e8m0 (a biased exponent, 255 is NaN)
"""

from __future__ import annotations

# The e2m1 magnitudes by code (exponent << 1 | mantissa): subnormals 0 and 0.5, then
# 1, 1.5, 2, 3, 4, 6.  No infinity or NaN: out-of-range values clamp to 6.
_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
_E8M0_BIAS, _E8M0_NAN = 127, 255


def _torch():
    import torch

    return torch


def _shape(size) -> tuple:
    return size if isinstance(size, tuple) else (size,)


class MXFP4Tensor:
    """e2m1 values, one code per uint8 of `.data` (the sign in bit 3)."""

    def __init__(self, data=None, size=None, device=None):
        self.device = device
        if data is not None:
            torch = _torch()
            if not isinstance(data, torch.Tensor):
                raise TypeError("MXFP4Tensor: data must be a torch tensor")
            self.device = data.device
            self.data = self._from_float(data)
        elif size is not None:
            self.size = _shape(size)
        else:
            raise ValueError("MXFP4Tensor: give data (a float tensor) or size")

    def random(self):
        """Random codes, every sign, exponent and mantissa equally likely."""
        torch = _torch()
        self.data = torch.randint(0, 16, self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype):
        """The values as float32."""
        torch = _torch()
        if dtype != torch.float32:
            raise ValueError("MXFP4Tensor.to converts to torch.float32 only")
        magnitudes = torch.tensor(_E2M1, dtype=torch.float32, device=self.data.device)
        value = magnitudes[(self.data & 0x7).long()]
        negative = (self.data & 0x8) != 0
        return torch.where(negative, -value, value)  # -0.0 where the sign bit is set

    def _from_float(self, values):
        """Round to the nearest e2m1 value, ties to the even code; beyond 6 (and NaN,
        infinities) to 6; the sign kept (zeros too)."""
        torch = _torch()
        sign = torch.signbit(values).to(torch.uint8) << 3
        a = values.abs().to(torch.float32)
        a = torch.where(torch.isfinite(a), a, torch.full_like(a, _E2M1[-1]))
        mids = torch.tensor([(lo + hi) / 2 for lo, hi in zip(_E2M1, _E2M1[1:])],
                            dtype=torch.float32, device=a.device)
        below = torch.searchsorted(mids, a.contiguous(), right=False)
        above = torch.searchsorted(mids, a.contiguous(), right=True)
        code = torch.where(below == above, below, torch.where(below % 2 == 0, below, above))
        return sign | code.to(torch.uint8)

    def to_packed_tensor(self, dim):
        """Two codes per byte along `dim` (the first in the low nibble), an odd length
        padded with a zero code."""
        torch = _torch()
        data = self.data
        if not 0 <= dim < data.ndim:
            raise ValueError(f"MXFP4Tensor.to_packed_tensor: dim {dim} is not a dimension of "
                             f"a {data.ndim}-d tensor")
        if data.size(dim) % 2:
            pad = [0] * (2 * data.ndim)
            pad[2 * (data.ndim - 1 - dim) + 1] = 1  # one more element at the end of `dim`
            data = torch.nn.functional.pad(data, pad)
        pairs = data.reshape(*data.shape[:dim], data.size(dim) // 2, 2, *data.shape[dim + 1:])
        return pairs.select(dim + 1, 0) | (pairs.select(dim + 1, 1) << 4)

    def unpack_packed_tensor(self, packed_tensor, dim, original_shape):
        """The codes of a packed tensor, one per byte, `original_shape[dim]` long."""
        torch = _torch()
        both = torch.stack((packed_tensor & 0xF, (packed_tensor >> 4) & 0xF), dim=dim + 1)
        shape = list(packed_tensor.shape)
        shape[dim] *= 2
        data = both.reshape(shape)
        return data.narrow(dim, 0, original_shape[dim]).to(torch.uint8)


class MXScaleTensor:
    """e8m0 scales: 2 ** (code - 127) per uint8 of `.data`, 255 for NaN."""

    def __init__(self, data=None, size=None, device=None):
        self.device = device
        if data is not None:
            torch = _torch()
            if not isinstance(data, torch.Tensor):
                raise TypeError("MXScaleTensor: data must be a torch tensor")
            self.device = data.device
            self.data = self._from_float(data)
        elif size is not None:
            self.size = _shape(size)
        else:
            raise ValueError("MXScaleTensor: give data (a float tensor) or size")

    def random(self, low=None, high=None):
        """Random scales between `low` and `high` (powers of two; default: every finite
        scale), never NaN."""
        import math

        torch = _torch()
        first = 0 if low is None else max(0, int(math.log2(low)) + _E8M0_BIAS)
        last = 254 if high is None else min(254, max(0, int(math.log2(high)) + _E8M0_BIAS))
        if first > last:
            raise ValueError("MXScaleTensor.random: low must not be above high")
        self.data = torch.randint(first, last + 1, self.size, dtype=torch.uint8,
                                  device=self.device)
        return self

    def to(self, dtype):
        """The scales as float32."""
        torch = _torch()
        if dtype != torch.float32:
            raise ValueError("MXScaleTensor.to converts to torch.float32 only")
        codes = self.data.to(torch.float32)
        value = torch.exp2(codes - _E8M0_BIAS)
        return torch.where(self.data == _E8M0_NAN, torch.full_like(value, float("nan")), value)

    def _from_float(self, values):
        """The power of two at or below each value (clamped to the scales there are);
        NaN, infinities and values <= 0 become the NaN code."""
        torch = _torch()
        values = values.to(torch.float32)
        bad = ~torch.isfinite(values) | (values <= 0)
        safe = torch.where(bad, torch.ones_like(values), values)
        code = (torch.floor(torch.log2(safe)) + _E8M0_BIAS).clamp(0, 254).to(torch.uint8)
        return torch.where(bad, torch.full_like(code, _E8M0_NAN), code)
