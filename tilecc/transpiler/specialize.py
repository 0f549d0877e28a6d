"""Specialization: from a signature string or from launch arguments to `ArgSpec`s.

Signature strings follow Triton's AOT convention, one comma-separated entry per parameter:
`*fp32` (pointer), `*fp16:16` (16-byte aligned pointer), `i32`, `i64:16` (multiple of 16),
`i32:8` (a multiple of 8, not of 16: tilecc's own), `i32:1` (equal to 1), `fp32`, or a bare
literal for a constexpr.  Launch arguments are
typed as Triton types them: Python int → i32 (i64 when it needs it), float → fp32,
bool → i1, NumPy scalars by their dtype, arrays → pointers to their dtype.
"""

from __future__ import annotations

import ast
import inspect
import sys
from dataclasses import dataclass
from typing import Any

from tilecc.language import dtypes as D
from tilecc.transpiler import dlpack
from tilecc.transpiler.specs import ArgSpec, DescriptorSpec, ParamDecl

TYPE_NAMES = {**D.BY_NAME, **D.BY_LONG_NAME, "f16": D.float16, "f32": D.float32,
              "f64": D.float64, "bool": D.int1}


def parse_type(text: str) -> D.dtype:
    try:
        return TYPE_NAMES[text.strip()]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(text.strip(), list(D.BY_NAME), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ValueError(f"unknown type {text!r}{hint}; the types are "
                         f"{', '.join(sorted(D.BY_NAME))}") from None


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        if text in TYPE_NAMES:
            return TYPE_NAMES[text]
        raise ValueError(f"{text!r} is not a value: give a Python literal (1024, 0.5, True, "
                         "'name') or a type name (fp32)") from None


def _is_value(entry: str) -> bool:
    """A constexpr's literal (1024, 0.5, True), not a type."""
    try:
        return not isinstance(ast.literal_eval(entry), str)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _split(signature: str) -> list[str]:
    """The entries of a signature: split at the commas outside brackets, so that a tuple
    constexpr `(16, 32)` is one entry, and a descriptor's `tensordesc<fp16[64, 64], nan>`."""
    entries, depth, start = [], 0, 0
    for i, c in enumerate(signature):
        if c in "([{" or (c == "<" and signature[start:i].strip() == "tensordesc"):
            depth += 1
        elif c in ")]}" or (c == ">" and depth and signature[start:].lstrip().startswith(
                "tensordesc")):
            depth -= 1
        elif c == "," and depth == 0:
            entries.append(signature[start:i])
            start = i + 1
    entries.append(signature[start:])
    return entries


def specs_from_signature(params: list[ParamDecl], signature: str | list[str] | None,
                         constexprs: dict[str, Any], kernel: str = "") -> list[ArgSpec]:
    """ArgSpecs from an AOT signature; constexprs may instead come as keyword values.
    `kernel`: the kernel's name, which every message starts with."""
    try:
        return _specs(params, signature, constexprs, kernel)
    except ValueError as e:
        if not kernel or str(e).startswith("kernel `"):
            raise
        raise ValueError(f"kernel `{kernel}`: {e}") from None


def _specs(params: list[ParamDecl], signature: str | list[str] | None,
           constexprs: dict[str, Any], kernel: str) -> list[ArgSpec]:
    entries = _split(signature) if isinstance(signature, str) else list(signature or [])
    entries = [str(e).strip() for e in entries if str(e).strip()]  # (16, 32) as a value too
    runtime = [p for p in params if not p.is_constexpr]
    has = (f"kernel `{kernel}` has" if kernel else "the kernel has") + \
        f" {len(params)} parameter{'s' if len(params) != 1 else ''} " \
        f"({', '.join(p.name for p in params)}), the signature gives {len(entries)}"
    short = len(entries) != len(params)  # read as the parameters that are not constexpr
    if not short:
        by_param = dict(zip((p.name for p in params), entries))
    elif len(entries) == len(runtime):
        by_param = dict(zip((p.name for p in runtime), entries))
        for i, p in enumerate(params):  # a count problem before any entry's type
            if p.is_constexpr and p.name not in constexprs and \
                    p.default is inspect.Parameter.empty:
                raise ValueError(f"{has}: constexpr `{p.name}` has no default, give its "
                                 f"value as entry {i + 1}")
    else:
        also = f" (the {len(runtime)} that are not constexpr, where every constexpr has a " \
            "default or a keyword value)" if len(runtime) != len(params) else ""
        raise ValueError(f"{has}: give one entry per parameter{also}")
    unknown = set(constexprs) - {p.name for p in params}
    if unknown:
        raise ValueError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
    specs = []
    for i, p in enumerate(params):
        if p.is_constexpr:
            if p.name in constexprs:
                value = constexprs[p.name]
            elif p.name in by_param:
                try:
                    value = _literal(by_param[p.name])
                except ValueError as e:
                    raise ValueError(f"constexpr `{p.name}` (entry {i + 1}): {e}") from None
            elif p.default is not inspect.Parameter.empty:
                value = p.default
            else:
                raise ValueError(f"{has}: constexpr `{p.name}` has no default, give its value "
                                 f"as entry {i + 1}")
            specs.append(ArgSpec(p.name, constexpr=value, is_constexpr=True))
            continue
        entry = by_param.get(p.name)
        if entry is None:
            raise ValueError(f"parameter `{p.name}` needs a type in the signature")
        if entry.strip() == "None":  # a None argument: specialized like a constexpr
            specs.append(ArgSpec(p.name, constexpr=None, is_constexpr=True))
            continue
        try:
            got = _spec_from_entry(p.name, entry)
            if isinstance(got, list):  # a tensor descriptor: its parts
                got = descriptor_specs(p.name, *got[:3], {q.name for q in params}, got[3])
                specs.extend(got)
            else:
                specs.append(got)
        except ValueError as e:
            if short and _is_value(entry):  # an entry missing before it, not a wrong type
                raise ValueError(
                    f"{has}: read as the {len(runtime)} that are not constexpr, "
                    f"`{p.name}` (entry {list(by_param).index(p.name) + 1}) would be "
                    f"{entry!r}, a value, not a type; give one entry per parameter") from None
            raise ValueError(f"parameter `{p.name}` (entry {i + 1}, {entry!r}): {e}") from None
    return specs


def _spec_from_entry(name: str, entry: str) -> ArgSpec | list[ArgSpec]:
    if entry.startswith("tensordesc"):
        return _descriptor_entry(name, entry)
    text, _, attr = entry.partition(":")
    if attr not in ("", "16", "8", "1"):
        raise ValueError(f"unknown specialization ':{attr}' (use :16, :8 or :1)")
    if text.startswith("*"):
        if attr in ("1", "8"):
            raise ValueError(f"a pointer cannot be specialized to :{attr} (use :16 for a "
                             "16-byte aligned one)")
        return ArgSpec(name, type=D.pointer_type(parse_type(text[1:])), divisible_by_16=attr == "16")
    t = parse_type(text)
    if attr and not t.is_int():
        raise ValueError("only integers take :16, :8 or :1")
    return ArgSpec(name, type=t, divisible_by_16=attr == "16", equals_one=attr == "1",
                   divisor=8 if attr == "8" else 1)


@dataclass(frozen=True)
class ArrayInfo:
    """What the launcher needs of an array argument."""

    ptr: int
    dtype: D.dtype
    device: str  # "cuda", "rocm", "cpu"
    device_id: int
    framework: str  # "torch", "cupy", "other"


def array_info(x: Any) -> ArrayInfo | None:
    """Pointer, dtype and device of an array argument, or None if `x` is not an array."""
    mod = type(x).__module__ or ""
    if mod.startswith("torch"):
        import torch

        if isinstance(x, torch.Tensor):
            dev = x.device
            kind = "cpu" if dev.type == "cpu" else ("rocm" if getattr(torch.version, "hip", None)
                                                   else "cuda")
            return ArrayInfo(x.data_ptr(), _torch_dtype(x.dtype), kind, dev.index or 0, "torch")
    cai = getattr(x, "__cuda_array_interface__", None)
    np = sys.modules.get("numpy")  # not imported yet: `x` is no NumPy array
    if cai is not None:
        dev_id = x.device.id if hasattr(x, "device") and hasattr(x.device, "id") else 0
        cupy = sys.modules.get("cupy") if mod.startswith("cupy") else None
        # CuPy built for ROCm keeps CUDA's array interface: its arrays are on an AMD GPU
        on_rocm = cupy is not None and getattr(getattr(getattr(cupy, "cuda", None), "runtime",
                                                       None), "is_hip", False)
        # a CuPy array's own dtype: its interface spells bfloat16 and the float8 types as
        # anonymous bytes ("<V2", "<V1"), which the warm launch tells apart by dtype too
        dtype = D.from_numpy(getattr(x, "dtype", None) if cupy is not None and
                             hasattr(x, "dtype") else cai["typestr"])
        return ArrayInfo(cai["data"][0], dtype, "rocm" if on_rocm else "cuda", dev_id,
                         "cupy" if cupy else "other")
    if np is not None and isinstance(x, np.ndarray):
        return ArrayInfo(x.ctypes.data, D.from_numpy(x.dtype), "cpu", 0, "numpy")
    if hasattr(x, "__dlpack_device__"):
        dev_type, dev_id = x.__dlpack_device__()
        kind = dlpack.DEVICES.get(int(dev_type), "other")
        if kind in ("cuda", "rocm"):
            got = dlpack.read(x, int(dev_type), int(dev_id))
            if got is None:  # a versioned capsule only: CuPy reads it
                import cupy

                arr = cupy.from_dlpack(x)
                return ArrayInfo(arr.data.ptr, D.from_numpy(arr.dtype), kind, int(dev_id),
                                 "other")
            return ArrayInfo(got[0], dlpack.element_type(*got[1:]), kind, int(dev_id), "other")
        return ArrayInfo(0, D.int8, kind, int(dev_id), "other")
    if callable(getattr(x, "data_ptr", None)) and hasattr(x, "dtype"):
        return _pointer_convention(x)
    return None


def _pointer_convention(x: Any) -> ArrayInfo:
    """Triton's rule for what else is a pointer argument: an object with `data_ptr()` and
    a `dtype` (the language's, or torch's): a tensor read as another type (`reinterpret`'s
    TensorWrapper), or a tensor that is not there (MockTensor, for kernel.warmup)."""
    dtype = x.dtype
    if isinstance(dtype, D.dtype):
        element = dtype
    elif type(dtype).__name__ == "dtype" and str(dtype) in D.BY_TRITON_NAME:  # Triton's
        element = D.BY_TRITON_NAME[str(dtype)]
    else:
        element = _torch_dtype(dtype)
    device = getattr(x, "device", None)
    kind = getattr(device, "type", "other") if device is not None else "other"
    if kind == "cuda" and getattr(sys.modules.get("torch"), "version", None) is not None and \
            getattr(sys.modules["torch"].version, "hip", None):
        kind = "rocm"
    framework = "torch" if device is not None and type(device).__module__ == "torch" else "other"
    return ArrayInfo(x.data_ptr(), element, kind, getattr(device, "index", None) or 0, framework)


def _torch_dtype(t) -> D.dtype:
    name = str(t).replace("torch.", "")
    aliases = {"bool": "int1", "half": "float16", "float": "float32", "double": "float64",
               # torch's float8 types, by Triton's names for them
               "float8_e4m3fn": "float8e4nv", "float8_e5m2": "float8e5",
               "float8_e4m3fnuz": "float8e4b8", "float8_e5m2fnuz": "float8e5b16"}
    name = aliases.get(name, name)
    if name not in D.BY_LONG_NAME:
        raise TypeError(f"torch dtype {t} is not supported")
    return D.BY_LONG_NAME[name]


def scalar_type(value: Any) -> D.dtype | None:
    """The kernel type of a scalar argument, or None if `value` is not a scalar."""
    np = sys.modules.get("numpy")  # not imported yet: `value` is no NumPy scalar
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        return D.int1
    if np is not None and isinstance(value, np.generic):
        return D.from_numpy(value.dtype)
    if isinstance(value, int):
        # Triton's launcher types integer arguments i32, else i64, else u64 (no u32,
        # unlike literals inside a kernel); float arguments are fp32 whatever their size
        for d in (D.int32, D.int64, D.uint64):
            if d.min <= value <= d.max:
                return d
        raise OverflowError(f"integer argument {value} does not fit in 64 bits")
    if isinstance(value, float):
        return D.float32
    return None


# --- host-side tensor descriptors --------------------------------------------------------------

MAX_BLOCK_NUMEL = 1 << 20  # Triton's largest block


def is_host_descriptor(x: Any) -> bool:
    """A host-side tensor descriptor (tilecc's `TensorDescriptor`, or Triton's): an object
    of that name with a base tensor, shape, strides and block shape."""
    return type(x).__name__ == "TensorDescriptor" and all(
        hasattr(x, a) for a in ("base", "shape", "strides", "block_shape"))


def check_block_shape(block_shape) -> tuple[int, ...]:
    """Triton's checks of a descriptor's block shape: ints, powers of 2, at most 2**20
    elements."""
    numel = 1
    for i, d in enumerate(block_shape):
        if isinstance(d, bool) or not isinstance(d, int):
            raise TypeError(f"block_shape element {i} must be an int, got {type(d).__name__}")
        if d <= 0 or d & (d - 1):
            raise ValueError(f"block_shape element {i} must be a power of 2, got {d}")
        numel *= d
    if numel > MAX_BLOCK_NUMEL:
        raise ValueError(f"block_shape {list(block_shape)}: numel ({numel}) exceeds the "
                         f"largest block ({MAX_BLOCK_NUMEL})")
    return tuple(block_shape)


def descriptor_specs(name: str, elem: D.dtype, block_shape: tuple[int, ...], padding: str,
                     taken: set[str], shape: list[int] | None = None) -> list[ArgSpec]:
    """The ArgSpecs a tensor descriptor parameter is passed as: `<name>_base` (a pointer
    to its elements, carrying the DescriptorSpec), `<name>_shape<i>` (i32; specialized on
    being a multiple of 16 as integer arguments are, when the launch's `shape` is given)
    and `<name>_stride<i>` (i64; the last is 1, compiled in).  Names that a parameter of
    the kernel already has get a trailing `_`."""
    def fresh(n: str) -> str:
        while n in taken:
            n += "_"
        taken.add(n)
        return n
    ndim = len(block_shape)
    head = ArgSpec(fresh(f"{name}_base"), type=D.pointer_type(elem), divisible_by_16=True,
                   descriptor=DescriptorSpec(name, tuple(block_shape), padding))
    shapes = [ArgSpec(fresh(f"{name}_shape{i}"), type=D.int32,
                      divisible_by_16=shape is not None and shape[i] % 16 == 0)
              for i in range(ndim)]
    strides = [ArgSpec(fresh(f"{name}_stride{i}"), type=D.int64, equals_one=i == ndim - 1)
               for i in range(ndim)]
    return [head, *shapes, *strides]


def _descriptor_entry(name: str, entry: str) -> list:
    """`tensordesc<fp16[64, 64]>` (Triton's spelling), optionally `tensordesc<fp16[64, 64],
    nan>`, and `:16` where the dims are multiples of 16: [element type, block shape,
    padding, a shape with the dims' divisibility]."""
    import re

    m = re.fullmatch(r"tensordesc<\s*(\w+)\s*\[([\d\s,]*)\]\s*(?:,\s*(\w+)\s*)?>"
                     r"(:16)?", entry)
    if m is None:
        raise ValueError("a tensor descriptor's entry is tensordesc<TYPE[D0, D1, ...]> "
                         "(e.g. tensordesc<fp16[64, 64]>), with `, nan` for NaN padding "
                         "and `:16` after it when its dims are multiples of 16")
    block = tuple(int(x) for x in m.group(2).split(",") if x.strip())
    if not 1 <= len(block) <= 5:
        raise ValueError(f"a tensor descriptor has 1 to 5 dims, got {len(block)}")
    padding = m.group(3) or "zero"
    if padding not in ("zero", "nan"):
        raise ValueError(f"padding is zero or nan, got {padding!r}")
    return [parse_type(m.group(1)), check_block_shape(block), padding,
            [16 if m.group(4) else 1] * len(block)]


def descriptor_problem(shape, strides, block_shape, padding) -> str | None:
    """What makes a host descriptor invalid as Triton's `TensorDescriptor` checks it at
    creation (the block shape: `check_block_shape`), or None."""
    ndim = len(shape)
    if not 1 <= ndim <= 5 or len(strides) != ndim or len(block_shape) != ndim:
        return ("shape, strides and block_shape need one entry per dimension, 1 to 5 of "
                f"them, got {list(shape)}, {list(strides)}, {list(block_shape)}")
    if strides[-1] != 1:
        return f"the last dimension must be contiguous (stride 1), got strides {list(strides)}"
    if padding not in ("zero", "nan"):
        return f"padding is 'zero' or 'nan', got {padding!r}"
    return None


def descriptor_arguments(name: str, desc: Any) -> tuple[Any, list[int]]:
    """A launch's host descriptor checked as Triton checks it: (its base array, its shape
    and strides as the ints the kernel takes after the base)."""
    where = f"argument `{name}` (a TensorDescriptor)"
    shape, strides = list(desc.shape), list(desc.strides)
    problem = descriptor_problem(shape, strides, desc.block_shape,
                                 getattr(desc, "padding", "zero"))
    if problem:
        raise ValueError(f"{where}: {problem}")
    check_block_shape(desc.block_shape)
    for i, n in enumerate(shape):
        if not 0 <= int(n) < 2 ** 31:
            raise ValueError(f"{where}: shape[{i}] = {n} is not a 32-bit size")
    return desc.base, [int(n) for n in shape] + [int(s) for s in strides]


def descriptor_argument_specs(name: str, desc: Any, taken: set[str]) -> tuple[list[ArgSpec],
                                                                              list]:
    """A host-side TensorDescriptor argument: the ArgSpecs it is passed as and what is
    passed for them (its base array's `ArrayInfo`, its shape and strides but the last,
    which is 1 and compiled in), with Triton's launch checks too (a 16-byte aligned base,
    strides that are multiples of 16 bytes but the last, NaN padding of floats only)."""
    base, values = descriptor_arguments(name, desc)
    arr = array_info(base)
    where = f"argument `{name}` (a TensorDescriptor)"
    if arr is None:
        raise TypeError(f"{where}: its base must be an array, got {type(base).__name__}")
    if arr.ptr % 16:
        raise ValueError(f"{where}: its base must be 16-byte aligned (address % 16 = "
                         f"{arr.ptr % 16})")
    size = max(arr.dtype.bits // 8, 1)
    ndim = len(values) // 2
    bad = [s for s in values[ndim:-1] if s * size % 16]
    if bad:
        raise ValueError(f"{where}: its strides {values[ndim:]} must be multiples of 16 "
                         f"bytes, but the last: {bad[0]} elements of {size} bytes is not "
                         "(pad the rows, as Triton's descriptors need it too)")
    padding = getattr(desc, "padding", "zero")
    if padding == "nan" and not arr.dtype.is_floating():
        raise ValueError(f"{where}: padding `nan` needs a floating-point tensor, got "
                         f"{arr.dtype!r}")
    return (descriptor_specs(name, arr.dtype, tuple(desc.block_shape), padding, taken,
                             values[:ndim]), [arr, *values[:-1]])
