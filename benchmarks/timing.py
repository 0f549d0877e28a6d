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
