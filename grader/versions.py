"""Versions of the grading runtime, recorded with every verdict and cache entry."""

from __future__ import annotations

import platform
from functools import cache
from importlib.metadata import version

RUNTIME_PACKAGES = ("jax", "jaxlib", "flax", "optax", "numpy")


@cache
def runtime_versions() -> dict[str, str]:
    versions = {name: version(name) for name in RUNTIME_PACKAGES}
    versions["python"] = platform.python_version()
    return versions
