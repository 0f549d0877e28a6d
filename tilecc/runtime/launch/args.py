"""Launch arguments, for either backend: binding, the warm key, device checks, the grid,
and the argument block the kernel receives.

The warm key of a launch holds, per parameter, what `JITFunction.specs_for` specializes
on (array: dtype, pointer % 16, device; int: i32/i64/u64, % 16, == 1; float; bool;
constexpr: its type and value), and the launch options when any is given (`launch_key`,
the one place that adds them).  `arg_key` computes it for any arguments; `make_binder`
generates it as straight-line code for one set of argument types, and with it the
kernel's warm launch (`binder.direct`), whose last steps the backend's launcher class
supplies (`direct_tail`: packing and cuLaunchKernel for CUDA).

Nothing here imports a GPU framework or driver: arrays are read through their own
attributes (`data_ptr()`, `.data.ptr`, `__cuda_array_interface__`).
"""

from __future__ import annotations

import os
import struct
import sys
import threading
from typing import Any, Callable, NamedTuple

from tilecc.errors import HostArrayError
from tilecc.runtime.options import DEFAULT_NUM_WARPS, LAUNCH_OPTIONS
from tilecc.transpiler import dlpack
from tilecc.transpiler.grid import normalize_grid
from tilecc.transpiler.specialize import ArrayInfo

# --- the interpreter switch, read cheaply -------------------------------------------------------

# os.environ.get costs ~1 µs for a missing name (a KeyError raised and caught); the
# mapping underneath answers the same question in ~50 ns.
try:
    _env_get = os.environ._data.get  # type: ignore[attr-defined]
    _INTERPRET_KEY = os.environ.encodekey("TILECC_INTERPRET")  # type: ignore[attr-defined]
    _ONE = os.environ.encodevalue("1")  # type: ignore[attr-defined]
except AttributeError:
    _env_get, _INTERPRET_KEY, _ONE = os.environ.get, "TILECC_INTERPRET", "1"


def interpret_requested() -> bool:
    """TILECC_INTERPRET=1: ordinary launches run on the interpreter."""
    return _env_get(_INTERPRET_KEY) == _ONE


# --- binding and launch options ----------------------------------------------------------------

_NO = _MISSING = object()  # a launch option (or an argument) not given


_OPTION_NAMES = frozenset(LAUNCH_OPTIONS)


def bind_fast(names: tuple[str, ...], args: tuple, kwargs: dict):
    """Positional arguments followed by keyword ones, in parameter order, and the launch
    options given; (None, None) when anything is unusual (defaults, misspelt or repeated
    names: `JITFunction.bind` then binds and reports)."""
    n = len(args)
    if n > len(names):
        return None, None
    values = list(args)
    for name in names[n:]:
        v = kwargs.get(name, _MISSING)
        if v is _MISSING or name in _OPTION_NAMES:  # a parameter named like an option
            return None, None                        # takes both roles: the careful path
        values.append(v)
    used = len(names) - n
    if used == len(kwargs):
        return values, None
    options = {k: kwargs[k] for k in LAUNCH_OPTIONS if k in kwargs}
    if used + len(options) != len(kwargs):
        return None, None
    return values, options


def ordered_options(given: dict) -> tuple:
    """Launch options given by name, in LAUNCH_OPTIONS' order (`_NO` where not given)."""
    return tuple(given.get(name, _NO) for name in LAUNCH_OPTIONS)


def launch_key(key, *options):
    """The warm key of a launch: the arguments' key alone when no launch option is given,
    else the key and the options as given (`_NO` where not), in LAUNCH_OPTIONS' order.
    The general path calls it; the generated warm launch writes the same tuple inline
    from LAUNCH_OPTIONS (a call would cost as much as the rest of the options' key), so
    a launcher filed by one is found by the other."""
    if all(o is _NO for o in options):
        return key
    return (key, *options, *(_NO,) * (len(LAUNCH_OPTIONS) - len(options)))


# --- the grid (normalize_grid: transpiler/grid.py, which the interpreter shares) ---------------

def resolve_grid(grid, named: dict, *options):
    """(x, y, z) of a grid as given at a launch: a callable gets the arguments by name,
    the launch options given (in LAUNCH_OPTIONS' order) and num_warps (4 unless given)."""
    if callable(grid):
        meta = named
        for name, value in zip(LAUNCH_OPTIONS, options):
            if value is not _NO:
                meta[name] = value
        if meta.get("num_warps", _NO) is _NO:
            meta["num_warps"] = DEFAULT_NUM_WARPS
        grid = grid(meta)
    return normalize_grid(grid)


