"""`triton.profiler.scope`: named regions of the program, nested.

    with proton.scope("cublas [M=..]", {"bytes": ..., "flops16": ...}):
        ...
    @proton.scope("step")
    def step(): ...
    proton.enter_scope("phase"); ...; proton.exit_scope()

A scope is a frame of each active session, holding the launches recorded inside it; its
time is its span (GPU events on the current stream where the program uses a GPU, the
wall clock otherwise), and its metrics add up over its entries.  Outside any session,
scopes record nothing.
"""

from __future__ import annotations

import threading
import time
from functools import wraps
from typing import Optional, Union

from tilecc.compat.triton.profiler.recorder import RECORDER

MetricValueType = Union[float, int]
thread_local_scopes = threading.local()


class scope:
    """A context manager and a decorator: `with scope(name, metrics):`, `@scope(name)`."""

    def __init__(self, name: str, metrics: Optional[dict[str, MetricValueType]] = None) -> None:
        self.name = name
        self.metrics = metrics
        self.id = None
        self._tokens: list = []

    def _enter_scope(self):
        if RECORDER.profiling:
            self._tokens.append(RECORDER.enter_scope(self.name, self.metrics))
        else:
            self._tokens.append(None)

    def _exit_scope(self, metrics=None):
        token = self._tokens.pop() if self._tokens else None
        if token is not None:
            RECORDER.exit_scope(token, metrics)

    def __enter__(self):
        self._enter_scope()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self._exit_scope()

    def __call__(self, func):
        @wraps(func)
        def wrapper(*args, **kwargs):
            self._enter_scope()
            try:
                return func(*args, **kwargs)
            finally:
                self._exit_scope()
        return wrapper


class cpu_timed_scope(scope):
    """A scope that also records its host time as the metric "cpu_time (ns)"."""

    def __init__(self, name: str, metrics: Optional[dict[str, float]] = None) -> None:
        if metrics and "cpu_time" in metrics:
            raise ValueError("The metric name 'cpu_time' is reserved.")
        super().__init__(name, metrics)
        self.start_time = None

    def _enter_scope(self):
        self.start_time = time.time_ns()
        super()._enter_scope()

    def _exit_scope(self, metrics=None):
        elapsed = time.time_ns() - self.start_time
        super()._exit_scope({"cpu_time (ns)": elapsed})


def enter_scope(name: str, *,
                metrics: Optional[dict[str, MetricValueType]] = None) -> Optional[int]:
    """Open a scope until `exit_scope()`; its id (None outside any session)."""
    if not RECORDER.profiling:
        return None
    stack = getattr(thread_local_scopes, "scopes", None)
    if stack is None:
        stack = thread_local_scopes.scopes = []
    sid = len(stack)
    stack.append((sid, name, RECORDER.enter_scope(name, metrics)))
    return sid


def exit_scope(name: Optional[str] = None, *,
               metrics: Optional[dict[str, MetricValueType]] = None) -> Optional[int]:
    """Close the innermost scope opened by `enter_scope` (named `name`, if given)."""
    stack = getattr(thread_local_scopes, "scopes", None)
    if not RECORDER.profiling or not stack:
        return None
    sid, opened, token = stack.pop()
    if name and name != opened:
        raise ValueError(f"Scope name mismatch: {name} != {opened}")
    RECORDER.exit_scope(token, metrics)
    return sid
