"""Versions of the grading runtime, recorded with every verdict and cache entry."""

from __future__ import annotations

import platform
from functools import cache
from importlib.metadata import version

RUNTIME_PACKAGES = ("jax", "jaxlib", "flax", "optax", "numpy")
# How trusted runs call solutions (grader/child/run.py ``_Loaded``) and how XLA compiles
# (grader/running/launch.py): part of every expected-output cache key, so outputs computed
# another way are computed again. (Learners' jobs are compiled whole where they
# trace: grader/child/protocol.py ``JobMessage.compiled``.)
EXECUTION = "trusted runs eager; CPU XLA at optimisation level 0"


@cache
def runtime_versions() -> dict[str, str]:
    versions = {name: version(name) for name in RUNTIME_PACKAGES}
    versions["python"] = platform.python_version()
    return versions
