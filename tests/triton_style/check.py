"""Runs every op of the library against NumPy: `python -m tilecc.compat check.py`
(arrays on the interpreter with TILECC_INTERPRET=1) or `... check.py cuda` (torch tensors on
the GPU).  Prints one line per op and exits 1 if any differs."""

import sys

import numpy as np

import ops

DEVICE = sys.argv[1] if len(sys.argv) > 1 else "cpu"
rng = np.random.default_rng(0)


def to_device(a):
    if DEVICE == "cpu":
        return a
    import torch

    return torch.from_numpy(np.ascontiguousarray(a)).to(DEVICE)


def to_host(a):
    return a if isinstance(a, np.ndarray) else a.cpu().numpy()


def check(name, got, want, rtol=1e-5, atol=1e-5):
    try:
        np.testing.assert_allclose(to_host(got), want, rtol=rtol, atol=atol)
        print(f"ok {name}")
        return True
    except AssertionError as e:
        print(f"MISMATCH {name}: {str(e).strip().splitlines()[-1]}")
        return False


def main() -> int:
    results = []
    for rows, cols in [(3, 64), (5, 100), (2, 1000)]:
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        w = rng.standard_normal(cols).astype(np.float32)
        y, rstd = ops.rms_norm_forward(to_device(x), to_device(w), eps=1e-6, offset=1.0)
        want_rstd = 1 / np.sqrt((x.astype(np.float64) ** 2).mean(1) + 1e-6)
        results.append(check(f"rms_norm rstd {rows}x{cols}", rstd, want_rstd, rtol=1e-5))
        results.append(check(f"rms_norm {rows}x{cols}", y, x * want_rstd[:, None] * (1 + w),
                             rtol=1e-4, atol=1e-5))
    for n in [1, 300, 5000]:
        a = rng.standard_normal(n).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        c = ops.swiglu_forward(to_device(a), to_device(b))
        results.append(check(f"swiglu {n}", c, a / (1 + np.exp(-a)) * b, rtol=1e-5, atol=1e-6))
    for rows, cols in [(4, 10), (3, 2048), (6, 3000)]:
        logits = rng.standard_normal((rows, cols)).astype(np.float32) * 3
        target = rng.integers(0, cols, rows).astype(np.int64)
        target[0] = -100
        x = to_device(logits.copy())
        loss = ops.cross_entropy_forward(x, to_device(target))
        z = logits.astype(np.float64)
        lse = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1)
        picked = np.where(target < 0, 0, target)
        want = lse - z[np.arange(rows), picked]
        grad = np.exp(z - lse[:, None])
        grad[np.arange(rows), picked] -= 1
        want[0], grad[0] = 0, 0
        results.append(check(f"cross_entropy loss {rows}x{cols}", loss, want, rtol=1e-5,
                             atol=1e-5))
        results.append(check(f"cross_entropy grad {rows}x{cols}", x, grad, atol=1e-6))
    for batch, seq, heads, hd in [(2, 5, 4, 16), (1, 7, 3, 24)]:
        q = rng.standard_normal((batch * seq, heads * hd)).astype(np.float32)
        angle = rng.standard_normal((seq, hd // 2)).astype(np.float32)
        cos, sin = np.cos(angle), np.sin(angle)
        out = ops.rope_forward(to_device(q.copy()), to_device(cos), to_device(sin))
        qh = q.reshape(batch, seq, heads, hd)
        q1, q2 = qh[..., :hd // 2], qh[..., hd // 2:]
        c, s = cos[None, :, None, :], sin[None, :, None, :]
        want = np.concatenate([q1 * c - q2 * s, q2 * c + q1 * s], -1).reshape(q.shape)
        results.append(check(f"rope {batch}x{seq}x{heads}x{hd}", out, want, rtol=1e-5,
                             atol=1e-5))
    print(f"{sum(results)} of {len(results)} ok")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
