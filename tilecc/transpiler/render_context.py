"""What every writer of the renderer reads and none writes (`RenderContext`: the kernel,
the target, what the passes decided, the templates' macros), and what the kernel asks of
the compiler for its occupancy (`programs_per_sm`): both follow from the IR the passes
left, before a line is written."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

import jinja2

from tilecc.transpiler.ir import Kernel, Value
from tilecc.transpiler.line_breaks import BODY, BREAK, NOTE, joined, words
from tilecc.transpiler.names import DOT_GENERATED
from tilecc.transpiler.passes.emission import Emission
from tilecc.transpiler.passes.settle import dynamic_tiles
from tilecc.transpiler.target import CompileTarget

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "templates")
INCLUDE_DIR = os.path.join(TEMPLATE_DIR, "include")


@lru_cache(maxsize=None)
def environment() -> jinja2.Environment:
    """The one Jinja environment: a missing variable is an error, never an empty string.
    The runtime gives it a disk cache of compiled templates (`runtime/template_cache.py`)
    before it renders; the transpiler itself keeps nothing on disk."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             autoescape=False)
    env.filters["nest"] = nest
    env.filters["c_string"] = c_string
    env.filters["comment"] = words  # prose: its words may move to lines of their own
    env.filters["joined"] = joined  # parts, a line break allowed after each separator
    env.globals.update(BODY=BODY, BREAK=BREAK, NOTE=NOTE)  # where lines may break
    return env


