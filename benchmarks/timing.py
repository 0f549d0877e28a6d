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


def gpu_ms_queued(cases: dict, copies: int, rounds: int = 15, calls: int = 40,
                  sleep: bool = True) -> dict:
    """Device milliseconds per call of each case, per round: {label: [ms, ...]}.

    `cases[label](i)` launches one call on buffer set `i % copies`.  A round queues, for
    each case in turn, a sleep kernel (so that the host has enqueued every call before
    the GPU reaches them) then `calls` calls back to back between two events, and takes
    the mean: event resolution (about 0.5 µs) is then spread over `calls` calls, which
    a 10 µs kernel timed one call at a time cannot afford.  Rotating over `copies`
    buffer sets, chosen by the caller to exceed the L2 cache, keeps every call reading
    from memory as a single call would.  Cases are interleaved within each round, so a
    drift of the GPU's clocks or load spreads over all of them, and each round starts
    with the next case: under a GEMM's power draw the case timed first ran faster (on an
    H200, one GEMM timed twice in a row in a fixed order, best of three rounds of
    `triton.testing.do_bench` each: 728 TFLOP/s first, 656 second).  `sleep` False: no
    sleep kernel, for kernels long enough that the host stays ahead; the GPU then works
    without pause, as under a sustained load (after each pause a GPU near its power limit
    runs the next few milliseconds faster: on an H200 the same 8192³ fp16 GEMMs measured
    700-705 TFLOP/s in 5 ms bursts, 645 sustained)."""
    import torch

    for fn in cases.values():  # warm-up: compile, first-touch the buffers
        for i in range(2 * copies):
            fn(i)
    torch.cuda.synchronize()
    out = {label: [] for label in cases}
    labels = list(cases)
    for r in range(rounds):
        for label in labels[r % len(labels):] + labels[:r % len(labels)]:
            fn = cases[label]
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if sleep:
                torch.cuda._sleep(5_000_000)  # a few ms: longer than any host hiccup
            start.record()
            for i in range(calls):
                fn(i)
            end.record()
            end.synchronize()
            out[label].append(start.elapsed_time(end) / calls)
    return out


def runs(fn, what: str) -> bool:
    """Call `fn` once and wait for the GPU; False, after a line saying why, where it raises
    (a configuration a compiler cannot build or this GPU cannot run)."""
    import torch

    try:
        fn()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - reported; the other configurations go on
        print(f"  skipped {what}: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
        return False
    return True


def gpu_ms_sustained(cases: dict, seconds: float = 0.3, settle: float = 0.1,
                     rounds: int = 3) -> dict:
    """Device milliseconds per call of each case under its own sustained load, per round:
    {label: [ms, ...]}.

    `cases[label]()` launches one call.  A round runs each case alone, the first case
    rotating: `settle` seconds of back-to-back calls untimed, then about `seconds` of them
    between two events.  Under a heavy kernel an H200 runs at its power limit and its clock
    follows the load of the last few milliseconds, so rounds of a few calls of each case in
    turn (`gpu_ms_queued`) time each case partly at the clock its neighbours left: a kernel
    that draws more power than its neighbours runs faster there than it can run on its own
    (torch's SDPA at head dimension 128: 614 TFLOP/s between Triton and tilecc, 558 alone).
    This is the speed a workload that runs one of them for long gets."""
    import torch

    def block(fn, calls: int) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    counts = {}
    for label, fn in cases.items():  # warm-up, and how many calls fill `seconds`
        block(fn, 3)
        ms = max(block(fn, 5) / 5, 1e-3)
        counts[label] = (max(3, int(settle * 1e3 / ms)), max(10, int(seconds * 1e3 / ms)))
    out = {label: [] for label in cases}
    labels = list(cases)
    for r in range(rounds):
        for label in labels[r % len(labels):] + labels[:r % len(labels)]:
            warm, calls = counts[label]
            block(cases[label], warm)
            out[label].append(block(cases[label], calls) / calls)
    return out


def fastest_configs(launchers: dict, configs, prepare=None, check=None, report=None,
                    rounds: int = 15, calls: int = 8, sleep: bool = False) -> dict:
    """{name: (ms, config)}: each tool's fastest of `configs`, the tools timed side by side.

    `launchers[name](config)` gives a function that launches that tool at `config` (None:
    not at this one).  Each runs once, after `prepare()` and before `check(name)` (which
    raises on a wrong result); one that cannot build or run is skipped with a line saying
    why (`runs`).  Per configuration the tools that ran are timed together
    (`gpu_ms_queued`: a sustained load unless `sleep`, for kernels too short for the host
    to stay ahead; the tool that starts a round rotating), each
    keeping its median round, which `report(config, {name: ms})` may print; (inf, None)
    for a tool that ran at no configuration."""
    import statistics

    out = {name: (float("inf"), None) for name in launchers}
    for config in configs:
        fns = {}
        for name, make in launchers.items():
            fn = make(config)
            if fn is None:
                continue
            if prepare is not None:
                prepare()
            if not runs(fn, f"{name} {config}"):
                continue
            if check is not None:
                check(name)
            fns[name] = fn
        if not fns:
            continue
        timed = gpu_ms_queued({name: (lambda i, fn=fn: fn()) for name, fn in fns.items()},
                              copies=1, rounds=rounds, calls=calls, sleep=sleep)
        medians = {name: statistics.median(times) for name, times in timed.items()}
        if report is not None:
            report(config, medians)
        for name, ms in medians.items():
            if ms < out[name][0]:
                out[name] = (ms, config)
    return out


def copies_beyond_l2(bytes_per_call: int) -> int:
    """How many buffer sets `gpu_ms_queued` rotates over: together at least three times
    the L2 cache, so that no call finds its inputs left there by an earlier one."""
    import torch

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    return max(2, -(-3 * l2 // bytes_per_call))


# Dense tensor-core peaks (TFLOP/s, no sparsity) of the GPUs the tables are made on, from
# the vendors' data sheets: 16-bit inputs, and 8-bit float inputs.
DENSE_PEAK_TFLOPS = {
    "H100 PCIe": (756.0, 1513.0),
    "H100": (989.4, 1978.9),  # SXM5
    "H200": (989.4, 1978.9),
    "A100": (312.0, None),
}


def dense_peak_tflops(device_name: str, eight_bit: bool = False) -> float | None:
    """The dense tensor-core peak of the GPU named `device_name` (torch's name for it), or
    None where it is not in DENSE_PEAK_TFLOPS."""
    for key, peaks in DENSE_PEAK_TFLOPS.items():  # the longer names first
        if key in device_name:
            return peaks[1 if eight_bit else 0]
    return None
