"""The disk cache: generated source and compiled binaries, shared by many processes.

Consumes: a kernel's Python function (for its fingerprint), its specialization, launch
options, target, architecture.  Produces: cache keys, and entries read back verified.

Layout under ``$TILECC_CACHE_DIR`` (default ``~/.cache/tilecc``)::

    kernels/<key>.tck      one entry: generated source + binary + metadata
    autotune/<key>.tck     one autotuning decision (the winning config of one key)
    templates/<key>.tck    one Jinja template compiled to Python bytecode (by its source
                           and the Python version), so a process's first render skips
                           Jinja's lexer and code generator

The key is a SHA-256 of what the transpiler and the compiler consume, never of their
internals: the kernel's source, file and first line (they appear in `#line` directives),
the sources of the `@jit` helpers it calls (transitively, resolved through its globals and
closure as the frontend resolves them), the constexpr-like globals it names, the
specialization (`ArgSpec`s), launch options, target, architecture, a stamp of tilecc's own
files (name, size, mtime: any edit to the transpiler is a new key) and the compiler's
identity.

An entry is one file: ``MAGIC`` line, SHA-256 of the payload, payload; the payload's JSON
header holds the entry's full key — the text that was hashed into its file name, not only
the hash.  It is written to a temporary name in the same directory and published with one
``os.replace``, so a reader sees the old file, the new one, or none — never a partial one.
Every read verifies the checksum, then that the stored key is the one asked for: a torn
or corrupt file (a crash, a full disk, a stray edit), an entry of another key (a file
copied or renamed into place, a hash collision) and one of an older format are misses,
rebuilt and replaced — never served.  Processes that build the same entry at once each
publish a complete, identical file; the last rename wins.

Set ``TILECC_CACHE=0`` to neither read nor write the disk cache.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import linecache
import os
import time
import types
from typing import Any, Callable, Iterable

from tilecc import source
from tilecc.runtime import nvrtc_location

MAGIC = b"TILECC-CACHE 2\n"  # 2: the full key is in the header (1 had only its hash)
KINDS = ("kernels", "autotune", "templates")


def cache_dir() -> str:
    return os.environ.get("TILECC_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "tilecc")


def enabled() -> bool:
    return os.environ.get("TILECC_CACHE", "1") != "0"


# --- stamps: tilecc itself and the native compiler ------------------------------------------

_stamps: dict[str, str] = {}


def tilecc_stamp() -> str:
    """Version plus (path, size, mtime) of every file of the package: any edit to the
    transpiler, its templates or the device header changes every key.  ~0.4 ms, once."""
    s = _stamps.get("tilecc")
    if s is None:
        from tilecc import version

        root = os.path.dirname(os.path.abspath(version.__file__))
        lines: list[str] = []
        _package_files(root, "", lines)
        h = hashlib.sha256(version.__version__.encode())
        h.update("".join(lines).encode())
        s = _stamps["tilecc"] = f"tilecc {version.__version__} {h.hexdigest()[:16]}"
    return s


def _package_files(folder: str, rel: str, out: list[str]) -> None:
    # os.scandir: the listing says which names are folders, so only the files are stat'ed
    # (os.walk and os.path.relpath per file cost twice as much)
    with os.scandir(folder) as it:
        items = sorted(it, key=lambda e: e.name)
    for e in items:
        if e.is_dir(follow_symlinks=False):
            if e.name != "__pycache__":
                _package_files(e.path, f"{rel}{e.name}/", out)
        elif e.name.endswith((".py", ".j2", ".h", ".txt")):  # .txt: the reserved names
            st = e.stat()
            out.append(f"{rel}{e.name} {st.st_size} {st.st_mtime_ns}\n")


def compiler_stamp(target: str) -> str:
    """The compiler's identity.  For NVRTC it is read from the files (name, size, mtime of
    libnvrtc and its versioned builtins library), found where CuPy's loader looks — pip
    wheels, then conda, then the CUDA toolkit — without loading it: loading libnvrtc (and
    CuPy with it) costs 50–500 ms, which a warm start must not pay.  Where no file is
    found, and for HIP, the compiler is asked (`native_compile.compiler_version`)."""
    s = _stamps.get(target)
    if s is None:
        s = _FILE_STAMPS.get(target, lambda: None)()
        if s is None:
            from tilecc.runtime.native_compile import compiler_version

            try:
                s = compiler_version(target)
            except RuntimeError as e:
                s = f"{target} compiler unavailable ({e})"
        _stamps[target] = s
    return s


def _nvrtc_stamp() -> str | None:
    libs = nvrtc_location.nvrtc_files()
    if not libs:
        return None
    parts = []
    for p in libs:
        st = os.stat(p)
        parts.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
    return "nvrtc " + " ".join(parts)


# the compilers whose identity is read from their files (the others are asked)
_FILE_STAMPS = {"cuda": lambda: _nvrtc_stamp()}


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:  # missing, or not a folder
        return []


# --- the fingerprint of a kernel's source ----------------------------------------------------

def fingerprint(fn: Callable) -> str:
    """SHA-256 of the kernel's source, the helpers it calls and the globals it reads."""
    h = hashlib.sha256()
    _add_function(fn, h, set())
    return h.hexdigest()


