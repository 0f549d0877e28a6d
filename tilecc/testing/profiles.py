"""Hypothesis settings profiles for property tests of kernels.

A kernel compiles (or is interpreted for the first time) on its first call, which takes far
longer than Hypothesis's default 200 ms deadline: without a profile the first example of a
property test fails as "too slow" or with a flaky DeadlineExceeded.  Registered when the
pytest plugin or the strategies are imported; load one with

    from hypothesis import settings
    settings.load_profile("tilecc")          # or: pytest --hypothesis-profile=tilecc

    tilecc      Hypothesis's defaults without the deadline and the too-slow health check:
                for any property test that launches kernels (examples/testing uses it);
    tilecc-ci   derandomized, no example database, no deadline, 50 examples, no "explain"
                phase (it re-runs a failing kernel many times to annotate the report);
    tilecc-dev  random, the local example database (failures replay first), no deadline,
                100 examples;
    tilecc-gpu  like tilecc-ci with 200 examples, for the GPU machine.

Registering loads nothing, so other projects' tests in the same environment keep their
settings.  Without Hypothesis installed, registering does nothing.
"""

from __future__ import annotations

__all__ = ["PROFILES", "register_profiles"]

PROFILES = ("tilecc", "tilecc-ci", "tilecc-dev", "tilecc-gpu")


def register_profiles() -> bool:
    """Register the profiles above with Hypothesis; False when it is not installed."""
    try:
        from hypothesis import HealthCheck, Phase, settings
    except ImportError:
        return False
    quiet = [HealthCheck.too_slow, HealthCheck.data_too_large]
    no_explain = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
    settings.register_profile("tilecc", deadline=None, suppress_health_check=quiet)
    settings.register_profile("tilecc-ci", max_examples=50, deadline=None, derandomize=True,
                              database=None, print_blob=True, suppress_health_check=quiet,
                              phases=no_explain)
    settings.register_profile("tilecc-dev", max_examples=100, deadline=None,
                              suppress_health_check=quiet)
    settings.register_profile("tilecc-gpu", max_examples=200, deadline=None, derandomize=True,
                              database=None, print_blob=True, suppress_health_check=quiet,
                              phases=no_explain)
    return True
