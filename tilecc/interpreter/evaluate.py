"""Evaluate the tile IR on NumPy, one program at a time.

This runs the very IR the GPU source is rendered from (after the passes), so CI exercises
the frontend, the typing rules and the passes without a GPU.  Semantics follow the
generated C: integers wrap, `//` and `%` round toward zero, 16-bit floats round after
every operation, math on 16-bit floats is computed in float32.  Every load and store is
bounds-checked against the array behind the pointer, lane by lane, and reported at the
user's line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecc.errors import InterpreterError
from tilecc.interpreter import addresses
from tilecc.language import dtypes as D
from tilecc.interpreter.libdevice import extern
from tilecc.transpiler import fp8
from tilecc.transpiler.ir import Kernel, Op, Region, Value


SPACE = -1  # the environment's key of the AddressSpace (value ids are not negative)


@dataclass
class Pointer:
    """Pointers into one array: `buffer` is its memory as a flat array, `offset` the
    element offsets (a NumPy int64 scalar or array).  Pointers made from integers that are
    in no one array the interpreter knows keep those integers in `raw` (their addresses):
    they can be moved, chosen between and cast back, not loaded from or stored to."""

    buffer: np.ndarray
    offset: np.ndarray | np.int64
    name: str
    raw: np.ndarray | np.int64 | None = None


_MATH = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
         "sqrt_rn": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos,
         "floor": np.floor, "ceil": np.ceil}


def _float_extreme(old, v, largest: bool):
    """tl.atomic_max (largest) / atomic_min of floats as Triton computes them: on the bit
    patterns, by a signed integer max (min) where `v`'s sign bit is clear and an unsigned
    min (max) where it is set: -NaN < -inf < .. < -0.0 < +0.0 < .. < +inf < +NaN."""
    o = np.array(old)
    w = np.array(v, dtype=o.dtype)
    signed, unsigned = np.dtype(f"i{o.itemsize}"), np.dtype(f"u{o.itemsize}")
    if w.view(signed) >= 0:
        keep_old = o.view(signed) > w.view(signed) if largest else o.view(signed) < w.view(signed)
    else:
        keep_old = (o.view(unsigned) < w.view(unsigned) if largest
                    else o.view(unsigned) > w.view(unsigned))
    return o[()] if keep_old else w[()]


def _erf(x):
    import math

    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _np(d: D.dtype) -> np.dtype:
    return d.to_numpy()


def _as(x, d: D.dtype):
    """x converted to element type d (array or 0-d → NumPy scalar)."""
    out = np.asarray(x).astype(_np(d))
    return out if out.ndim else out[()]


def _round_toward_zero(x: np.ndarray, t: D.dtype):
    """A narrowing float conversion rounded toward zero: the nearest value, one step of the
    bits toward zero where it is larger in magnitude than x (as tc::cast_rz)."""
    y = np.asarray(x.astype(np.float32) if t.short == "bf16" else x).astype(_np(t))
    past = (np.abs(y.astype(np.float64)) > np.abs(x.astype(np.float64))) & ~np.isnan(x)
    bits = y.view(f"u{t.itemsize}").copy()
    bits[past] -= 1  # sign-magnitude: the next value toward zero (inf → the largest)
    return _as(bits.view(_np(t)), t)


def _compute_type(d: D.dtype) -> np.dtype:
    # Math on 16-bit floats is done in float32 and rounded, as the device header does.
    return np.dtype(np.float32) if d.short in ("fp16", "bf16") else _np(d)


def float_to_int(x: np.ndarray, t: D.dtype) -> np.ndarray:
    """Float → integer as the GPUs convert (PTX cvt.rzi, AMD v_cvt, tc::cast): truncate
    toward zero, saturate to the target's range, NaN → 0."""
    y = np.clip(np.trunc(np.nan_to_num(x, nan=0.0)), t.min, t.max)
    below_top = y < float(t.max)  # float64 rounds 2**63 - 1 and 2**64 - 1 up: pin them
    return np.where(below_top, np.where(below_top, y, 0).astype(_np(t)),
                    np.array(t.max, dtype=_np(t)))


