"""Shared timing helper for the benchmark scripts."""

import time


def host_us_per_launch(fn, iters: int, synchronize) -> float:
    """Host microseconds per call of `fn` (launches left unsynchronized inside a batch):
    200 warm-up calls, then the best of 5 batches of `iters`."""
    for _ in range(200):
        fn()
    synchronize()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        t1 = time.perf_counter()
        synchronize()
        best = min(best, (t1 - t0) / iters * 1e6)
    return best


def host_us_interleaved(cases: dict, iters: int, synchronize, rounds: int = 7) -> dict:
    """`host_us_per_launch` for several launchers at once: each round times one batch of
    every case in turn, and each case keeps its best batch, so that a busy moment of the
    host (another process, a clock change) does not land on one case alone."""
    for fn in cases.values():
        for _ in range(200):
            fn()
    synchronize()
    best = {label: float("inf") for label in cases}
    for _ in range(rounds):
        for label, fn in cases.items():
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            t1 = time.perf_counter()
            synchronize()
            best[label] = min(best[label], (t1 - t0) / iters * 1e6)
    return best