# --- device checks -----------------------------------------------------------------------------

def device_arrays(specs, passed) -> tuple[list[ArrayInfo], str, int | None]:
    """The array arguments of a specialization (`JITFunction.specs_for`'s result), the
    backend they live on and their device (None: no arrays, the current device decides).
    Host arrays and arrays on different devices are errors that name them."""
    # a descriptor's tensor is named by the argument the caller passed, the descriptor
    names = [f"`{s.descriptor.param}`'s tensor" if s.descriptor is not None else f"`{s.name}`"
             for s in specs if not s.is_constexpr and not s.equals_one]
    arrays = []
    for name, a in zip(names, passed):
        if not isinstance(a, ArrayInfo):
            continue
        if a.device not in ("cuda", "rocm"):
            raise HostArrayError(f"argument {name} is a host ({a.framework}) array; a GPU "
                              "launch needs device arrays (CuPy, torch CUDA tensors, ...) — "
                              "or run on the interpreter with kernel.interpret[grid](...) or "
                              "TILECC_INTERPRET=1")
        arrays.append((name, a))
    devices = {a.device_id for _, a in arrays}
    if len(devices) > 1:
        where = ", ".join(f"{name} on {a.device}:{a.device_id}" for name, a in arrays)
        raise ValueError(f"array arguments are on different devices: {sorted(devices)} "
                         f"({where}); a kernel launches on one device: move them to the "
                         "same one (e.g. x.to(y.device))")
    arrays = [a for _, a in arrays]
    backend = "hip" if any(a.device == "rocm" for a in arrays) else "cuda"
    return arrays, backend, devices.pop() if devices else None


# --- the warm key ------------------------------------------------------------------------------

# argument type -> how the warm path reads it; filled in as types are first seen
_INT, _FLOAT, _BOOL, _TORCH, _CUPY, _CAI, _OTHER, _DESC = range(8)
_NP_INT, _NP_FIXED, _DLPACK = range(8, 11)  # (NumPy scalars, DLPack: see "kinds" below)
_KINDS: dict[type, int] = {int: _INT, float: _FLOAT, bool: _BOOL}

# constexpr values of these types go into the key as they are (with their type: 1, 1.0
# and True are equal and hash alike, but specialize differently)
_PLAIN = frozenset((int, float, bool, str, type(None)))

_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_U64_MAX = (1 << 64) - 1


def _kind_of(t: type) -> int:
    torch = sys.modules.get("torch")
    if torch is not None and issubclass(t, torch.Tensor):
        kind = _TORCH
    elif (t.__module__ or "").startswith("cupy") and hasattr(t, "data") and \
            hasattr(t, "__cuda_array_interface__"):
        kind = _CUPY
    elif hasattr(t, "__cuda_array_interface__"):
        kind = _CAI
    elif t.__name__ == "TensorDescriptor" and "block_shape" in getattr(
            t, "__dataclass_fields__", ()):  # tilecc's or Triton's host-side descriptor
        kind = _DESC
    else:
        kind = _numpy_or_dlpack_kind(t)
    _KINDS[t] = kind
    return kind


# --- kinds read without a framework: NumPy scalars, DLPack objects ------------------------------

def _numpy_or_dlpack_kind(t: type) -> int:
    """NumPy scalars whose type fixes the specialization and that `struct` packs as they
    are: ints (keyed on == 1 and % 16, as Python ints), bool_, float16/32/64 (others —
    ml_dtypes' bfloat16, long double — take the slow path, which converts them).  DLPack
    objects other than NumPy arrays (host arrays: the slow path refuses them)."""
    np = sys.modules.get("numpy")  # not imported yet: `t` is no NumPy type
    if np is not None and issubclass(t, np.generic):
        if issubclass(t, np.integer):
            return _NP_INT
        if issubclass(t, np.bool_) or t in (np.float16, np.float32, np.float64):
            return _NP_FIXED
        return _OTHER
    if hasattr(t, "__dlpack__") and hasattr(t, "__dlpack_device__") and \
            not (np is not None and issubclass(t, np.ndarray)):
        return _DLPACK
    return _OTHER


def dlpack_key(v, device, stream) -> tuple[int, tuple | None]:
    """A DLPack argument's pointer and part of the warm key, from its `__dlpack_device__()`
    and the capsule it exports for `stream` (the launch's, which the producer is told:
    `_exchange_stream`): `dlpack.warm_key`, which the generated warm launch calls on the
    capsule directly."""
    on_gpu = device[0] == dlpack.DL_CUDA or device[0] == dlpack.DL_ROCM  # host: not asked
    return dlpack.warm_key(v.__dlpack__(stream=stream) if on_gpu else None, device)


