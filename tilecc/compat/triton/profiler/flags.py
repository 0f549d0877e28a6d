"""`triton.profiler.flags`: the profiler's process-wide switches."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ProfilerFlags:
    # a session is open (scopes record)
    profiling_on: bool = False
    # Triton's in-kernel instrumentation, which tilecc does not have: always False
    instrumentation_on: bool = False
    # the program runs under Triton's `proton` command (tilecc has none): always False
    command_line: bool = False


flags = ProfilerFlags()
