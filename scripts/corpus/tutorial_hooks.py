"""The program scripts/corpus/tutorials.py starts for one tutorial when it needs a hook:

    python -m tilecc.compat -m tutorial_hooks TUTORIAL.py [args...]

The compatibility mode is installed first (that is what `python -m tilecc.compat` does), so
`import triton` below is tilecc; then, as the environment asks, our hooks are set and the
tutorial runs, unchanged, as `__main__` (as `python -m tilecc.compat TUTORIAL.py` would):

    TUTORIAL_NO_BENCH=1   `@triton.testing.perf_report` functions' `.run(...)` print one
                          line and return instead of timing every point of their tables
    TUTORIAL_CPU=1        no GPU: the corpus worker's stand-in driver (an sm_90 device whose
                          torch device is the CPU), kernels on the interpreter (set
                          TRITON_INTERPRET=1 too), and every specialization launched is
                          also compiled for TUTORIAL_COMPILE (default "cuda,hip": tilecc's
                          source through NVRTC / hiprtc, no GPU needed); the outcomes are
                          written as JSON to TUTORIAL_REPORT
"""

from __future__ import annotations

import atexit
import json
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def skip_benchmarks() -> None:
    import triton.testing

    def run(self, *args, **kwargs):
        marks = self.benchmarks if isinstance(self.benchmarks, list) else [self.benchmarks]
        names = ", ".join(str(getattr(b, "plot_name", "?")) for b in marks)
        print(f"[tutorials] benchmark {names}: skipped (--no-bench)")

    triton.testing.Mark.run = run


def cpu_mode(targets: list[str], report: str | None) -> None:
    sys.path.insert(0, HERE)
    import worker

    worker.cpu_standins("tilecc")
    worker.count_launches_tilecc(targets)

    def write_report() -> None:
        outcome = {target: worker.compile_outcome(target) for target in targets}
        outcome["kernels"] = sorted(worker.LAUNCHED)
        if report:
            with open(report, "w") as f:
                json.dump(outcome, f)

    atexit.register(write_report)


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: python -m tilecc.compat -m tutorial_hooks TUTORIAL.py [args...]")
    path = os.path.abspath(argv[0])
    if os.environ.get("TUTORIAL_NO_BENCH") == "1":
        skip_benchmarks()
    if os.environ.get("TUTORIAL_CPU") == "1":
        targets = [t for t in os.environ.get("TUTORIAL_COMPILE", "cuda,hip").split(",") if t]
        cpu_mode(targets, os.environ.get("TUTORIAL_REPORT"))
    sys.argv = [path, *argv[1:]]
    sys.path.insert(0, os.path.dirname(path))
    runpy.run_path(path, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