def _exchange_stream(values) -> Callable:
    """How DLPack arguments learn the launch's stream — asked once per launch, on the
    first DLPack argument's device (arrays on several devices do not launch): torch's
    current one where a torch tensor is among the arguments (the launch goes there,
    `cuda.stream_getter`), else the one a launch of other arrays takes."""
    for v in values:
        kind = _KINDS.get(type(v))
        if (_kind_of(type(v)) if kind is None else kind) == _TORCH:
            return dlpack.torch_exchange_stream
    return dlpack.exchange_stream


def _wide(v: int) -> str:
    """The key of an int outside i32 (Triton: i64, then u64; wider is an error)."""
    if _I64_MIN <= v <= _I64_MAX:
        return "i64/16" if v & 15 == 0 else "i64/8" if v & 7 == 0 else "i64"
    if 0 <= v <= _U64_MAX:
        return "u64/16" if v & 15 == 0 else "u64/8" if v & 7 == 0 else "u64"
    return "too wide"  # never cached: the slow path raises OverflowError


def arg_key(constexpr_flags: tuple[bool, ...], values) -> tuple[list, list] | None:
    """(key, values) for the warm path, or None when some argument needs the slow path.
    The key holds, per parameter, what `JITFunction.specs_for` specializes on; the values
    are those of the run-time (not constexpr) parameters in order, pointers and scalars as
    Python numbers — ints equal to 1 included: `ArgBuffer` packs them, but the kernel,
    which has 1 compiled in, is not given them.

    The generic form of what `make_binder` generates for one set of argument types.
    Pure Python over the arguments: no GPU, no framework calls beyond reading pointers,
    dtypes and devices."""
    key: list = []
    out: list = []
    stream = _NO  # the launch's stream, for DLPack arguments (asked at the first)
    for is_ce, v in zip(constexpr_flags, values):
        t = type(v)
        if is_ce:
            if t not in _PLAIN:
                if t.__name__ == "constexpr" and hasattr(v, "value"):
                    v = v.value  # tl.constexpr(x) specializes as x
                    t = type(v)
                if hasattr(v, "__cuda_array_interface__") or hasattr(v, "data_ptr"):
                    return None  # an array as a constexpr: the slow path explains
            key.append(t)
            key.append(v)
            continue
        if v is None:  # specialized like a constexpr (`specs_for`): no run-time value
            key.append(None)
            continue
        kind = _KINDS.get(t)
        if kind is None:
            kind = _kind_of(t)
        if kind == _TORCH:
            ptr = v.data_ptr()
            key.append((v.dtype, ptr & 15 == 0, v.get_device()))
            out.append(ptr)
        elif kind == _INT:
            if _I32_MIN <= v <= _I32_MAX:
                key.append("=1" if v == 1 else "i32/16" if v & 15 == 0 else
                           "i32/8" if v & 7 == 0 else "i32")
            else:
                key.append(_wide(v))
            out.append(v)
        elif kind == _FLOAT:
            key.append("fp32")
            out.append(v)
        elif kind == _CUPY:
            mem = v.data
            ptr = mem.ptr
            key.append((v.dtype, ptr & 15 == 0, mem.device_id))
            out.append(ptr)
        elif kind == _BOOL:
            key.append("i1")
            out.append(v)
        elif kind == _CAI:
            cai = v.__cuda_array_interface__
            ptr = cai["data"][0]
            dev = getattr(v, "device", None)
            key.append(("cai", cai["typestr"], ptr & 15 == 0, getattr(dev, "id", 0)))
            out.append(ptr)
        elif kind == _NP_INT:
            i = int(v)
            key.append((t, "=1" if i == 1 else 16 if i & 15 == 0 else 8 if i & 7 == 0 else 1))
            out.append(i)
        elif kind == _NP_FIXED:
            key.append(t)
            out.append(v)
        elif kind == _DLPACK:
            device = v.__dlpack_device__()
            if stream is _NO:
                stream = _exchange_stream(values)(*device)
            ptr, part = dlpack_key(v, device, stream)
            if part is None:
                return None
            key.append(part)
            out.append(ptr)
        elif kind == _DESC:
            got = _descriptor_key(v)
            if got is None:
                return None
            key.append(got[0])
            out += got[1]
        else:
            return None
    return key, out