def _add_function(fn: Callable, h, seen: set) -> None:
    if fn in seen:
        return
    seen.add(fn)
    code = fn.__code__
    snapshot = getattr(fn, "__tilecc_source__", None)  # the text @jit captured
    src = "".join(snapshot[2]) if snapshot is not None else _source_lines(code)
    h.update(f"def {fn.__module__}.{fn.__qualname__} {code.co_filename}:{code.co_firstlineno}\n"
             .encode())
    h.update(src.encode())
    names = set()
    _code_names(code, names)
    scope = dict(fn.__globals__)
    if fn.__closure__:
        scope.update(zip(code.co_freevars, (_cell(c) for c in fn.__closure__)))
    helpers = []
    for name in sorted(names):
        if name not in scope:
            continue
        value = scope[name]
        if isinstance(value, types.ModuleType):
            # `helpers.fn`, `cfg.BLOCK`: attributes of a user module that the code names
            if value.__name__.split(".")[0] in ("triton", "tilecc", "numpy", "torch"):
                continue
            for attr in sorted(names):
                if hasattr(value, attr):
                    _add_value(f"{name}.{attr}", getattr(value, attr), h, helpers)
            continue
        _add_value(name, value, h, helpers)
    for helper in helpers:
        _add_function(helper, h, seen)


def _add_value(name: str, value: Any, h, helpers: list) -> None:
    inner = getattr(value, "fn", None)
    if type(value).__name__ == "JITFunction" and inspect.isfunction(inner):
        h.update(f"helper {name}\n".encode())
        helpers.append(inner)
        return
    if type(value).__name__ == "constexpr" and hasattr(value, "value"):
        value = value.value
    if isinstance(value, (bool, int, float, str, type(None))):
        h.update(f"global {name} = {value!r}\n".encode())
    elif type(value).__module__.startswith("tilecc.language") and not callable(value):
        h.update(f"global {name} = {value!r}\n".encode())  # dtypes


def _source_lines(code) -> str:
    """The function's lines, from its first decorator to its last line of code (what
    `inspect.getsource` returns, without its tokenizer: ~10 ms on a cold start)."""
    last = source.last_code_line(code)
    linecache.checkcache(code.co_filename)  # a file rewritten since it was read
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return repr(code.co_code) + repr(code.co_consts)
    return "".join(lines[code.co_firstlineno - 1:last])


def _code_names(code, out: set) -> None:
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)


def _cell(cell) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return None


# --- keys ------------------------------------------------------------------------------------

def spec_key(specs: Iterable) -> list:
    out = []
    for s in specs:
        inner = getattr(s.constexpr, "fn", None)
        if s.is_constexpr and type(s.constexpr).__name__ == "JITFunction" and \
                inspect.isfunction(inner):  # a @jit function passed in: its code counts
            out.append([s.name, "constexpr function", repr(s.constexpr), fingerprint(inner)])
        elif s.is_constexpr:
            out.append([s.name, "constexpr", repr(s.constexpr)])
        else:
            out.append([s.name, str(s.type), bool(s.divisible_by_16), bool(s.equals_one),
                        s.divisor] +
                       ([repr(s.descriptor)] if s.descriptor is not None else []))
    return out


class Key:
    """A cache key: its full text (`material`, what the entry is for) and that text's
    SHA-256 (`digest`, the entry's file name).  Entries store the material, so a read can
    tell an entry of this key from one of another key that sits at its file name."""
    __slots__ = ("material", "digest")

    def __init__(self, material: str):
        self.material = material
        self.digest = hashlib.sha256(material.encode()).hexdigest()

    def __repr__(self) -> str:
        return f"Key({self.digest[:16]})"


def kernel_key(fp: str, specs, target: str, arch: str, options: dict) -> Key:
    parts = ["kernel", tilecc_stamp(), compiler_stamp(target), fp, target, arch,
             spec_key(specs), sorted((k, repr(v)) for k, v in options.items())]
    return Key(json.dumps(parts))


def key_of(*parts: Any) -> Key:
    return Key(json.dumps([tilecc_stamp(), *parts], default=repr))


# --- entries ---------------------------------------------------------------------------------

