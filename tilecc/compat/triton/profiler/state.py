"""`triton.profiler.state`: Triton tags the operations inside a state with its name in
its traces (its profiler's metadata calls run in one); tilecc's trees have no states, so
a state is accepted and records nothing."""

from __future__ import annotations

from functools import wraps


class state:
    """A context manager and a decorator that mark a state (nothing is recorded)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        return None

    def __call__(self, func):
        @wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)
        return wrapper


def enter_state(name: str) -> None:
    return None


def exit_state() -> None:
    return None