def _descriptor_key(d) -> tuple[tuple, list] | None:
    """A host-side tensor descriptor's part of the warm key, and the values it is passed
    as (`specialize.descriptor_specs`); None (the slow path, which checks and explains)
    where its base is not a torch tensor or CuPy array or its last stride is not 1.
    The strides' residues mod 16 are in the key (the kernel relies on their being
    multiples of 16 bytes, which the slow path checks for each new residue), and which
    dims are multiples of 16 (specialized on, as integer arguments are)."""
    base, strides = d.base, d.strides
    kind = _KINDS.get(type(base))
    if kind is None:
        kind = _kind_of(type(base))
    if kind == _TORCH:
        ptr, device = base.data_ptr(), base.get_device()
    elif kind == _CUPY:
        ptr, device = base.data.ptr, base.data.device_id
    else:
        return None
    if strides[-1] != 1:
        return None
    return (("desc", base.dtype, ptr & 15 == 0, device, tuple(d.block_shape), d.padding,
             tuple(n & 15 == 0 for n in d.shape), tuple(s & 15 for s in strides)),
            [ptr, *d.shape, *strides])


# --- the generated warm launch -----------------------------------------------------------------

class Variant(NamedTuple):
    """One binder's part of a generated warm launch: its type checks, lines, key and
    values (Python expressions), the name of its launchers' dict, the backend's `tail`,
    and the names its lines read (`env`)."""
    guards: list
    body: list
    key: list
    out: list
    bound: str
    tail: Callable
    env: dict


def _dlpack_lines(a: str, i: int, stream: str | None, fast: bool) -> list[str]:
    """A DLPack argument's pointer `p{i}`, device word `v{i}` and dtype word `w{i}`
    (`dlpack.read_capsule`, inline where `fast`, `dlpack.inline_reader`: no call per
    argument where the capsule's name was read before), from the capsule it exports for
    the launch's stream `_tc_xs`.  The first (`stream`: how the launch's stream is found)
    asks its producer for the device, which names the stream, and is the launch's device
    (`_tc_gpu`: a GPU); the others are not asked — their capsules say where they are, and
    the key holds it.  A producer that refuses the stream (an array on the host, which
    takes none) leaves no capsule: the general path then decides, asking each."""
    if stream is not None:
        lines = [f"d{i} = {a}.__dlpack_device__()",
                 f"_tc_gpu = d{i}[0] == 2 or d{i}[0] == 10",  # (CUDA, ROCm)
                 f"_tc_xs = {stream}(*d{i}) if _tc_gpu else None",
                 f"c{i} = {a}.__dlpack__(stream=_tc_xs) if _tc_gpu else None"]
    else:
        lines = ["try:",
                 f"    c{i} = {a}.__dlpack__(stream=_tc_xs) if _tc_gpu else None",
                 "except Exception:",
                 f"    c{i} = None"]
    if fast:
        lines += [f"n{i} = _tc_capsule_fields(_tc_memory, id(c{i}) + _tc_head) "
                  f"if type(c{i}) is _tc_capsule else (0, 0)",
                  f"if n{i}[1] in _tc_names:",
                  f"    p{i}, v{i}, w{i}, o{i} = _tc_dltensor(_tc_memory, n{i}[0])",
                  f"    p{i} += o{i}",
                  "else:",
                  f"    p{i}, v{i}, w{i} = _tc_dlpack_read(c{i})"]
    else:
        lines.append(f"p{i}, v{i}, w{i} = _tc_dlpack_read(c{i})")
    return lines