class Entry:
    # a plain class: creating a dataclass costs ~0.25 ms, on every warm start
    __slots__ = ("key", "meta", "blobs")

    def __init__(self, key: str, meta: dict, blobs: dict[str, bytes]):
        self.key = key  # the full key (`Key.material`) the entry was stored under
        self.meta = meta
        self.blobs = blobs  # e.g. "source", "binary"


def _path(kind: str, key: Key) -> str:
    return os.path.join(cache_dir(), kind, key.digest + ".tck")


def encode(key: Key, meta: dict, blobs: dict[str, bytes]) -> bytes:
    meta = {"key": key.material, **meta, "blobs": [[k, len(v)] for k, v in blobs.items()]}
    payload = json.dumps(meta).encode() + b"\n" + b"".join(blobs.values())
    return MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def decode(data: bytes) -> Entry | None:
    """The entry in `data`, or None if it is not a complete, intact entry of this format.
    Which key it belongs to is the caller's question (`load` asks it)."""
    try:
        if not data.startswith(MAGIC):
            return None
        digest, _, payload = data[len(MAGIC):].partition(b"\n")
        if hashlib.sha256(payload).hexdigest().encode() != digest:
            return None
        header, _, rest = payload.partition(b"\n")
        meta = json.loads(header)
        key = meta.pop("key")
        if not isinstance(key, str):
            return None
        blobs, at = {}, 0
        for name, size in meta.pop("blobs"):
            blobs[name] = rest[at:at + size]
            at += size
        if at != len(rest):
            return None
        return Entry(key, meta, blobs)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def load(kind: str, key: Key) -> Entry | None:
    """The entry of `key`, verified: None (a miss) where there is none, where it is damaged
    or of an older format, and where the file at its name holds another key's entry."""
    if not enabled():
        return None
    try:
        with open(_path(kind, key), "rb") as f:
            data = f.read()
    except OSError:
        return None
    entry = decode(data)
    if entry is None or entry.key != key.material:
        return None
    return entry


def store(kind: str, key: Key, meta: dict, blobs: dict[str, bytes]) -> str | None:
    """Publish an entry atomically; None (and no error) if the cache cannot be written."""
    if not enabled():
        return None
    path = _path(kind, key)
    data = encode(key, {**meta, "created": time.time()}, blobs)
    import tempfile

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=f".{key.digest[:16]}.",
                                   suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            _unlink(tmp)
            raise
    except OSError:
        return None
    return path


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def entries(kind: str | None = None) -> list[tuple[str, str, int, dict | None]]:
    """(kind, path, size, metadata) of every entry; the metadata is None where a read would
    not serve the entry (`problem` says why)."""
    out = []
    for k in ([kind] if kind else KINDS):
        d = os.path.join(cache_dir(), k)
        for path in [os.path.join(d, name) for name in sorted(_listdir(d))
                     if name.endswith(".tck") and not name.startswith(".")]:
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            e = decode(data)
            ok = e is not None and Key(e.key).digest == os.path.basename(path)[:-4]
            out.append((k, path, len(data), e.meta if ok else None))
    return out


def problem(path: str) -> str | None:
    """Why the entry file at `path` would be a miss (None if it would be served)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return f"unreadable ({e.strerror})"
    e = decode(data)
    if e is None:
        if data.startswith(b"TILECC-CACHE ") and not data.startswith(MAGIC):
            version = data.split(b"\n", 1)[0].decode(errors="replace")
            return f"another tilecc's format ({version})"
        return "corrupt"
    if Key(e.key).digest != os.path.basename(path)[:-4]:
        return "holds another key's entry"
    return None


def clear(kind: str | None = None) -> int:
    """Remove entries (and leftover temporary files); the number of entries removed."""
    n = 0
    for k in ([kind] if kind else KINDS):
        d = os.path.join(cache_dir(), k)
        for name in _listdir(d):
            if name.startswith("."):
                if name.endswith(".tmp"):  # a writer's leftover
                    _unlink(os.path.join(d, name))
            elif name.endswith(".tck"):
                n += 1
                _unlink(os.path.join(d, name))
    return n


# --- TILECC_DUMP_DIR ------------------------------------------------------------------------

def dump_dir() -> str | None:
    return os.environ.get("TILECC_DUMP_DIR") or None


def dump(name: str, key: str, files: dict[str, bytes | str]) -> str:
    """Write every stage's output of one build under $TILECC_DUMP_DIR/<name>-<key>/."""
    d = os.path.join(dump_dir(), f"{name}-{key[:16]}")
    os.makedirs(d, exist_ok=True)
    for fname, content in files.items():
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(os.path.join(d, fname), mode) as f:
            f.write(content)
    return d
