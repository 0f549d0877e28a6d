"""Shared test set-up.  GPU tests are marked `gpu`; tilecc's pytest plugin
(tilecc.testing.pytest_plugin: the marker, clean skips without a GPU, `--require-gpu`, the
`tilecc_cache_dir` fixture and the Hypothesis profiles) is loaded through its entry point
where tilecc is installed, and through `pytest_plugins` below where it only is on PYTHONPATH
(the entry point has the module's name, so it is never loaded twice)."""

import atexit
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))  # tests import kernels.py, conftest_compilers.py
# every render verifies the IR the passes left and checks that rendering only read it
os.environ.setdefault("TILECC_CHECK_IR", "1")

# The suite's disk cache lives in a temporary directory, removed at exit, never in the
# user's ~/.cache/tilecc (unless they point TILECC_CACHE_DIR there themselves).  Set here,
# at import, so that kernels compiled while collecting and the subprocesses tests start
# (they inherit the environment) use it too.
USER_CACHE_DIR = os.environ.get("TILECC_CACHE_DIR") or None
if USER_CACHE_DIR is None:
    SUITE_CACHE_DIR = tempfile.mkdtemp(prefix="tilecc-test-cache-")
    os.environ["TILECC_CACHE_DIR"] = SUITE_CACHE_DIR
    atexit.register(shutil.rmtree, SUITE_CACHE_DIR, ignore_errors=True)
else:
    SUITE_CACHE_DIR = USER_CACHE_DIR

pytest_plugins = ["tilecc.testing.pytest_plugin"]


def pytest_runtest_logreport(report):
    """Name each failure the moment it happens (a run cut short by a time limit then still
    says what failed), on the controlling process only when the run is parallel."""
    if not report.failed or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    terminal = _CONFIG and _CONFIG.pluginmanager.get_plugin("terminalreporter")
    if terminal:
        phase = "" if report.when == "call" else f" (in {report.when})"
        terminal.write_line(f"FAILED {report.nodeid}{phase}", red=True)


_CONFIG = None


def pytest_configure(config):
    global _CONFIG
    _CONFIG = config


# The suite's longest tests (several seconds to a minute each on two cores), longest first.
# They start first, and scripts/test.sh hands tests to the workers one at a time
# (--maxschedchunk 1): the long ones spread over the workers at the start, and the end of a
# parallel run is short tests only.  "file::function" covers all of its parameters;
# tests/test_suite_hygiene.py checks that each still names a test.
RUN_FIRST = (
    "test_random_kernels.py::test_random_kernels_compile_and_match_numpy",
    "test_dot_forms.py::test_dot_forms_compile_cleanly",
    "test_export.py::test_cmake_example_builds_with_hipcc",
    "test_transposed_loads.py::test_transposed_operand_kernels_compile_cleanly",
    "test_export.py::test_cmake_example_builds_with_nvcc",
    "test_random_kernels.py::test_random_kernels_through_tensor_descriptors",
    "test_random_kernels.py::test_random_products_of_transposed_operands",
    "test_standalone_compile.py::test_hip_examples_compile_with_hipcc",
    "test_standalone_compile.py::test_cuda_examples_compile_with_nvcc",
    "test_conformance.py::test_no_documented_name_is_broken",
    "test_golden.py::test_examples_compile_cleanly",
    "test_atomics_narrow.py::test_every_atomic_compiles_at_every_scope",
    "test_launch_options.py::test_maxnreg_limits_the_registers_ptxas_uses",
    "test_testing_toolkit.py::test_missing_rescale_is_caught_and_shrunk",
    "test_standalone_compile.py::test_documented_hipcc_commands_run_as_written",
    "test_cache.py::test_eight_processes_share_one_cache",
    "test_random_kernels.py::test_random_kernels_of_wild_constructs",
    "test_pointer_values.py::test_unknown_address_is_a_clear_interpreter_error",
    "test_pointer_values.py::test_address_arithmetic_and_pointer_casts",
    "test_reorder.py::test_reorder_case_compiles_cleanly",
    "test_libdevice.py::test_interpreter_accuracy_against_mpmath",
    "test_libdevice.py::test_every_signature_compiles_with_nvrtc",
    "test_libdevice.py::test_every_signature_compiles_with_hiprtc",
    "test_random_kernels.py::test_sm80_compiles_a_sample",
    "test_export.py::test_launcher_dispatch_hip",
    "test_testing_toolkit.py::test_plugin_in_a_fresh_pytest",
    "test_math.py::test_math_kernels_compile",
    "test_fp8.py::test_conversions_compile_cleanly",
    "test_attention_backward.py::test_default_configurations_compile_cleanly",
    "test_dot.py::test_dot_case_compiles_cleanly",
    "test_mfma.py::test_the_kernels_compile_cleanly_with_hiprtc",
    "test_mfma.py::test_cdna3_rows_compile_with_hipcc",
    "test_amd_isa_report.py::test_report_of_a_compiled_dot_kernel",
    "test_untuned_kernels.py::test_quotient_runs_rule_holds_on_values",
    "test_oldest_nvrtc.py::test_kernels_compile_with_nvrtc_13_0",
)


def pytest_collection_modifyitems(items):
    """RUN_FIRST's tests before the others, in its order (the rest keep theirs)."""
    rank = {name: i for i, name in enumerate(RUN_FIRST)}

    def place(item) -> int:
        function = getattr(item, "originalname", item.name)
        return rank.get(f"{item.path.name}::{function}", len(RUN_FIRST))

    items.sort(key=place)
