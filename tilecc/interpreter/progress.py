"""A progress line on stderr for long interpreter runs: `interpreting KERNEL: program
1200/4096`, so that a run of minutes does not look like a hang.

Nothing is shown for runs shorter than a few seconds.  In a terminal the line appears
after DELAY seconds, is rewritten in place at most every INTERVAL seconds and erased at
the end; elsewhere (a log, a pipe) a whole line is written every LOG_INTERVAL seconds,
from LOG_INTERVAL on, so that logs get a few lines and no carriage returns.
TILECC_PROGRESS=0 turns it off (as for the autotuner's progress bar).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable, TextIO

DELAY = 3.0  # seconds before a terminal shows the line
INTERVAL = 0.25  # at most four updates a second
LOG_INTERVAL = 10.0  # elsewhere: a line every 10 s
_clock = time.monotonic


class Progress:
    """`step(done)` after each program; `close()` at the end (or on an error)."""

    def __init__(self, kernel: str, total: int, stream: TextIO | None = None,
                 clock: Callable[[], float] | None = None):
        self.kernel, self.total = kernel, total
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock or _clock
        self.start = self.clock()
        try:
            self.terminal = self.stream.isatty()
        except (AttributeError, ValueError):  # a closed or unusual stream
            self.terminal = False
        self.enabled = os.environ.get("TILECC_PROGRESS") != "0" and total > 1
        self.next = self.start + (DELAY if self.terminal else LOG_INTERVAL)
        self.shown = 0  # width of the line on the terminal, to erase it

    def step(self, done: int) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if now < self.next:
            return
        text = f"interpreting {self.kernel}: program {done}/{self.total}"
        if self.terminal:
            self.stream.write("\r" + text.ljust(self.shown))
            self.shown = len(text)
            self.next = now + INTERVAL
        else:
            self.stream.write(f"{text} ({now - self.start:.0f} s)\n")
            self.next = now + LOG_INTERVAL
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * self.shown + "\r")
            self.stream.flush()
            self.shown = 0