def truncate_to_tf32(x: np.ndarray) -> np.ndarray:
    """fp32 cut to tf32's 10 mantissa bits (toward zero): what the tensor cores read of an
    fp32 operand — mma.sync's and wgmma's alike, as Triton feeds them fp32 bits as they
    are; infinities and NaN pass through."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    cut = (bits & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isfinite(x), cut, x).astype(np.float32)


def trunc_div(a, b):
    """Integer division rounding toward zero (C and Triton), not Python's floor."""
    r = np.fmod(a, b)
    return (a - r) // b


def shift(fn: str, x, y, t: D.dtype):
    """Triton's shifts on t's bits, as the device header's tc::shl / ashr / lshr: the
    amount reads as unsigned; amounts of t's width or more give 0, or the sign for ashr."""
    width = np.dtype(f"u{max(1, t.bits // 8)}")
    ux = np.asarray(x, dtype=_np(t)).view(width).astype(np.uint64)
    n = np.asarray(y, dtype=_np(t)).view(width).astype(np.uint64)
    big = n >= t.bits
    if fn == "ashr":
        if t.is_bool():  # a 1-bit value is its own sign
            return np.asarray(x, dtype=_np(t))
        signed = np.asarray(x, dtype=_np(t)).view(f"i{width.itemsize}").astype(np.int64)
        out = signed >> np.minimum(n, np.uint64(t.bits - 1)).astype(np.int64)  # sign fill
        return out.astype(f"i{width.itemsize}").view(_np(t))
    n = np.where(big, np.uint64(0), n)
    if fn == "lshr":
        out = np.where(big, np.uint64(0), ux >> n)
    else:
        out = np.where(big, np.uint64(0), ux << n)
    out = out & np.uint64(2 ** t.bits - 1)
    return out.astype(width).view(_np(t))


def umulhi(x, y, t: D.dtype):
    """The high half of the 2N-bit product of x and y, their bits read as unsigned (as the
    device header's tc::umulhi), in t."""
    unsigned = np.dtype(f"u{t.bits // 8}")
    ux = np.asarray(x, dtype=_np(t)).view(unsigned)
    uy = np.asarray(y, dtype=_np(t)).view(unsigned)
    if t.bits == 32:
        high = (ux.astype(np.uint64) * uy.astype(np.uint64)) >> np.uint64(32)
    else:  # 64 x 64 bits in 32-bit halves: NumPy has no 128-bit integers
        mask = np.uint64(0xFFFFFFFF)
        x_lo, x_hi = ux & mask, ux >> np.uint64(32)
        y_lo, y_hi = uy & mask, uy >> np.uint64(32)
        lo_lo, hi_lo = x_lo * y_lo, x_hi * y_lo
        lo_hi, hi_hi = x_lo * y_hi, x_hi * y_hi
        middle = (lo_lo >> np.uint64(32)) + (hi_lo & mask) + (lo_hi & mask)
        high = hi_hi + (hi_lo >> np.uint64(32)) + (lo_hi >> np.uint64(32)) + \
            (middle >> np.uint64(32))
    return np.asarray(high).astype(unsigned).view(_np(t))


