"""Write tests/data/triton36_language.json: the parameters (names, kinds, defaults) of every
function of Triton's language — `triton.language`, `.math`, `.random`, `.extra.cuda`,
`.extra.hip` (libdevice has its own table) — and its public constants, from the installed
Triton.  tests/test_language_signatures.py checks tilecc's `tl` against it.

    python scripts/triton_signatures.py        # with triton 3.6 installed
"""

import enum
import importlib
import inspect
import json
import os

import triton
import triton.language as tl

MODULES = ("", "math", "random", "extra.cuda", "extra.hip")
HIDDEN = ("_semantic", "_generator", "_builder")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
                   "triton36_language.json")


def default(value):
    """A default as plain JSON: constexprs by value, dtypes by name, enums by member."""
    value = getattr(value, "value", value) if isinstance(value, tl.constexpr) else value
    if isinstance(value, tl.dtype):
        return {"dtype": value.name}
    if isinstance(value, enum.Enum) or type(value).__name__ == "PROPAGATE_NAN":
        return {"enum": value.name}  # tl.PropagateNan's members (a C++ enum in Triton)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"no JSON for default {value!r}")


def language_function(obj):
    """The Python function of a Triton language function (a @builtin / @extern, or a @jit
    function written in the language), else None."""
    fn = getattr(obj, "fn", None) if type(obj).__name__ == "JITFunction" else obj
    if not inspect.isfunction(fn):
        return None
    fn = inspect.unwrap(fn)
    params = inspect.signature(fn).parameters
    language = type(obj).__name__ == "JITFunction" or "_semantic" in params
    return fn if language else None


def main() -> None:
    functions, constants = {}, {}
    for name in MODULES:
        module = importlib.import_module("triton.language" + (f".{name}" if name else ""))
        prefix = f"{name}." if name else ""
        for attr in sorted(dir(module)):
            obj = getattr(module, attr)
            if attr.startswith("_"):
                continue
            if isinstance(obj, tl.constexpr) and isinstance(obj.value, (int, float)):
                constants[prefix + attr] = obj.value
                continue
            if isinstance(obj, int) and not isinstance(obj, bool) and attr.isupper():
                constants[prefix + attr] = obj
                continue
            fn = language_function(obj)
            if fn is None:
                continue
            functions[prefix + attr] = [
                [p.name, p.kind.name, "required" if p.default is p.empty else "default",
                 None if p.default is p.empty else default(p.default)]
                for p in inspect.signature(fn).parameters.values() if p.name not in HIDDEN]
    with open(OUT, "w") as f:
        json.dump({"triton": triton.__version__, "functions": functions,
                   "constants": constants}, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{len(functions)} functions, {len(constants)} constants -> {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