def c_string(text: str) -> str:
    """`text` as a C string literal."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def nest(text: str | list[str], levels: int = 1) -> str:
    """C lines (a string of them, or a list) `levels` deeper, two spaces a level;
    preprocessor lines and empty lines stay at the margin (as the emitter writes them)."""
    lines = text if isinstance(text, list) else str(text).split("\n")
    pad = "  " * levels
    return "\n".join(pad + x if x and not x.startswith("#") else x for x in lines)


def template_macros(template: str):
    """The macros of a template of c_like/ (ops.j2, blocks.j2, dot.j2)."""
    return environment().get_template(f"c_like/{template}").module


@dataclass(frozen=True)
class RenderContext:
    """What every part of the renderer reads and none writes: the kernel, the target, and
    what the passes decided about it (what is written as an expression, which pointers
    are written through, the dynamic shared memory placed by passes.settle)."""
    kernel: Kernel
    target: CompileTarget
    line_directives: bool
    emission: Emission  # what is written as an expression, what as a variable
    writes: frozenset[int]  # pointer values written through (none of them declared const)
    consumers: dict[int, Value]  # value id → a value computed from it (names derive)
    memory_bound: bool  # no tensor-core products: registers free for loads in flight
    # tl.dot's code declares short names (row, g, q...) in scopes that read user values
    dot_names: frozenset[str]
    pipe_smem: int  # dynamic shared memory: pipeline stages and hoisted dot operands
    shared_uses: tuple[str, ...]  # what dynamic shared memory holds

    @classmethod
    def of(cls, kernel: Kernel, target: CompileTarget, line_directives: bool) -> RenderContext:
        tiles = dynamic_tiles(kernel)
        return cls(kernel, target, line_directives, Emission(kernel, target.matrix_units),
                   frozenset(_written_pointers(kernel)),
                   {o.id: op.result for op in kernel.walk() if op.results for o in op.operands},
                   memory_bound(kernel),
                   DOT_GENERATED if any(op.kind == "dot" for op in kernel.walk())
                   else frozenset(),
                   max((t.offset + t.nbytes for t in tiles), default=0),
                   tuple(t.what for t in tiles))

    def root(self, v: Value) -> int:
        """The value whose C variable `v` lives in (loop-carried slots reuse variables)."""
        return self.emission.root(v)

    uses = property(lambda self: self.emission.uses)  # value id → how many ops read it
    mutable = property(lambda self: self.emission.mutable)  # variables assigned again
    recomputed = property(lambda self: self.emission.recomputed)  # index arithmetic

    # the templates' macros: statements (ops.j2), block ops (blocks.j2), tl.dot (dot.j2)
    macros = property(lambda self: template_macros("ops.j2"))
    block_macros = property(lambda self: template_macros("blocks.j2"))
    dot_macros = property(lambda self: template_macros("dot.j2"))


def _written_pointers(kernel: Kernel) -> set[int]:
    """Pointer values that stores write through (and everything they derive from).  A
    value carried through a loop or merged by an `if` shares one C variable with its
    initial value, the region's arguments and what the regions yield: one of them
    written through makes all of them writable (none may be declared const)."""
    same_variable: dict[int, list[Value]] = {}

    def join(group: list[Value]) -> None:
        for v in group:
            same_variable.setdefault(v.id, []).extend(group)

    for op in kernel.walk():
        if op.kind == "for":
            body = op.regions[0]
            for i, res in enumerate(op.results):
                join([res, op.operands[3 + i], body.args[1 + i], body.yields[i]])
        elif op.kind == "while":
            before, body = op.regions
            for i, res in enumerate(op.results):
                join([res, op.operands[i], before.args[i], body.args[i], body.yields[i]])
        elif op.kind == "if":
            for i, res in enumerate(op.results):
                join([res] + [r.yields[i] for r in op.regions if len(r.yields) > i])
    written: set[int] = set()
    todo = [op.operands[0] for op in kernel.walk()
            if op.kind in ("store", "atomic", "atomic_cas")]
    while todo:
        v = todo.pop()
        if v.id in written or not v.dtype.is_ptr():
            continue
        written.add(v.id)
        if v.owner is not None:
            todo.extend(v.owner.operands)
        todo.extend(same_variable.get(v.id, ()))
    return written


REGISTERS_PER_SM = 65536  # 32-bit registers per SM, every NVIDIA architecture since sm_50


def memory_bound(kernel: Kernel) -> bool:
    """No tensor-core products: the kernel streams memory, and its registers are free for
    loads in flight rather than held by accumulator tiles."""
    return not any(op.kind == "dot" for op in kernel.walk())


def programs_per_sm(kernel: Kernel, target: CompileTarget, held: set[int]) -> int | None:
    """Programs per SM to ask of ptxas (`__launch_bounds__`' minimum), or None.

    A kernel without tensor-core products streams memory: two programs on an SM keep loads
    in flight while one of them reduces or waits at a barrier.  Asked for two, ptxas takes
    more registers than its own count, for loads in flight, up to what two programs leave.
    That pays where each thread streams a large block and a program is large enough that
    ptxas's own count could hold one program an SM: 256 threads or more, and a block value
    of 16 words a thread or more (an H200 against Triton, the same configurations:
    layer norm, 16384 columns on 8 warps, 0.90x without, 1.04x asked; SwiGLU and GeGLU
    over 11008 columns on 32 warps 0.83 / 0.73 -> 1.00 / 0.97; group norm 1.08 -> 1.12).
    Elsewhere ptxas's own count keeps more programs resident, which is what they need
    (128 threads, where two programs fit any count: layer norm, 4096 columns on 4 warps,
    1.04x without, 0.97 asked; a decode attention over a paged cache 2.11 / 1.89; a
    looped softmax on 8 warps, 8 words a thread, 1.00 / 0.92).  Where ptxas still spills
    to meet it, the runtime compiles the kernel again without it.  `held`: the ids of
    the values kept in registers (not inlined or recomputed where used)."""
    threads = kernel.num_warps * target.warp_size
    if not target.occupancy_hints or not memory_bound(kernel):
        return None  # tensor-core tiles want their registers
    if threads * 2 * 255 <= REGISTERS_PER_SM:
        return None  # two programs fit any count: ptxas's own keeps more resident
    budget = min(255, REGISTERS_PER_SM // (2 * threads))
    words = 0
    for op in kernel.walk():
        for v in op.results:
            if v.type.is_block and v.layout is not None and v.id in held:
                words = max(words, -(-v.layout.regs * v.dtype.itemsize // 4))
    if words > budget // 2 or words < 16:
        return None
    return 2