class Program:
    def __init__(self, kernel: Kernel, pid: tuple[int, int, int], grid: tuple[int, int, int],
                 args: dict[int, object]):
        self.kernel, self.pid, self.grid = kernel, pid, grid
        self.env: dict[int, object] = dict(args)

    def run(self) -> None:
        self.region(self.kernel.body)

    def region(self, region: Region) -> list:
        for op in region.ops:
            self.op(op)
        return [self.env[v.id] for v in region.yields]

    def get(self, v: Value):
        return self.env[v.id]

    def op(self, op: Op) -> None:
        k = op.kind
        handler = getattr(self, f"op_{k}", None)
        if handler is not None:
            out = handler(op)
        else:
            out = self.elementwise(op)
        if op.results and out is not None:
            if isinstance(out, list):  # control flow, reductions, scans, split
                for r, v in zip(op.results, out):
                    self.env[r.id] = v
            else:
                self.env[op.result.id] = out

    def op_counter(self, op: Op):
        """The host's clock for the GPU's timers; every program runs on "SM" 0."""
        import time

        counter = op.attrs["counter"]
        if counter == "smid":
            return np.int32(0)
        now = time.time_ns()
        return np.int64(now if counter == "globaltimer" else now // 10)  # memrealtime: 100 MHz

    # --- values ------------------------------------------------------------------------------
    def elementwise(self, op: Op):
        k, a = op.kind, [self.get(v) for v in op.operands]
        t = op.result.dtype
        if k == "const":
            return _as(op.attrs["value"], t)
        if k == "program_id":
            return np.int32(self.pid[op.attrs["axis"]])
        if k == "num_programs":
            return np.int32(self.grid[op.attrs["axis"]])
        if k == "arange":
            return np.arange(op.attrs["start"], op.attrs["end"], dtype=np.int32)
        if k == "splat":
            if isinstance(a[0], Pointer):
                p, shape = a[0], op.result.type.shape
                return Pointer(p.buffer, np.full(shape, p.offset, np.int64), p.name,
                               None if p.raw is None else np.full(shape, p.raw, np.int64))
            return np.full(op.result.type.shape, a[0], dtype=_np(t))
        if k == "addptr":
            p, off = a
            off = np.asarray(off).astype(np.int64)
            return Pointer(p.buffer, p.offset + off, p.name,
                           None if p.raw is None else p.raw + off * p.buffer.itemsize)
        if k == "cast" and (t.is_ptr() or op.operands[0].dtype.is_ptr()):
            return self.pointer_cast(op, a[0])
        if k == "cast":
            src = op.operands[0].dtype
            if op.attrs.get("bitcast"):
                return np.asarray(a[0]).view(_np(t))[()]
            if op.attrs.get("rounding") == "rtz":
                return _round_toward_zero(np.asarray(a[0]), t)
            if t.is_bool():
                return _as(np.asarray(a[0]) != 0, t)
            if src.is_floating() and t.is_int():
                return _as(float_to_int(np.asarray(a[0], dtype=np.float64), t), t)
            if t.is_fp8():  # rounded to nearest even, saturated (transpiler.fp8)
                out = fp8.convert(np.asarray(a[0]).astype(np.float32), t)
                return out if out.ndim else out[()]
            if src.is_fp8():  # exact
                return _as(np.asarray(a[0]).astype(np.float32), t)
            if src.short == "bf16" or t.short == "bf16":
                return _as(np.asarray(a[0]).astype(np.float32), t)
            return _as(a[0], t)
        if k == "unary":
            fn, x = op.attrs["fn"], a[0]
            if fn == "neg":
                return _as(-np.asarray(x), t) if not t.is_bool() else x
            if fn == "invert":
                return _as(~np.asarray(x), t)
            if fn == "not":
                return _as(np.logical_not(x), t)
            if fn == "abs":
                return _as(np.abs(x), t)
            x = np.asarray(x).astype(_compute_type(t))
            return _as(_erf(x) if fn == "erf" else _MATH[fn](x), t)
        if k == "binary":
            return _as(self.binary(op.attrs["fn"], a[0], a[1], t), t)
        if k == "cmp":
            x, y = a
            return {"lt": np.less, "le": np.less_equal, "gt": np.greater,
                    "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}[
                op.attrs["pred"]](x, y)
        if k == "where":
            c, x, y = a
            if isinstance(x, Pointer):
                if x.buffer is y.buffer and x.raw is None and y.raw is None:
                    return Pointer(x.buffer, np.where(c, x.offset, y.offset), x.name)
                chosen = np.where(c, addresses.address(x), addresses.address(y))
                return addresses.to_pointer(self.env[SPACE], chosen, x.buffer.dtype, op.loc,
                                            Pointer)
            return _as(np.where(c, x, y), t)
        if k == "fma":
            x, y, z = (np.asarray(v, dtype=np.float64) for v in a)
            return _as(x * y + z, t)
        raise NotImplementedError(f"interpreter: op {k}")

    @staticmethod
    def binary(fn: str, x, y, t: D.dtype):
        x, y = np.asarray(x), np.asarray(y)
        if fn in ("add", "sub", "mul") and t.short == "bf16":
            x, y = x.astype(np.float32), y.astype(np.float32)
        if fn == "add":
            return x + y
        if fn == "sub":
            return x - y
        if fn == "mul":
            return x * y
        if fn == "div":
            if t.is_floating():
                return x.astype(_compute_type(t)) / y.astype(_compute_type(t))
            safe = np.where(y == 0, 1, y)  # division by zero is undefined on the GPU too
            return trunc_div(x, safe)
        if fn == "rem":
            if not t.is_floating():
                y = np.where(y == 0, 1, y)
            return np.fmod(x, y)
        if fn in ("and", "land"):
            return np.logical_and(x, y) if t.is_bool() else x & y
        if fn in ("or", "lor"):
            return np.logical_or(x, y) if t.is_bool() else x | y
        if fn == "xor":
            return np.logical_xor(x, y) if t.is_bool() else x ^ y
        if fn in ("shl", "ashr", "lshr"):
            return shift(fn, x, y, t)
        if fn == "min":
            return np.minimum(x, y)
        if fn == "max":
            return np.maximum(x, y)
        if fn == "fmin":
            return np.fmin(x, y)
        if fn == "fmax":
            return np.fmax(x, y)
        if fn in ("fmin_nan", "fmax_nan"):  # NaN-propagating, as tl.PropagateNan.ALL
            return np.minimum(x, y) if fn == "fmin_nan" else np.maximum(x, y)
        if fn == "umulhi":
            return umulhi(x, y, t)
        raise NotImplementedError(fn)

    # --- shapes, reductions, scans ----------------------------------------------------------
    def _shaped(self, op: Op, fn):
        x = self.get(op.operands[0])
        if isinstance(x, Pointer):
            return Pointer(x.buffer, fn(np.asarray(x.offset)), x.name,
                           None if x.raw is None else fn(np.asarray(x.raw)))
        return fn(np.asarray(x))

    def op_extern(self, op: Op):
        return extern(op, [self.get(v) for v in op.operands])

    def op_broadcast(self, op: Op):
        shape = op.result.type.shape
        return self._shaped(op, lambda a: np.broadcast_to(a, shape).copy())

    def op_convert(self, op: Op):
        # a layout change (inserted by the layouts pass): the values are unchanged
        return self._shaped(op, lambda a: a.copy())

    def op_expand_dims(self, op: Op):
        return self._shaped(op, lambda a: np.expand_dims(a, op.attrs["axis"]))

    def op_reshape(self, op: Op):
        return self._shaped(op, lambda a: a.reshape(op.result.type.shape))

    def op_permute(self, op: Op):
        return self._shaped(op, lambda a: np.transpose(a, op.attrs["order"]).copy())

    def op_join(self, op: Op):
        return np.stack([np.asarray(self.get(v)) for v in op.operands], axis=-1)

    def op_split(self, op: Op):
        x = np.asarray(self.get(op.operands[0]))
        return [x[..., 0].copy(), x[..., 1].copy()]

    def op_unstack(self, op: Op):
        x = np.asarray(self.get(op.operands[0]))
        return [x[i].copy() for i in range(len(op.results))]

    def op_stack(self, op: Op):
        return np.stack([np.asarray(self.get(v)) for v in op.operands])

    def op_flip(self, op: Op):
        return self._shaped(op, lambda a: np.flip(a, op.attrs["axis"]).copy())

    def op_cat(self, op: Op):
        return np.concatenate([np.asarray(self.get(v)) for v in op.operands])

    def op_gather(self, op: Op):
        src, index = (np.asarray(self.get(v)) for v in op.operands)
        n = src.shape[op.attrs["axis"]]
        if index.size and (index.min() < 0 or index.max() >= n):
            raise InterpreterError(f"tl.gather: an index is out of range for an axis of "
                                   f"{n} (got {index.min()} .. {index.max()})", op.loc)
        return np.take_along_axis(src, index.astype(np.int64), axis=op.attrs["axis"])

    def op_histogram(self, op: Op):
        x = np.asarray(self.get(op.operands[0])).astype(np.int64)
        keep = (x >= 0) & (x < op.attrs["num_bins"])  # bins of width 1 from 0; others skipped
        if len(op.operands) > 1:
            keep &= np.asarray(self.get(op.operands[1]), dtype=bool)
        return np.bincount(x[keep], minlength=op.attrs["num_bins"]).astype(np.int32)

    def op_map(self, op: Op):
        """tl.map_elementwise: the region on `pack` elements at a time (the last group
        padded with copies of the last element), on whole arrays when it has no control
        flow, else element group by element group (its `if`s decide per element)."""
        k, region = op.attrs["pack"], op.regions[0]
        flat = [np.asarray(self.get(v)).reshape(-1) for v in op.operands]
        n = flat[0].size
        groups = -(-n // k)
        at = np.minimum(np.arange(groups * k), n - 1).reshape(groups, k)
        nested = any(o.regions for o in region.ops)
        if not nested:
            outs = [np.broadcast_to(np.asarray(o), (groups,))
                    for o in self.combine(region, [f[at[:, j]] for f in flat for j in range(k)], [])]
        else:
            per_group = [self.combine(region, [f[at[g, j]] for f in flat for j in range(k)], [])
                         for g in range(groups)]
            outs = [np.array([row[i] for row in per_group]) for i in range(len(region.yields))]
        results = []
        for i, res in enumerate(op.results):
            out = np.stack([outs[i * k + j] for j in range(k)], axis=1).reshape(-1)[:n]
            results.append(_as(out.reshape(res.type.shape), res.dtype))
        return results

    def op_dot(self, op: Op):
        a, b, c = (np.asarray(self.get(v)) for v in op.operands)
        acc = _np(op.attrs["acc_dtype"])
        if acc.kind == "i":  # int8 products summed exactly in int32 (wrapping as the GPU)
            prod = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
            return _as(prod + c.astype(np.int32), op.result.dtype)
        a, b = a.astype(acc), b.astype(acc)
        if op.attrs["precision"] == "tf32":
            a, b = truncate_to_tf32(a), truncate_to_tf32(b)
        return _as(np.matmul(a, b) + c.astype(acc), op.result.dtype)

    def combine(self, region: Region, left: list, right: list) -> list:
        """Apply a combine region element-wise to arrays."""
        for a, v in zip(region.args, left + right):
            self.env[a.id] = v
        return self.region(region)

    def op_reduce(self, op: Op):
        # A tree, as the GPU's lanes combine: neighbours pairwise, the lower indices always
        # the left operand (a combine need only be associative). Adding n floats in sequence
        # would lose what a tree keeps (bf16: 2048 + 8 is 2048), and take n combine calls.
        axis = op.attrs["axis"]
        xs = [np.asarray(self.get(v)) for v in op.operands]
        while xs[0].shape[axis] > 1:
            n = xs[0].shape[axis]
            left = [np.take(x, range(0, n - 1, 2), axis=axis) for x in xs]
            right = [np.take(x, range(1, n, 2), axis=axis) for x in xs]
            # (the lower indices on the left: the combine for elements in order, where
            # the op has one, builtins_blocks.reduce_blocks)
            pairs = [np.broadcast_to(np.asarray(c), left[0].shape)
                     for c in self.combine(op.regions[-1], left, right)]
            xs = pairs if n % 2 == 0 else [
                np.concatenate([c, np.take(x, [n - 1], axis=axis)], axis=axis)
                for c, x in zip(pairs, xs)]
        return [_as(np.take(x, 0, axis=axis), r.dtype) for x, r in zip(xs, op.results)]

    def op_scan(self, op: Op):
        axis, reverse = op.attrs["axis"], op.attrs["reverse"]
        xs = [np.asarray(self.get(v)) for v in op.operands]
        n = xs[0].shape[axis]
        order = range(n - 1, -1, -1) if reverse else range(n)
        outs = [np.empty_like(x) for x in xs]
        acc = None
        for i in order:
            cur = [np.take(x, i, axis=axis) for x in xs]
            acc = cur if acc is None else self.combine(op.regions[0], acc, cur)
            for o, a in zip(outs, acc):
                idx = [slice(None)] * o.ndim
                idx[axis] = i
                o[tuple(idx)] = a
        return outs

    def op_inline_asm(self, op: Op):
        raise InterpreterError(
            "tl.inline_asm_elementwise runs the target's own assembly (PTX, GCN), which the "
            "interpreter cannot execute: run this kernel on a GPU, or write the computation "
            "in tl operations", op.loc)

    def pointer_cast(self, op: Op, x):
        t = op.result.dtype
        if not t.is_ptr():  # the address
            return _as(addresses.address(x), t)
        elem = _np(t.element_ty)
        if isinstance(x, Pointer):
            return addresses.retype(x, elem, op.loc, Pointer)
        return addresses.to_pointer(self.env[SPACE], x, elem, op.loc, Pointer)

    # --- memory ------------------------------------------------------------------------------
    def _resolved(self, op: Op, ptr: Pointer, mask) -> Pointer:
        """A block of pointers made from integers that no one array holds, resolved again
        from the lanes the access reads: a masked-off lane may point anywhere, into
        another array (whichever the allocator put next to this one) or none."""
        if ptr.raw is None or mask is None:
            return ptr
        raw = np.asarray(ptr.raw)
        active = np.broadcast_to(np.asarray(mask, bool), raw.shape)
        if not raw.ndim or not active.any() or active.all():
            return ptr
        lanes = np.where(active, raw, raw[active][0])  # (the others: an active lane's)
        return addresses.to_pointer(self.env[SPACE], lanes, ptr.buffer.dtype, op.loc, Pointer)

    def _lanes(self, op: Op, ptr: Pointer, mask, what: str):
        if what != "load" and not ptr.buffer.flags.writeable:
            raise InterpreterError(
                f"{what} into `{ptr.name}`, a read-only NumPy array (a kernel writes its "
                "outputs in place): pass a writable array, e.g. a copy (np.array(x))",
                op.loc)
        offset = np.asarray(ptr.offset)
        active = np.ones(offset.shape, bool) if mask is None else np.asarray(mask, bool)
        if (active & (offset == addresses.UNKNOWN)).any():
            if ptr.raw is not None and addresses.SEVERAL in ptr.name:
                raise InterpreterError(
                    f"{what} through a block of pointers made from integers that point into "
                    f"{ptr.name}; the interpreter follows one array per block (load each "
                    "array's pointers separately)", op.loc)
            raise InterpreterError(
                f"{what} through a pointer made from an integer that is inside no array the "
                f"interpreter knows ({ptr.name}): pass the array to the kernel, or keep it "
                "referenced by the calling code", op.loc)
        bad = active & ((offset < 0) | (offset >= ptr.buffer.size))
        if bad.any():
            lane = int(np.flatnonzero(bad)[0]) if bad.ndim else 0
            off = int(offset.reshape(-1)[lane]) if offset.ndim else int(offset)
            where = f" (lane {lane} of the block)" if offset.ndim else ""
            raise InterpreterError(
                f"out-of-bounds {what}: element {off} of `{ptr.name}`, which has "
                f"{ptr.buffer.size} elements{where}, in program {self.pid}; "
                "mask the access or fix the offsets", op.loc)
        return offset, active

    def op_load(self, op: Op):
        ptr = self.get(op.operands[0])
        mask = self.get(op.operands[1]) if len(op.operands) > 1 else None
        t = op.result.dtype
        other = self.get(op.operands[2]) if len(op.operands) > 2 else _as(0, t)
        ptr = self._resolved(op, ptr, mask)
        offset, active = self._lanes(op, ptr, mask, "load")
        values = ptr.buffer[np.where(active, offset, 0)] if ptr.buffer.size else \
            np.zeros(offset.shape, _np(t))
        return _as(np.where(active, values, other), t)

    def op_store(self, op: Op):
        ptr = self.get(op.operands[0])
        value = self.get(op.operands[1])
        mask = self.get(op.operands[2]) if len(op.operands) > 2 else None
        ptr = self._resolved(op, ptr, mask)
        offset, active = self._lanes(op, ptr, mask, "store")
        if offset.ndim == 0:
            if active:
                ptr.buffer[int(offset)] = value
            return None
        ptr.buffer[offset[active]] = np.asarray(value)[active]
        return None

    _RMW = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
            "or": np.bitwise_or, "xor": np.bitwise_xor, "xchg": lambda old, v: v}
    _FLOAT_RMW = {"max": lambda old, v: _float_extreme(old, v, True),
                  "min": lambda old, v: _float_extreme(old, v, False)}

    def _atomic_lanes(self, op: Op, ptr: Pointer, mask, apply):
        ptr = self._resolved(op, ptr, mask)
        offset, active = self._lanes(op, ptr, mask, "atomic")
        offs = np.atleast_1d(offset)
        act = np.broadcast_to(np.atleast_1d(active), offs.shape)
        old = np.zeros(offs.shape, ptr.buffer.dtype)
        for lane in np.ndindex(offs.shape):  # one lane at a time: atomics serialize
            if act[lane]:
                i = int(offs[lane])
                old[lane] = ptr.buffer[i]
                ptr.buffer[i] = apply(lane, ptr.buffer[i])
        return old.reshape(np.shape(offset)) if np.ndim(offset) else old[0]

    def op_atomic(self, op: Op):
        ptr, val = self.get(op.operands[0]), np.asarray(self.get(op.operands[1]))
        mask = self.get(op.operands[2]) if len(op.operands) > 2 else None
        kind = op.attrs["op"]
        fn = self._FLOAT_RMW.get(kind, self._RMW[kind]) if op.result.dtype.is_floating() \
            else self._RMW[kind]
        vals = np.atleast_1d(val)
        return self._atomic_lanes(op, ptr, mask, lambda lane, old: fn(old, vals[lane]))

    def op_atomic_cas(self, op: Op):
        ptr = self.get(op.operands[0])
        cmp, val = (np.atleast_1d(np.asarray(self.get(v))) for v in op.operands[1:])
        # the hardware compares bits: -0.0 is not +0.0, and a NaN matches the same NaN
        bits = np.dtype(f"u{ptr.buffer.itemsize}")
        cmp_bits = cmp.astype(ptr.buffer.dtype).view(bits)
        return self._atomic_lanes(
            op, ptr, None,
            lambda lane, old: val[lane] if np.array(old).view(bits) == cmp_bits[lane] else old)

    def op_barrier(self, op: Op):
        return None  # one program runs at a time here

    def op_device_assert(self, op: Op):
        if not np.all(self.get(op.operands[0])):
            raise InterpreterError(f"device assertion failed: {op.attrs['msg']} "
                                   f"(program {self.pid})", op.loc)

    def op_print(self, op: Op):
        """tl.device_print: the lines the GPU prints, element by element in index order."""
        from tilecc.transpiler import print_format as F

        prefix, pid = op.attrs["prefix"], tuple(int(p) for p in self.pid)
        if not op.operands:
            print(F.python_format(F.NO_VALUES_FORMAT) % (*pid, prefix), flush=True)
        for n, v in enumerate(op.operands):
            fmt = F.python_format(F.line_format(v.type.shape, v.dtype, op.attrs["hex"], n,
                                                len(op.operands)))
            values = np.asarray(self.get(v))
            if op.attrs["hex"] and v.dtype.is_floating():  # the bits, as printf reads them
                values = values.view(f"u{max(1, v.dtype.itemsize)}")
            for index in np.ndindex(*v.type.shape):
                x = values[index] if index else values
                x = float(x) if v.dtype.is_floating() and not op.attrs["hex"] else int(x)
                if op.attrs["hex"]:
                    x &= (1 << v.dtype.bits) - 1
                print(fmt % (*pid, *index, prefix, x), flush=True)

    # --- control flow ------------------------------------------------------------------------
    def op_for(self, op: Op):
        lo, hi, step = (int(self.get(v)) for v in op.operands[:3])
        carried = [self.get(v) for v in op.operands[3:]]
        body = op.regions[0]
        iv_type = body.args[0].dtype
        for i in range(lo, hi, step):
            self.env[body.args[0].id] = _as(i, iv_type)
            for a, v in zip(body.args[1:], carried):
                self.env[a.id] = v
            carried = self.region(body)
        return carried

    def op_while(self, op: Op):
        carried = [self.get(v) for v in op.operands]
        before, body = op.regions
        while True:
            for a, v in zip(before.args, carried):
                self.env[a.id] = v
            (cond,) = self.region(before)
            if not bool(cond):
                return carried
            for a, v in zip(body.args, carried):
                self.env[a.id] = v
            carried = self.region(body)

    def op_if(self, op: Op):
        cond = np.asarray(self.get(op.operands[0]))
        if cond.ndim:  # in a combine function applied to arrays: both branches, selected
            then, other = self.region(op.regions[0]), self.region(op.regions[1])
            return [_as(np.where(cond, a, c), r.dtype) for a, c, r in zip(then, other,
                                                                          op.results)]
        taken = op.regions[0] if bool(cond) else op.regions[1]
        return self.region(taken)
