"""A helper module with a syntax error, imported by helper_module_syntax_error.py."""

def cdiv(a, b)
    return (a + b - 1) // b
