"""The disk cache through the compile-only path (no GPU): hits, misses, versioning,
corruption, many processes at once, the `tilecc cache` CLI and TILECC_DUMP_DIR."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import tilecc
from conftest_compilers import require_cuda_compiler
from tilecc.runtime import cache, compiler as C, jit as J
from tilecc.transpiler import frontend

HERE = os.path.dirname(__file__)
EXAMPLES = os.path.join(HERE, "..", "examples")
sys.path.insert(0, EXAMPLES)
from vector_add import add_kernel  # noqa: E402

SIG = "*fp32:16,*fp32:16,*fp32:16,i32:16,1024"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILECC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILECC_DUMP_DIR", raising=False)
    monkeypatch.delenv("TILECC_CACHE", raising=False)
    C._compiled.clear()
    yield
    C._compiled.clear()


def _entries():
    return cache.entries("kernels")


def _no_build(monkeypatch):
    def fail(*a, **k):
        raise AssertionError("transpiled although the disk cache had the entry")
    monkeypatch.setattr(C, "transpile", fail)
    monkeypatch.setattr(C, "compile_source", fail)


def test_miss_then_hit_skips_transpile_and_compile(monkeypatch):
    require_cuda_compiler()
    first = add_kernel.compile(SIG, arch="sm_80")
    [(_, path, _, meta)] = _entries()
    assert meta["name"] == "add_kernel" and meta["arch"] == "sm_80"
    assert meta["kernel"].endswith("add_kernel") and "n_elements: i32 (multiple of 16)" in \
        meta["specialization"]
    C._compiled.clear()  # as in a new process
    _no_build(monkeypatch)
    again = add_kernel.compile(SIG, arch="sm_80")
    assert again.data == first.data and again.log == first.log and again.arch == "sm_80"
    entry = cache.decode(open(path, "rb").read())
    assert b"add_kernel(" in entry.blobs["source"] and entry.blobs["binary"] == first.data


def test_every_input_is_in_the_key(monkeypatch):
    require_cuda_compiler()
    add_kernel.compile(SIG, arch="sm_80")
    add_kernel.compile(SIG, arch="sm_80")  # hit
    assert len(_entries()) == 1
    add_kernel.compile(SIG, arch="sm_90")
    add_kernel.compile(SIG, arch="sm_80", num_warps=2)
    add_kernel.compile(SIG.replace("1024", "512"), arch="sm_80")
    add_kernel.compile(SIG.replace("i32:16", "i32"), arch="sm_80")
    add_kernel.compile(SIG, arch="sm_80", debug=True)
    assert len(_entries()) == 6
    monkeypatch.setitem(cache._stamps, "tilecc", "tilecc 9.9 other")  # a new tilecc
    add_kernel.compile(SIG, arch="sm_80")
    monkeypatch.setitem(cache._stamps, "cuda", "nvrtc 99.0")  # a new compiler
    add_kernel.compile(SIG, arch="sm_80")
    assert len(_entries()) == 8


def _module(tmp_path, name, text):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    # a file rewritten within the same second at the same size would load the bytecode
    # compiled from its previous text: none is written or read here
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        shutil.rmtree(tmp_path / "__pycache__", ignore_errors=True)
        spec.loader.exec_module(mod)
    finally:
        sys.dont_write_bytecode = saved
    return mod


KERNEL = """
import tilecc
import tilecc.language as tl
SCALE = tl.constexpr({scale})

@tilecc.jit
def helper(x):
    return x * {factor}

