"""What `triton.profiler` records: sessions, their trees of frames, and the timers.

A session's tree is Triton's: ROOT, the scopes open at each event (by name, nested), and
under them a frame per kernel launch named by the kernel's `launch_metadata` "name" (the
kernel's name without one).  Frames of one name under one parent are one frame: their
times, counts and metrics add up.  A frame holds

    time (ns)      the GPU time of its launches (CUDA events on the stream they run on),
                   or the wall time on the interpreter; a scope's own time is its span
                   less the time of the frames recorded inside it
    count          launches (a scope: times entered, when nothing was recorded inside)
    flops8/16/32/64, flops, bytes     from `launch_metadata` and scope metrics, summed

GPU events are read in batches (after `_FOLD_AT` pending launches, and at finalize), so
a recorded launch does not wait for the GPU.  `finalize` writes `<name>.hatchet`: the
JSON that Triton's proton writes ([ROOT frame, device info]), which Triton's viewer and
tilecc's (`viewer.py`) both read.

While no session records launches, kernels launch without the profiler: the observer
is set on tilecc's launch path only then.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import namedtuple

from tilecc.compat.triton.profiler.flags import flags
from tilecc.runtime import launch as _launch
from tilecc.runtime.launch.args import ordered_options, resolve_grid

# the metrics of `launch_metadata` that a launch's frame keeps (Triton's LaunchHook's)
FLOPS_WIDTHS = (8, 16, 32, 64)
LAUNCH_METRICS = tuple(f"flops{w}" for w in FLOPS_WIDTHS) + ("bytes", "flops")
_FOLD_AT = 4096  # pending GPU measurements read at once

# what `launch_metadata(grid, kernel, args)` gets as `kernel` (Triton: the compiled
# kernel's metadata, of which profilers read the name)
KernelInfo = namedtuple("KernelInfo", ["name", "num_warps", "num_stages", "num_ctas"])


class Frame:
    __slots__ = ("name", "children", "metrics", "span_ns", "timed", "count", "device")

    def __init__(self, name: str):
        self.name = name
        self.children: dict[str, Frame] = {}
        self.metrics: dict[str, float] = {}
        self.span_ns = 0  # measured time of the frame's own events (inclusive for scopes)
        self.timed = False
        self.count = 0
        self.device: tuple[str, int] | None = None  # ("CUDA", 0) where GPU-timed

    def child(self, name: str) -> "Frame":
        found = self.children.get(name)
        if found is None:
            found = self.children[name] = Frame(name)
        return found

    def add_metrics(self, metrics) -> None:
        for key, value in (metrics or {}).items():
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise TypeError(f"profiler metric {key!r} must be a number, not "
                                f"{type(value).__name__}")
            self.metrics[key] = self.metrics.get(key, 0) + value

    def inclusive_ns(self) -> int:
        below = sum(c.inclusive_ns() for c in self.children.values())
        return max(self.span_ns, below) if self.timed else below

    def to_json(self, root: bool = False) -> dict:
        metrics: dict = dict(self.metrics)
        if root:
            metrics.update({"time (ns)": 0, "count": 0})
        elif self.timed:
            below = sum(c.inclusive_ns() for c in self.children.values())
            metrics["time (ns)"] = max(0, int(self.span_ns - below))
            metrics["count"] = self.count if not self.children else 0
            if self.device is not None:
                metrics["device_id"] = str(self.device[1])
                metrics["device_type"] = self.device[0]
        return {"frame": {"name": self.name, "type": "function"}, "metrics": metrics,
                "children": [c.to_json() for c in self.children.values()]}


class Session:
    def __init__(self, sid: int, name: str, hook: str | None):
        self.id, self.name, self.hook = sid, name, hook
        self.root = Frame("ROOT")
        self.active = True

    def frame(self, path: list[str]) -> Frame:
        node = self.root
        for name in path:
            node = node.child(name)
        return node

    @property
    def file_name(self) -> str:
        return self.name if self.name.endswith(".hatchet") else self.name + ".hatchet"


# --- timers ----------------------------------------------------------------------------------

class _WallClock:
    """The interpreter's and the host's clock: launches there are synchronous."""
    device = None

    def mark(self):
        return time.perf_counter_ns()

    def elapsed_ns(self, start, end) -> int:
        return end - start

    def release(self, start, end) -> None:
        pass


class _Events:
    """CUDA (or HIP) events of a framework, recorded on its current stream — the stream
    tilecc launches on for that framework's arrays — and reused once read."""

    def __init__(self, framework: str, device: int):
        self.framework = framework
        self.device_index = device
        torch = sys.modules.get("torch")
        hip = framework == "torch" and getattr(torch.version, "hip", None)
        self.device = ("HIP" if hip else "CUDA", device)
        self.pool: list = []

    def mark(self):
        event = self.pool.pop() if self.pool else self._new()
        if self.framework == "torch":
            torch = sys.modules["torch"]
            event.record(torch.cuda.current_stream(self.device_index))
        else:
            event.record()
        return event

    def _new(self):
        if self.framework == "torch":
            return sys.modules["torch"].cuda.Event(enable_timing=True)
        return sys.modules["cupy"].cuda.Event()

    def elapsed_ns(self, start, end) -> int:
        end.synchronize()
        if self.framework == "torch":
            ms = start.elapsed_time(end)
        else:
            ms = sys.modules["cupy"].cuda.get_elapsed_time(start, end)
        return int(round(ms * 1e6))

    def release(self, start, end) -> None:
        self.pool += (start, end)


