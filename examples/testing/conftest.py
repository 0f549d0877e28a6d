"""The property tests here import the examples' kernels from examples/, and run under the
"tilecc" Hypothesis profile: no 200 ms deadline, since a kernel compiles on its first call
(`pytest --hypothesis-profile=NAME` still picks another)."""

import os
import sys

from hypothesis import settings

from tilecc.testing.profiles import register_profiles

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
register_profiles()
settings.load_profile("tilecc")