def make_binder(constexpr_flags: tuple[bool, ...], values, param_names: tuple[str, ...] = (),
                bound: dict | None = None, launcher_cls: type | None = None,
                variant: int = 0) -> Callable | None:
    """Generate `arg_key` specialized to the argument types of `values`: straight-line code
    that checks each argument's type (`type(a) is T`) and returns (key, values) — or None
    when a type differs (the caller then uses `arg_key`).  Types fixed by the checks are
    left out of the key.  About twice as fast as the loop; None when some argument is of
    a kind the generator does not handle (non-plain constexprs, bfloat16 scalars, ...).

    With the parameters' names, the `bound` dict (key → launcher) and the launchers' class
    (which supplies the last steps, `direct_tail`), the binder also carries
    `binder.direct`: the whole warm launch in one generated function (see
    `_direct_source`), and `binder.variant`, its parts, from which `combined_direct` makes
    one warm launch of several binders (`variant`: this one's number among them, which
    names what its lines read)."""
    n = len(values)
    env: dict[str, Any] = {"_wide": _wide}
    guards, body, key, out = [], [], [], []
    stream = f"_tc_dlpack_stream_{variant}"  # (per variant: torch's stream, or CuPy's)
    dlpack_args: list[int] = []  # (their capsules' reads are checked by the binder)
    checked: list[str] = []  # descriptors' flags: whether the binder may key them
    for i, (is_ce, v) in enumerate(zip(constexpr_flags, values)):
        a, t = f"a{i}", type(v)
        env[f"T{i}_{variant}"] = t
        guards.append(f"type({a}) is not T{i}_{variant}")
        if is_ce:
            if t not in _PLAIN:
                return None
            key.append(a)
            continue
        kind = _KINDS.get(t)
        if kind is None:
            kind = _kind_of(t)
        if kind == _TORCH:
            body.append(f"p{i} = {a}.data_ptr()")
            key += [f"{a}.dtype", f"p{i} & 15 == 0", f"{a}.get_device()"]
            out.append(f"p{i}")
        elif kind == _CUPY:
            body.append(f"m{i} = {a}.data")
            body.append(f"p{i} = m{i}.ptr")
            key += [f"{a}.dtype", f"p{i} & 15 == 0", f"m{i}.device_id"]
            out.append(f"p{i}")
        elif kind == _CAI:
            body.append(f"c{i} = {a}.__cuda_array_interface__")
            body.append(f"p{i} = c{i}['data'][0]")
            key += [f"c{i}['typestr']", f"p{i} & 15 == 0",
                    f"getattr(getattr({a}, 'device', None), 'id', 0)"]
            out.append(f"p{i}")
        elif kind == _INT:
            key.append(f"((\"=1\" if {a} == 1 else \"i32/16\" if {a} & 15 == 0 else \"i32/8\" "
                       f"if {a} & 7 == 0 else \"i32\") "
                       f"if -2147483648 <= {a} <= 2147483647 else _wide({a}))")
            out.append(a)
        elif kind in (_FLOAT, _BOOL, _NP_FIXED):
            out.append(a)  # fp32 / i1 / the NumPy scalar's type: fixed by the type check
        elif kind == _NP_INT:  # the type is checked; == 1, % 16 and % 8 are keyed
            body.append(f"i{i} = int({a})")
            key.append(f"(\"=1\" if i{i} == 1 else 16 if i{i} & 15 == 0 else 8 if i{i} & 7 == 0 "
                       "else 1)")
            out.append(f"i{i}")
        elif kind == _DLPACK:  # (w: UNREAD where the capsule cannot be read)
            first = stream not in env  # the first asks for the launch's stream, once
            fast, names = dlpack.inline_reader()
            if first:
                env.update(names, **{stream: _exchange_stream(values)})
            body += _dlpack_lines(a, i, stream if first else None, fast)
            dlpack_args.append(i)
            key += [f"v{i}", f"w{i}", f"p{i} & 15 == 0"]
            out.append(f"p{i}")
        elif kind == _DESC:  # (q: False where the slow path must see it)
            lines_key_out = _descriptor_lines(a, i, v, variant, env)
            if lines_key_out is None:
                return None
            guard, lines, part, values_out = lines_key_out
            guards.append(guard)
            body += lines
            key.append(part)
            out += values_out
            checked.append(f"q{i}")
        else:
            return None
    names = ", ".join(f"a{i}" for i in range(n)) + ("," if n == 1 else "")
    lines = ["def binder(values):", f"    {names} = values" if n else "    pass"]
    if guards:
        lines.append(f"    if {' or '.join(guards)}:")
        lines.append("        return None")
    lines += [f"    {b}" for b in body]
    # arguments the binder cannot key (a capsule unread, dlpack.UNREAD; a descriptor of
    # another rank or last stride): nothing is filed under such a key
    unkeyed = [f"w{i} is None" for i in dlpack_args] + [f"not {q}" for q in checked]
    if unkeyed:
        lines.append(f"    if {' or '.join(unkeyed)}:")
        lines.append("        return None")
    lines.append(f"    return ({', '.join(key)}{',' if len(key) == 1 else ''}), "
                 f"[{', '.join(out)}]")
    exec(compile("\n".join(lines), "<tilecc launch binder>", "exec"), env)
    binder = env["binder"]
    binder.source = "\n".join(lines)
    binder.direct = None
    binder.bound = bound  # this binder's key -> launcher (its own key space)
    usable = len(param_names) == n and all(
        m.isidentifier() and not m.startswith("_tc_") and m not in LAUNCH_OPTIONS
        for m in param_names)
    tail = getattr(launcher_cls, "direct_tail", None)
    if bound is not None and usable and tail is not None:
        env[f"_tc_bound_{variant}"] = bound
        binder.variant = Variant(guards, body, key, out, f"_tc_bound_{variant}", tail, env)
        binder.direct = combined_direct(param_names, [binder])
    return binder


