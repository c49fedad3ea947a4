"""The grading runtime: the library versions and compiler flags children run with,
recorded with every verdict and every set of expected outputs, and part of every
cache key.

The runtime is the interpreter that runs children (``settings.child_python``), which
need not be the one running this process: `jaxjudge runtime diff` grades with a
candidate interpreter before an operator moves to it (docs/operations.md). So the
versions are read from that interpreter, once per interpreter.
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from grader.config import settings

RUNTIME_PACKAGES = ("jax", "jaxlib", "flax", "optax", "numpy")
# How trusted runs call solutions (grader/child/run.py ``_Loaded``) and how XLA compiles
# (``CPU_XLA_FLAGS``): part of every expected-output cache key, so outputs computed
# another way are computed again. (Learners' jobs are compiled whole where they
# trace: grader/child/protocol.py ``JobMessage.compiled``.)
EXECUTION = "trusted runs eager; CPU XLA at optimisation level 0"

# Simulated CPU devices per child: enough for data-parallel problems (shard_map over a
# mesh) to run on any CPU worker; ordinary code uses the first and sees no difference.
HOST_DEVICES = 4
# Compile fast, run a little slower: the programs of a grading are small and run once
# or twice, so LLVM's optimisations cost more than they save (a jitted case's compile
# halves; docs/performance.md). And HOST_DEVICES devices.
CPU_XLA_FLAGS = (
    f"--xla_backend_optimization_level=0 --xla_force_host_platform_device_count={HOST_DEVICES}"
)

_PROBE = (
    "import importlib.metadata as m, json, platform, sys\n"
    "versions = {}\n"
    "for name in %r:\n"
    "    try:\n"
    "        versions[name] = m.version(name)\n"
    "    except m.PackageNotFoundError:\n"
    "        versions[name] = 'missing'\n"
    "versions['python'] = platform.python_version()\n"
    "print(json.dumps({'versions': versions, 'prefixes': [sys.prefix, sys.base_prefix]}))\n"
)


class RuntimeProbeError(RuntimeError):
    """The children's interpreter could not say what it runs."""


@cache
def _probe(python: Path) -> dict[str, Any]:
    """What ``python`` runs and where it is installed, asked once per interpreter."""
    try:
        probe = subprocess.run(
            [str(python), "-I", "-c", _PROBE % (RUNTIME_PACKAGES,)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise RuntimeProbeError(f"{python} could not list its packages: {error}") from None
    found: dict[str, Any] = json.loads(probe.stdout)
    return found


def interpreter_prefixes(python: Path) -> tuple[Path, ...]:
    """Where ``python``'s installation lives: its virtualenv and the interpreter that
    virtualenv was made from (a sandbox binds both, read-only)."""
    return tuple(dict.fromkeys(Path(prefix).resolve() for prefix in _probe(python)["prefixes"]))


def runtime_versions(python: Path | None = None) -> dict[str, str]:
    """The library versions of the interpreter that runs children (or ``python``)."""
    versions: dict[str, str] = _probe(Path(python or settings.child_python))["versions"]
    return dict(versions)


def xla_flags(device: str) -> str:
    """The XLA flags a child on ``device`` runs with (GPUs run with XLA's defaults)."""
    return CPU_XLA_FLAGS if device == "cpu" else ""


def runtime_record(device: str) -> dict[str, str]:
    """What a verdict and a set of expected outputs record of their runtime."""
    return {**runtime_versions(), "xla_flags": xla_flags(device), "execution": EXECUTION}