_WALL = _WallClock()
_event_timers: dict[tuple[str, int], _Events] = {}


def _events(framework: str, device: int) -> _Events:
    timer = _event_timers.get((framework, device))
    if timer is None:
        timer = _event_timers[(framework, device)] = _Events(framework, device)
    return timer


def launch_timer(values, interpreted: bool):
    """The clock of a launch: the events of the framework whose device arrays it takes
    (torch's before CuPy's, as tilecc picks the stream), else the wall clock."""
    if interpreted:
        return _WALL
    cupy_device = None
    for value in values:
        module = type(value).__module__
        if module.startswith("torch") and getattr(value, "is_cuda", False):
            return _events("torch", value.device.index or 0)
        if module.startswith("cupy") and hasattr(value, "device"):
            cupy_device = value.device.id
        inner = getattr(value, "base", None)  # a host tensor descriptor's tensor
        if inner is not None and type(inner).__module__.startswith("torch") and \
                getattr(inner, "is_cuda", False):
            return _events("torch", inner.device.index or 0)
    if cupy_device is not None:
        return _events("cupy", cupy_device)
    return _WALL


def scope_timer():
    """The clock of a scope: the current stream's events of torch (when it has started
    CUDA), else CuPy's (when it is loaded), else the wall clock."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            return _events("torch", torch.cuda.current_device())
        cupy = sys.modules.get("cupy")
        if cupy is not None and cupy.cuda.runtime.getDeviceCount() > 0:
            return _events("cupy", cupy.cuda.runtime.getDevice())
    except Exception:  # no usable GPU: the host's clock
        pass
    return _WALL


# --- the recorder ----------------------------------------------------------------------------

class Recorder:
    """All sessions of the process, the open scopes of each thread, and the GPU
    measurements not yet read."""

    def __init__(self):
        self.sessions: dict[int, Session] = {}
        self.next_id = 0
        self.local = threading.local()
        self.pending: list = []  # (frames, timer, start, end)
        self.lock = threading.Lock()

    # sessions
    def start(self, name: str, hook: str | None) -> int:
        sid = self.next_id
        self.next_id += 1
        self.sessions[sid] = Session(sid, name, hook)
        self._update_observer()
        return sid

    def selected(self, session: int | None) -> list[Session]:
        if session is None:
            return list(self.sessions.values())
        found = self.sessions.get(session)
        return [found] if found is not None else []

    def set_active(self, session: int | None, active: bool) -> None:
        for s in self.selected(session):
            s.active = active
        self._update_observer()

    def finalize(self, session: int | None) -> list[str]:
        chosen = self.selected(session)
        self.fold()
        written = []
        for s in chosen:
            with open(s.file_name, "w") as f:
                json.dump([s.root.to_json(root=True), _device_info(s.root)], f)
            written.append(s.file_name)
            del self.sessions[s.id]
        self._update_observer()
        return written

    @property
    def profiling(self) -> bool:
        return bool(self.sessions)

    def active_sessions(self) -> list[Session]:
        return [s for s in self.sessions.values() if s.active]

    def _update_observer(self) -> None:
        flags.profiling_on = bool(self.sessions)
        hooked = any(s.active and s.hook == "triton" for s in self.sessions.values())
        _launch.set_launch_observer(self.observe_launch if hooked else None)

    # scopes
    @property
    def path(self) -> list[str]:
        path = getattr(self.local, "path", None)
        if path is None:
            path = self.local.path = []
        return path

    def enter_scope(self, name: str, metrics) -> tuple:
        """Open a scope in every active session: (sessions, timer, start) for exit."""
        self.path.append(name)
        sessions = self.active_sessions()
        for s in sessions:
            s.frame(self.path).add_metrics(metrics)
        if not sessions:
            return ((), None, None)
        timer = scope_timer()
        return (sessions, timer, timer.mark())

    def exit_scope(self, token: tuple, metrics=None) -> None:
        sessions, timer, start = token
        frames = [s.frame(self.path) for s in sessions]
        self.path.pop()
        if not frames:
            return
        for frame in frames:
            frame.add_metrics(metrics)
        self._measured(frames, timer, start, timer.mark())

    # launches
    def observe_launch(self, jit_fn, grid, args, kwargs, interpreted, launch):
        sessions = [s for s in self.active_sessions() if s.hook == "triton"]
        if not sessions:
            return launch(grid)
        try:
            by_name, options = jit_fn.bind(args, dict(kwargs))
            g3 = resolve_grid(grid, dict(by_name), *ordered_options(options))
        except Exception:  # arguments that do not bind: the launch says what is wrong
            return launch(grid)
        info = KernelInfo(jit_fn.fn.__name__, options.get("num_warps", 4),
                          options.get("num_stages", 3), 1)
        metadata = {"name": info.name}
        if jit_fn.launch_metadata is not None:
            metadata.update(jit_fn.launch_metadata(g3, info, dict(by_name)) or {})
        metrics = {k: metadata[k] for k in LAUNCH_METRICS if k in metadata}
        frames = [s.frame(self.path).child(str(metadata["name"])) for s in sessions]
        timer = launch_timer(by_name.values(), interpreted)
        start = timer.mark()
        result = launch(g3)
        end = timer.mark()
        for frame in frames:
            frame.add_metrics(metrics)
        self._measured(frames, timer, start, end)
        return result

    def _measured(self, frames, timer, start, end) -> None:
        for frame in frames:
            frame.count += 1
            frame.timed = True
            frame.device = frame.device or timer.device
        if timer is _WALL:
            for frame in frames:
                frame.span_ns += end - start
            return
        with self.lock:
            self.pending.append((frames, timer, start, end))
            full = len(self.pending) >= _FOLD_AT
        if full:
            self.fold()

    def fold(self) -> None:
        """Read the pending GPU measurements into their frames."""
        with self.lock:
            pending, self.pending = self.pending, []
        for frames, timer, start, end in pending:
            ns = timer.elapsed_ns(start, end)
            for frame in frames:
                frame.span_ns += ns
            timer.release(start, end)


def _device_info(root: Frame) -> dict:
    """Per device type and id, what Triton's viewer reads to compute `util`: clocks
    (kHz), memory bus width (bits), architecture and multiprocessor count."""
    seen: set[tuple[str, int]] = set()

    def walk(frame: Frame):
        if frame.device is not None:
            seen.add(frame.device)
        for c in frame.children.values():
            walk(c)
    walk(root)
    out: dict = {}
    for kind, index in sorted(seen):
        props = _cuda_properties(index) if kind == "CUDA" else None
        if props is not None:
            out.setdefault(kind, {})[str(index)] = props
    return out


def _cuda_properties(index: int) -> dict | None:
    try:
        from cupy_backends.cuda.api import runtime

        attr = runtime.deviceGetAttribute
        return {"clock_rate": attr(13, index), "memory_clock_rate": attr(36, index),
                "bus_width": attr(37, index), "arch": f"{attr(75, index)}{attr(76, index)}",
                "num_sms": attr(16, index)}
    except Exception:  # no CUDA runtime binding: the viewer's `util` is then unknown
        return None


RECORDER = Recorder()