def _descriptor_lines(a: str, i: int, d, variant: int, env: dict):
    """What a generated warm launch reads of host-side descriptor `a` (argument `i`, like
    `d`): the guard on its base's type (after the descriptor's own), its lines, its part of
    the key — `_descriptor_key`'s, unrolled for `d`'s rank, None where `q{i}` is False
    (another rank, a last stride other than 1: nothing is filed under None, so the general
    path decides) — and its values.  None where the base is of no kind read here."""
    base = d.base
    kind = _KINDS.get(type(base))
    if kind is None:
        kind = _kind_of(type(base))
    rank = len(d.block_shape)
    if kind not in (_TORCH, _CUPY) or rank == 0 or len(d.shape) != rank or \
            len(d.strides) != rank:
        return None
    env[f"B{i}_{variant}"] = type(base)
    lines = [f"b{i} = {a}.base"]
    if kind == _TORCH:
        lines.append(f"p{i} = b{i}.data_ptr()")
        device = f"b{i}.get_device()"
    else:
        lines += [f"m{i} = b{i}.data", f"p{i} = m{i}.ptr"]
        device = f"m{i}.device_id"
    lines += [f"sh{i}, st{i}, bs{i} = {a}.shape, {a}.strides, {a}.block_shape",
              f"q{i} = len(sh{i}) == {rank} and len(st{i}) == {rank} and "
              f"len(bs{i}) == {rank} and st{i}[{rank - 1}] == 1"]
    dims = range(rank)
    part = (f"(b{i}.dtype, p{i} & 15 == 0, {device}, "
            f"{', '.join(f'bs{i}[{j}]' for j in dims)}, {a}.padding, "
            f"{', '.join(f'sh{i}[{j}] & 15 == 0' for j in dims)}, "
            f"{', '.join(f'st{i}[{j}] & 15' for j in dims)}) if q{i} else None")
    values = [f"p{i}", *(f"sh{i}[{j}]" for j in dims), *(f"st{i}[{j}]" for j in dims)]
    return f"type({a}.base) is not B{i}_{variant}", lines, part, values


def combined_direct(param_names: tuple[str, ...], binders: list) -> Callable:
    """One warm launch (`_direct_source`) that takes the argument types of every binder in
    `binders` (made by `make_binder` with distinct `variant`s), each tested in turn: torch
    tensors and CuPy arrays launched in turn cost a type test, not a call."""
    direct, tail_env = _direct_source(param_names, [b.variant for b in binders])
    env: dict[str, Any] = {}
    for b in binders:
        env.update(b.variant.env)
    env.update(tail_env)
    env.update(_tc_resolve_grid=resolve_grid, _tc_hand_off=hand_off,
               _NO=_NO, _MISSING=_MISSING, _tc_option_names=_OPTION_NAMES,
               _tc_no_options=(_NO,) * len(LAUNCH_OPTIONS),
               _tc_launches=sys.modules[__name__.rsplit(".", 1)[0]],
               _tc_env_get=_env_get, _tc_interpret_key=_INTERPRET_KEY, _tc_one=_ONE)
    exec(compile(direct, "<tilecc direct launch>", "exec"), env)
    fn = env["direct"]
    fn.source = direct
    return fn


def declined(*args, **kwargs) -> bool:
    """A generated warm launch's `_tc_decline` where `launch.run` calls it: False (run then
    takes the general path itself)."""
    return False