@tilecc.jit
def kern(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, helper(x) * SCALE, mask=offs < n)
"""


def test_fingerprint_follows_helpers_and_globals(tmp_path):
    def fp(name, **kw):
        return _module(tmp_path, name, KERNEL.format(**kw)).kern.fingerprint

    base = fp("m0", scale=2.0, factor=3.0)
    assert fp("m0", scale=2.0, factor=3.0) == base  # the same file, reloaded
    assert fp("m0", scale=2.0, factor=4.0) != base  # a helper's body
    assert fp("m0", scale=5.0, factor=3.0) != base  # a constexpr global
    assert fp("m1", scale=2.0, factor=3.0) != base  # another file: other #line directives


def test_source_lines_match_inspect():
    import inspect

    for k in (add_kernel, J.JITFunction):
        fn = k.fn if hasattr(k, "fn") else None
        if fn is not None:
            assert cache._source_lines(fn.__code__) == inspect.getsource(fn)


def test_params_fast_path_matches_the_frontend():
    import kernels
    import triton_kernels

    checked = 0
    for mod in (kernels, triton_kernels):
        for obj in vars(mod).values():
            fn = getattr(obj, "fn", None)
            if fn is None or not callable(fn):
                continue
            fast = J._params_from_annotations(fn)
            if fast is not None:
                assert fast == frontend.declared_params(fn), fn.__name__
                checked += 1
    assert checked >= 5


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "garbage"])
def test_corrupt_entry_is_a_miss_and_is_rebuilt(damage, monkeypatch):
    require_cuda_compiler()
    good = add_kernel.compile(SIG, arch="sm_80")
    [(_, path, _, _)] = _entries()
    data = open(path, "rb").read()
    bad = {"flip": data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:],
           "truncate": data[: len(data) // 2], "empty": b"",
           "garbage": cache.MAGIC + b"xyz\n{}"}[damage]
    with open(path, "wb") as f:
        f.write(bad)
    assert cache.decode(bad) is None
    C._compiled.clear()
    builds = []
    transpile = C.transpile
    monkeypatch.setattr(C, "transpile", lambda *a, **k: builds.append(1) or transpile(*a, **k))
    assert add_kernel.compile(SIG, arch="sm_80").data == good.data
    assert builds, "the damaged entry was served instead of a rebuild"
    rebuilt = cache.decode(open(path, "rb").read())  # the file holds a good entry again
    assert rebuilt is not None and rebuilt.key == cache.decode(data).key
    assert rebuilt.blobs["binary"] == good.data


def _compile_new_entry(kernel, sig):
    """Compile and return (binary, path of the entry this compile published)."""
    before = {path for _, path, _, _ in _entries()}
    binary = kernel.compile(sig, arch="sm_80")
    [path] = [path for _, path, _, _ in _entries() if path not in before]
    return binary, path


def test_an_entry_of_another_kernel_at_its_name_is_rebuilt(monkeypatch):
    """A complete, intact entry of kernel A copied onto kernel B's file name (a stale copy,
    a collision) is not served for B: B is rebuilt and its own entry replaces the file."""
    require_cuda_compiler()
    from fused_elementwise import silu_mul_kernel

    a, a_path = _compile_new_entry(silu_mul_kernel, "*fp16:16,*fp16:16,*fp16:16,i32,512")
    b, b_path = _compile_new_entry(add_kernel, SIG)
    assert a.data != b.data
    b_entry = open(b_path, "rb").read()
    with open(b_path, "wb") as f:
        f.write(open(a_path, "rb").read())
    listed = subprocess.run([sys.executable, "-m", "tilecc", "cache", "list"],
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": os.path.join(HERE, "..")})
    assert "holds another key's entry: rebuilt on use" in listed.stdout, listed.stdout
    C._compiled.clear()  # as in a new process
    again = add_kernel.compile(SIG, arch="sm_80")
    assert again.data == b.data and again.data != a.data
    assert cache.decode(open(b_path, "rb").read()).key == cache.decode(b_entry).key
    C._compiled.clear()
    _no_build(monkeypatch)  # the rewritten entry is B's: a hit
    assert add_kernel.compile(SIG, arch="sm_80").data == b.data


def _reencode(data: bytes, edit) -> bytes:
    """`data`'s entry with its JSON header (a dict) changed by `edit`, the checksum made to
    match."""
    import hashlib
    import json

    digest, _, payload = data[len(cache.MAGIC):].partition(b"\n")
    header, _, rest = payload.partition(b"\n")
    meta = json.loads(header)
    edit(meta)
    payload = json.dumps(meta).encode() + b"\n" + rest
    return cache.MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def _v1_entry(data: bytes) -> bytes:
    """`data`'s entry in the format before keys were stored (format 1: no key field)."""
    import hashlib
    import json

    entry = cache.decode(data)
    meta = {**entry.meta, "blobs": [[k, len(v)] for k, v in entry.blobs.items()]}
    payload = json.dumps(meta).encode() + b"\n" + b"".join(entry.blobs.values())
    return (b"TILECC-CACHE 1\n" + hashlib.sha256(payload).hexdigest().encode() + b"\n"
            + payload)


