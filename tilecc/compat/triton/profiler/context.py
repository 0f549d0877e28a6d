"""`triton.profiler.context`: where the program is in the tree of scopes."""

from __future__ import annotations

from typing import Optional

from tilecc.compat.triton.profiler.recorder import RECORDER


def depth(session: Optional[int] = 0) -> Optional[int]:
    """How many scopes are open on this thread (None outside any session)."""
    if not RECORDER.profiling:
        return None
    return len(RECORDER.path)