def _direct_source(names, variants) -> tuple[str, dict]:
    """A warm launch as one function of the grid and the kernel's own parameters (Python
    binds them, as it binds any call; launch options arrive in `**_tc_opts`, which costs
    one test where none is given).  Per `Variant` (a binder's), in turn: where the
    arguments' types are its own, its lines and key, the launcher looked up, the
    backend's `prepare` lines (CUDA: pack the values), the grid (given normalized as
    `_tc_g3`, else resolved from `_tc_grid`: a callable, a list) and the backend's `launch`
    lines — no argument lists, no intermediate calls.  Returns the launcher's `compiled` when it launched (or the
    grid is empty).  What it does not take (argument types of no variant, a key or an
    option not seen yet, missing or extra arguments, a profiler observing launches, the
    interpreter asked for) goes to `_tc_decline` (through `redo`, with the arguments as
    given): `kernel[grid]` binds the general path there (its partial calls this function
    straight from the user's call), `launch.run` binds `declined` (False: run takes the
    general path).  The tail works with any launcher it finds: where the launcher is not
    one it can inline, it calls it.

    `tail(out, hand_off)` gives the backend's lines and the names they read; `hand_off` is a
    statement for its rare cases (CUDA: another thread, a float to saturate) that resolves
    the grid and calls the launcher itself (`hand_off` below)."""
    n = len(names)
    # a one-name tuple on both sides: `a0, = x,` (`a0, = x` would iterate the argument)
    comma = "," if n == 1 else ""
    rename = ", ".join(f"a{i}" for i in range(n)) + comma
    given = ", ".join(names) + (", " if n else "")
    # the options given, in launch_key's and resolve_grid's order (`_NO` where not given)
    options = ", ".join(f"_tc_opts.get({o!r}, _NO)" for o in LAUNCH_OPTIONS)
    named = "{" + ", ".join(f"{m!r}: a{i}" for i, m in enumerate(names)) + "}"
    declined = f"return redo(_tc_decline, _tc_grid, _tc_g3, {given}_tc_more, _tc_opts)"
    # once they are renamed, the arguments as the a-names hold them (the generated lines'
    # own locals, p0, d1..., may have taken a parameter's name)
    renamed = "".join(f"a{i}, " for i in range(n))
    declined_a = f"return redo(_tc_decline, _tc_grid, _tc_g3, {renamed}_tc_more, _tc_opts)"
    # every parameter defaults to _MISSING, and positional arguments beyond them land in
    # _tc_more: Python's binding cannot fail but for an argument given twice
    lines = [f"def direct(_tc_grid, _tc_g3, _tc_decline, "
             f"{''.join(f'{m}=_MISSING, ' for m in names)}*_tc_more, **_tc_opts):",
             "    if _tc_more or _tc_launches._observer is not None or "
             "_tc_env_get(_tc_interpret_key) == _tc_one:",
             f"        {declined}"]
    if n:
        lines.append(f"    {rename} = {', '.join(names)}{comma}")
    tail_env: dict = {}
    for guards, body, key, out, bound, tail, _ in variants:
        prepare, launch, more = tail(out, f"return _tc_hand_off(_tc_l, _tc_grid, _tc_g3, "
                                              f"{named}, [{', '.join(out)}], *_tc_o).compiled")
        tail_env.update(more)
        at = "    "
        if guards:  # (these types: a missing argument is of none)
            lines.append(f"    if not ({' or '.join(guards)}):")
            at = "        "
        block = list(body)
        block.append(f"_tc_key = ({', '.join(key)}{',' if len(key) == 1 else ''})")
        block += [
            "if _tc_opts:",
            "    if not _tc_option_names.issuperset(_tc_opts):  # not a launch option",
            f"        {declined_a}",
            f"    _tc_o = ({options})",
            "    _tc_key = (_tc_key, *_tc_o)  # launch_key, inline",
            "else:",
            "    _tc_o = _tc_no_options",
            f"_tc_l = {bound}.get(_tc_key)",
            "if _tc_l is None:",
            f"    {declined_a}",
        ]
        block += prepare
        block += [
            "if _tc_g3 is None:  # a callable grid, a list",
            f"    _tc_g3 = _tc_resolve_grid(_tc_grid, {named}, *_tc_o)",
            "if _tc_g3[0] and _tc_g3[1] and _tc_g3[2]:  # an empty grid launches nothing",
        ]
        block += [f"    {x}" for x in launch]
        block.append("return _tc_l.compiled")
        lines += [f"{at}{b}" for b in block]
        if not guards:
            break  # (no parameters: the one variant)
    else:
        lines.append(f"    {declined_a}")  # types of no variant
    # the general path, given the arguments as they came: by keyword (those given), or,
    # with more than the parameters, all by position
    lines += [
        "",
        f"def redo(_tc_decline, _tc_grid, _tc_g3, {given}_tc_more, _tc_opts):",
        "    if _tc_more:",
        f"        return _tc_decline(_tc_grid, _tc_g3, {given}*_tc_more, **_tc_opts)",
        f"    _tc_named = {{{', '.join(f'{m!r}: {m}' for m in names)}}}",
        "    return _tc_decline(_tc_grid, _tc_g3, **{_tc_k: _tc_v for _tc_k, _tc_v in "
        "_tc_named.items() if _tc_v is not _MISSING}, **_tc_opts)",
    ]
    return "\n".join(lines), tail_env


