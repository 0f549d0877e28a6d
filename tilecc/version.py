"""tilecc's version: a base module, which every stage may import (the package's __init__
imports the runtime, which the transpiler must not)."""

__version__ = "0.1.0"