FORGERIES = {
    # the key field names another specialization; the checksum is recomputed to match
    "other key, valid checksum": lambda d: _reencode(
        d, lambda m: m.update(key=m["key"].replace("sm_80", "sm_86"))),
    # the key field edited in place, the checksum left as it was
    "other key, stale checksum": lambda d: d.replace(b"sm_80", b"sm_86", 1),
    "no key field": lambda d: _reencode(d, lambda m: m.pop("key")),
    "key not a string": lambda d: _reencode(d, lambda m: m.update(key=7)),
    "header cut short": lambda d: d[:len(cache.MAGIC) + 65 + 40],
    "old format": _v1_entry,
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_an_entry_whose_header_does_not_hold_its_key_is_rebuilt(forgery, monkeypatch):
    require_cuda_compiler()
    good, path = _compile_new_entry(add_kernel, SIG)
    data = open(path, "rb").read()
    bad = FORGERIES[forgery](data)
    assert bad != data
    with open(path, "wb") as f:
        f.write(bad)
    key = cache.Key(cache.decode(data).key)
    assert cache.load("kernels", key) is None and _entries()[0][3] is None
    assert cache.problem(path) == ("another tilecc's format (TILECC-CACHE 1)"
                                   if forgery == "old format"
                                   else "holds another key's entry"
                                   if forgery == "other key, valid checksum" else "corrupt")
    C._compiled.clear()
    assert add_kernel.compile(SIG, arch="sm_80").data == good.data
    assert cache.load("kernels", key).blobs["binary"] == good.data  # republished
    assert cache.problem(path) is None


@pytest.mark.parametrize("kind", cache.KINDS)
def test_load_serves_only_the_key_asked_for(kind):
    """At the cache's own interface, for every kind of entry: an entry at the file name of
    the key asked for, but stored under another key, is a miss."""
    a, b = cache.key_of(kind, "a"), cache.key_of(kind, "b")
    cache.store(kind, a, {"what": "a"}, {"blob": b"A"})
    cache.store(kind, b, {"what": "b"}, {"blob": b"B"})
    assert cache.load(kind, b).blobs["blob"] == b"B"
    a_path, b_path = cache._path(kind, a), cache._path(kind, b)
    os.replace(a_path, b_path)  # a's entry under b's name
    assert cache.load(kind, b) is None and cache.load(kind, a) is None
    assert cache.entries(kind) == [(kind, b_path, os.path.getsize(b_path), None)]
    cache.store(kind, b, {"what": "b"}, {"blob": b"B"})  # the rebuild replaces it
    assert cache.load(kind, b).blobs["blob"] == b"B"


def test_warm_compile_does_not_read_the_disk_again(monkeypatch):
    """Verification is on the disk read only: this process's later compiles of a kernel
    are answered from memory."""
    require_cuda_compiler()
    first = add_kernel.compile(SIG, arch="sm_80")
    C._compiled.clear()
    add_kernel.compile(SIG, arch="sm_80")  # read from disk and verified, once
    monkeypatch.setattr(cache, "load", lambda *a: pytest.fail("the disk was read again"))
    _no_build(monkeypatch)
    assert add_kernel.compile(SIG, arch="sm_80").data == first.data


def test_disabled_cache_writes_nothing(monkeypatch):
    require_cuda_compiler()
    monkeypatch.setenv("TILECC_CACHE", "0")
    add_kernel.compile(SIG, arch="sm_80")
    assert _entries() == []


def test_encode_decode_roundtrip():
    key = cache.key_of("test", 1)
    blob = cache.encode(key, {"a": 1}, {"source": b"abc", "binary": b"\x00\x01"})
    e = cache.decode(blob)
    assert e.meta["a"] == 1 and e.blobs == {"source": b"abc", "binary": b"\x00\x01"}
    assert e.key == key.material
    for i in range(len(blob)):
        assert cache.decode(blob[:i]) is None


def test_dump_dir_writes_every_stage(tmp_path, monkeypatch):
    require_cuda_compiler()
    monkeypatch.setenv("TILECC_DUMP_DIR", str(tmp_path / "dump"))
    add_kernel.compile(SIG, arch="sm_80")
    [d] = os.listdir(tmp_path / "dump")
    files = sorted(os.listdir(tmp_path / "dump" / d))
    assert files == ["add_kernel.cu", "add_kernel.cubin", "add_kernel.ptx", "compile.log",
                     "ir.txt"], files
    ptx = (tmp_path / "dump" / d / "add_kernel.ptx").read_text()
    assert ".entry add_kernel" in ptx and ".target sm_80" in ptx
    ir = (tmp_path / "dump" / d / "ir.txt").read_text()
    assert ir.startswith("kernel add_kernel(") and " = load(" in ir and " store(" in ir, ir


def test_cli_cache_list_and_clear(tmp_path):
    require_cuda_compiler()
    add_kernel.compile(SIG, arch="sm_80")
    env = {**os.environ, "TILECC_CACHE_DIR": str(tmp_path / "cache")}
    templates = len(cache.entries("templates"))  # written where this process first rendered
    r = subprocess.run([sys.executable, "-m", "tilecc", "cache", "list"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "add_kernel" in r.stdout and "sm_80" in r.stdout and \
        f"{1 + templates} entries" in r.stdout
    r = subprocess.run([sys.executable, "-m", "tilecc", "cache", "clear", "--kind", "kernels"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and "removed 1 entries" in r.stdout
    assert _entries() == [] and len(cache.entries("templates")) == templates


WORKER = r"""
import hashlib, os, sys, time
sys.path.insert(0, {examples!r})
from vector_add import add_kernel
from fused_elementwise import silu_mul_kernel
from tilecc.runtime import cache
go = float(sys.argv[1])
while time.time() < go:
    time.sleep(0.001)
out = []
for i, (k, sig) in enumerate([(add_kernel, "*fp32:16,*fp32:16,*fp32:16,i32:16,1024"),
                              (silu_mul_kernel, "*fp16:16,*fp16:16,*fp16:16,i32,512"),
                              (add_kernel, "*fp32,*fp32,*fp32,i32,256")]):
    b = k.compile(sig, arch="sm_80")
    out.append(hashlib.sha256(b.data).hexdigest()[:16])
print(" ".join(out))
"""

READER = r"""
import os, sys, time
from tilecc.runtime import cache
d = os.path.join(cache.cache_dir(), "kernels")
seen = bad = 0
stop, end = sys.argv[1], time.time() + 240
while time.time() < end:  # until the test says the writers are done, reading once more then
    done = os.path.exists(stop)
    for name in os.listdir(d) if os.path.isdir(d) else []:
        if not name.endswith(".tck"):
            continue
        try:
            data = open(os.path.join(d, name), "rb").read()
        except FileNotFoundError:
            continue
        seen += 1
        if cache.decode(data) is None:
            bad += 1
    if done:
        break
    time.sleep(0.001)
print(seen, bad)
"""


def test_eight_processes_share_one_cache(tmp_path):
    require_cuda_compiler()
    import time

    env = {**os.environ, "TILECC_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([os.path.join(HERE, ".."),
                                          os.environ.get("PYTHONPATH", "")])}
    go = time.time() + 3.0  # every process starts compiling at the same moment
    stop = tmp_path / "writers-done"  # the reader reads until then: however busy the machine
    reader = subprocess.Popen([sys.executable, "-c", READER, str(stop)], env=env,
                              stdout=subprocess.PIPE, text=True)
    procs = [subprocess.Popen([sys.executable, "-c", WORKER.format(examples=EXAMPLES),
                               str(go)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(8)]
    results = [p.communicate(timeout=240) for p in procs]
    stop.touch()
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
    hashes = {out.strip() for out, _ in results}
    # the reference: the same compiles in a process without any cache (a process of its
    # own, so the kernels' file paths — written into the binaries' line tables — match)
    r = subprocess.run([sys.executable, "-c", WORKER.format(examples=EXAMPLES), "0"],
                       env={**env, "TILECC_CACHE": "0"}, capture_output=True, text=True,
                       timeout=240)
    assert r.returncode == 0, r.stderr
    assert hashes == {r.stdout.strip()}
    seen, bad = map(int, reader.communicate(timeout=60)[0].split())
    assert bad == 0 and seen > 0
    assert len(_entries()) == 3 and all(meta for *_, meta in _entries())
    leftovers = [f for f in os.listdir(tmp_path / "cache" / "kernels") if f.endswith(".tmp")]
    assert leftovers == []


AUX = """
import tilecc
SHIFT = {shift}

@tilecc.jit
def twice(x):
    return x * {two}
"""

KMOD = """
import tilecc
import tilecc.language as tl
import {aux} as aux
SCALE = tl.constexpr({scale})

@tilecc.jit
def inner(x):
    return x * {inner}

@tilecc.jit
def helper(x):
    return inner(x) + 1.0

@tilecc.jit
def kern(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, aux.twice(helper(x)) * SCALE + aux.SHIFT, mask=offs < n)
"""


def _write(path, text, stamp):
    path.write_text(textwrap.dedent(text))
    os.utime(path, ns=(stamp, stamp))  # a new mtime even within one clock tick


def test_editing_what_the_kernel_calls_or_reads_misses(tmp_path, monkeypatch):
    """The disk-cache key follows the kernel's source, the @jit helpers it calls
    (transitively, also through a module attribute) and the constant globals it reads:
    each edit is a miss, and undoing it is a hit again."""
    require_cuda_compiler()
    import importlib

    monkeypatch.syspath_prepend(str(tmp_path))
    base = {"shift": 2.0, "two": 2.0, "scale": 3.0, "inner": 5.0}
    stamp = [1_700_000_000_000_000_000]

    def compile_with(**changes):
        v = {**base, **changes}
        stamp[0] += 10 ** 9
        _write(tmp_path / "aux_ed.py", AUX.format(**v), stamp[0])
        _write(tmp_path / "kmod_ed.py", KMOD.format(aux="aux_ed", **v), stamp[0])
        for name in ("aux_ed", "kmod_ed"):
            sys.modules.pop(name, None)
        importlib.invalidate_caches()
        C._compiled.clear()  # as in a new process
        importlib.import_module("kmod_ed").kern.compile("*fp32:16,i32:16,64", arch="sm_80")
        return len(_entries())

    assert compile_with() == 1
    assert compile_with() == 1  # nothing changed: a hit
    assert compile_with(inner=6.0) == 2  # a helper of a helper
    assert compile_with(scale=4.0) == 3  # a tl.constexpr global
    assert compile_with(two=3.0) == 4  # a helper reached as module.attr
    assert compile_with(shift=1.0) == 5  # a global reached as module.attr
    assert compile_with() == 5  # back to the first version: a hit


WARM_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
import tilecc
t1 = time.perf_counter()
after_import = sorted(sys.modules)
import kmod_warm
from tilecc.runtime import cache
t2 = time.perf_counter()
kmod_warm.kern.compile("*fp32:16,i32:16,64", arch="sm_80")
t3 = time.perf_counter()
print(json.dumps({"after_import": after_import, "after_compile": sorted(sys.modules),
                  "nvrtc_found": cache._nvrtc_stamp() is not None,
                  "import_ms": (t1 - t0) * 1e3, "compile_ms": (t3 - t2) * 1e3}))
"""


def test_warm_cache_compile_needs_neither_the_transpiler_nor_its_libraries(tmp_path):
    """`import tilecc` loads no heavy library, and a compile that the disk cache answers
    imports neither libcst nor Jinja (nor the transpiler that uses them)."""
    require_cuda_compiler()
    import json

    v = {"shift": 2.0, "two": 2.0, "scale": 3.0, "inner": 5.0}
    (tmp_path / "aux_warm.py").write_text(textwrap.dedent(AUX.format(**v)))
    (tmp_path / "kmod_warm.py").write_text(textwrap.dedent(KMOD.format(aux="aux_warm", **v)))
    env = {**os.environ, "TILECC_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([os.path.join(HERE, ".."),
                                          os.environ.get("PYTHONPATH", "")])}
    env.pop("TILECC_DUMP_DIR", None)
    runs = []
    for _ in range(2):  # the first run compiles and fills the cache; the second hits it
        r = subprocess.run([sys.executable, "-c", WARM_CHILD, str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert "libcst" in cold["after_compile"]  # the cold run did transpile
    heavy = ["libcst", "jinja2", "tilecc.transpiler.frontend", "tilecc.transpiler.render",
             "tilecc.transpiler.passes"]
    assert not [m for m in heavy if m in warm["after_compile"]]
    assert not [m for m in heavy + ["numpy", "cupy"] if m in warm["after_import"]]
    if warm["nvrtc_found"]:  # the compiler's identity is read from its files
        assert "cupy" not in warm["after_compile"]


def test_nvrtc_identity_is_read_from_the_toolkits_files(tmp_path, monkeypatch):
    """Without NVRTC wheels, the toolkit's libnvrtc (CUDA_HOME) names the compiler, by
    path, size and modification time, without loading it; replacing it changes every key."""
    lib = tmp_path / "lib64"
    lib.mkdir()
    (lib / "libnvrtc.so.13").write_bytes(b"x" * 10)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "no-wheels")])
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    first = cache._nvrtc_stamp()
    assert first is not None and "libnvrtc.so.13:10:" in first
    (lib / "libnvrtc.so.13").write_bytes(b"y" * 11)  # a newer compiler in its place
    assert cache._nvrtc_stamp() != first


TEMPLATE_CHILD = r"""
import json, sys
import jinja2
sys.path.insert(0, sys.argv[1])
from vector_add import add_kernel
from tilecc.runtime import cache
parsed = []
parse = jinja2.Environment._parse
jinja2.Environment._parse = lambda self, *a: parsed.append(a[1]) or parse(self, *a)
source = add_kernel.source("*fp32:16,*fp32:16,*fp32:16,i32:16,1024")
print(json.dumps({"parsed": parsed, "source": source,
                  "entries": sorted(m["template"] for _, _, _, m in cache.entries("templates"))}))
"""


def test_templates_compile_once_per_cache(tmp_path):
    """A process's first render stores each template's bytecode in the disk cache; the next
    process renders from it without parsing a template, and a damaged entry is a miss that
    is rebuilt.  The source is the same every time."""
    import json

    env = {**os.environ, "TILECC_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([os.path.join(HERE, ".."),
                                          os.environ.get("PYTHONPATH", "")])}

    def run():
        r = subprocess.run([sys.executable, "-c", TEMPLATE_CHILD, EXAMPLES], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    first, second = run(), run()
    used = ["c_like/kernel.j2", "c_like/ops.j2"]
    assert sorted(first["parsed"]) == used and first["entries"] == used
    assert second["parsed"] == [] and second["source"] == first["source"]
    for path in (tmp_path / "cache" / "templates").iterdir():
        path.write_bytes(path.read_bytes()[:-7])  # torn
    third = run()
    assert sorted(third["parsed"]) == used and third["source"] == first["source"]
    assert run()["parsed"] == []  # rebuilt entries
    env["TILECC_CACHE"] = "0"
    assert sorted(run()["parsed"]) == used