def hand_off(launcher, grid, g3, named: dict, values: list, *options):
    """A generated warm launch's way out where the launcher itself must run: resolve the
    grid (unless given normalized), launch unless it is empty; the launcher (launched)."""
    if g3 is None:
        g3 = resolve_grid(grid, named, *options)
    if g3[0] and g3[1] and g3[2]:
        launcher(g3, values)
    return launcher


# --- packing kernel arguments ------------------------------------------------------------------

# struct codes of the kernel's parameter types (bf16 travels as its 16 bits)
_CODES = {"ptr": "Q", "i1": "?", "i8": "b", "i16": "h", "i32": "i", "i64": "q", "u8": "B",
          "u16": "H", "u32": "I", "u64": "Q", "fp16": "e", "bf16": "H", "fp32": "f",
          "fp64": "d"}


def slot_layout(specs) -> tuple[str, tuple[bool, ...]]:
    """One struct code per run-time (not constexpr) parameter, and which of them the
    kernel takes (not the ints specialized to 1, which are packed but not passed)."""
    runtime = [s for s in specs if not s.is_constexpr]
    return ("".join(_CODES[s.type.short] for s in runtime),
            tuple(not s.equals_one for s in runtime))


def slot_values(specs, passed: list) -> list:
    """The run-time values of a slow-path launch, as `arg_key` gives warm ones, from
    `JITFunction.specs_for`'s result."""
    out = []
    it = iter(passed)
    for spec in specs:
        if spec.is_constexpr:
            continue
        if spec.equals_one:
            out.append(1)
            continue
        v = next(it)  # as given (a descriptor's shape and strides: as it holds them)
        if isinstance(v, ArrayInfo):
            out.append(v.ptr)
            continue
        if spec.type.short == "bf16":
            import numpy as np

            out.append(int(np.asarray(v, spec.type.to_numpy()).view(np.uint16)))
        elif hasattr(v, "item"):  # a NumPy scalar
            out.append(v.item())
        else:
            out.append(v)
    return out


class ArgBuffer:
    """The argument block of one kernel: values packed at their natural alignment (as the
    C ABI lays out the kernel's parameters) and the `void *kernelParams[]` array that
    points at each value the kernel takes, built once.  Per launch only the
    `struct.pack_into` of `pack` runs."""

    __slots__ = ("codes", "offsets", "size", "struct", "storage", "params", "params_ptr")

    def __init__(self, codes: str, taken: tuple[bool, ...] | None = None):
        import ctypes

        self.codes = codes
        fmt, offsets, at = ["="], [], 0
        for c in codes:
            size = struct.calcsize("=" + c)
            pad = -at % size
            if pad:
                fmt.append(f"{pad}x")
            at += pad
            offsets.append(at)
            fmt.append(c)
            at += size
        self.offsets = tuple(offsets)
        self.size = at
        self.struct = struct.Struct("".join(fmt))
        self.storage = ctypes.create_string_buffer(max(at, 8))
        base = ctypes.addressof(self.storage)
        taken = taken if taken is not None else (True,) * len(codes)
        pointers = [base + o for o, t in zip(offsets, taken) if t]
        self.params = (ctypes.c_void_p * max(len(pointers), 1))(*pointers)
        self.params_ptr = ctypes.addressof(self.params)

    def pack(self, values) -> int:
        """Write `values` into the block; the address of the kernelParams array."""
        self.struct.pack_into(self.storage, 0, *values)
        return self.params_ptr

    def unpack(self) -> tuple:
        """The values in the block (tests, debugging)."""
        return self.struct.unpack_from(self.storage, 0)

    def kernel_params(self) -> list[int]:
        """The addresses in the kernelParams array (tests, debugging)."""
        return list(self.params)


def saturate(codes: str, values) -> list:
    """`values` with each float that does not fit its fp16 / fp32 slot made ±inf, as a C
    cast makes it."""
    import math

    out = []
    for c, v in zip(codes, values):
        if c in "ef":
            try:
                struct.pack("=" + c, v)
            except (struct.error, OverflowError):
                v = math.copysign(math.inf, v)
        out.append(v)
    return out


get_ident = threading.get_ident
