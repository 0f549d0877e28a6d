"""Jinja templates compiled to Python bytecode, kept in tilecc's disk cache: `install()`
gives the transpiler's one environment (`render.environment()`) this cache before the
runtime renders, so the transpiler keeps nothing on disk and imports nothing of the
runtime."""

from __future__ import annotations

import sys

import jinja2

from tilecc.runtime import cache


def install() -> jinja2.Environment:
    """The transpiler's environment, with the disk cache of compiled templates (once)."""
    from tilecc.transpiler.render import environment

    env = environment()
    if not isinstance(env.bytecode_cache, CompiledTemplates):
        env.bytecode_cache = CompiledTemplates()
    return env


class CompiledTemplates(jinja2.BytecodeCache):
    """Templates compiled to Python bytecode, kept in tilecc's disk cache (verified,
    published atomically, listed and cleared with the kernels): a process's first render
    then skips Jinja's lexer, parser and code generator, 15-20 ms of a cold compile.
    Jinja's bucket checks its own magic (Jinja and Python versions) and the template's
    checksum, and the key has both too, so an edited template or another Python is a miss."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # bucket key -> template name, for `tilecc cache list`

    def get_bucket(self, environment, name, filename, source):
        bucket = super().get_bucket(environment, name, filename, source)
        self.names[bucket.key] = name
        return bucket

    def _key(self, bucket: jinja2.bccache.Bucket) -> str:
        return cache.key_of("template", bucket.key, bucket.checksum, jinja2.__version__,
                            sys.version)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        entry = cache.load("templates", self._key(bucket))
        if entry is not None and "code" in entry.blobs:
            bucket.bytecode_from_string(entry.blobs["code"])  # a stale one resets itself

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        cache.store("templates", self._key(bucket),
                    {"template": self.names.get(bucket.key, bucket.key)},
                    {"code": bucket.bytecode_to_string()})
