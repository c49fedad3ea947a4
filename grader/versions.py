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
EXECUTION = (
    "trusted runs eager or compiled, scalars static where tracing needs their values;"
    " CPU XLA at optimisation level 0"
)

# Simulated CPU devices per child: enough for data-parallel problems (shard_map over a
# mesh) to run on any CPU worker; ordinary code uses the first and sees no difference.
HOST_DEVICES = 4
# Compile fast, run a little slower: the programs of a grading are small and run once
# or twice, so LLVM's optimisations cost more than they save (a jitted case's compile
# halves; docs/performance.md). And HOST_DEVICES devices.
CPU_XLA_FLAGS = (
    f"--xla_backend_optimization_level=0 --xla_force_host_platform_device_count={HOST_DEVICES}"
)

# A GPU child's XLA flags. Autotuning off: XLA times candidate kernels while it compiles
# and keeps the fastest, so two processes compiling one program may pick different
# matrix-product algorithms (different rounding: the reference was not reproducible
# within 1e-4 on an H100), and the timing runs on many threads, billed to the
# submission as CPU time (a reference "used" 321 s). One compile thread, for the same
# reason: a limit measures the submission, not the compiler's parallelism.
GPU_XLA_FLAGS = "--xla_gpu_autotune_level=0 --xla_gpu_force_compilation_parallelism=1"
# float32 matrix products at full precision on a GPU, where XLA would otherwise use
# TF32 (10 bits of mantissa) on Ampere and later: CPU and GPU then differ by reduction
# order alone, which the problems' tolerances are set for (docs/authoring.md).
GPU_MATMUL_PRECISION = "highest"

# The names under which the jaxlib in use reads a GPU child's memory fraction, newest
# first: jaxlib 0.7 and later read the first (and refuse both at once: "Remove the
# latter one, it is deprecated"), earlier ones only the second.
MEMORY_FRACTION_NAMES = ("XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_MEM_FRACTION")

_PROBE = (
    "import importlib.metadata as m, json, platform, sys\n"
    "versions = {}\n"
    "for name in %r:\n"
    "    try:\n"
    "        versions[name] = m.version(name)\n"
    "    except m.PackageNotFoundError:\n"
    "        versions[name] = 'missing'\n"
    "versions['python'] = platform.python_version()\n"
    "try:\n"
    "    client = m.distribution('jaxlib').locate_file('jaxlib/xla_client.py').read_text()\n"
    "except Exception:\n"
    "    client = ''\n"
    "read = [n for n in %r if repr(n) in client or '\"%%s\"' %% n in client]\n"
    "plugins = sorted({f\"{d.metadata['Name']} {d.version}\" for d in m.distributions()"
    " if str(d.metadata['Name']).lower().replace('_', '-').startswith(('jax-cuda', 'jax-rocm'))"
    " and 'plugin' in str(d.metadata['Name']).lower()})\n"
    "print(json.dumps({'versions': versions, 'prefixes': [sys.prefix, sys.base_prefix],"
    " 'memory_fraction_names': read, 'plugins': plugins}))\n"
)


class RuntimeProbeError(RuntimeError):
    """The children's interpreter could not say what it runs."""


@cache
def _probe(python: Path) -> dict[str, Any]:
    """What ``python`` runs and where it is installed, asked once per interpreter."""
    try:
        probe = subprocess.run(
            [str(python), "-I", "-c", _PROBE % (RUNTIME_PACKAGES, MEMORY_FRACTION_NAMES)],
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


def memory_fraction_name(python: Path | None = None) -> str:
    """The one variable through which the children's jaxlib takes a GPU child's memory
    fraction: the newest name its GPU client code reads (the newest known where that
    code cannot be read). Never both: a jaxlib that knows both refuses to start."""
    read = _probe(Path(python or settings.child_python)).get("memory_fraction_names") or []
    return next((name for name in MEMORY_FRACTION_NAMES if name in read), MEMORY_FRACTION_NAMES[0])


def runtime_plugins(python: Path | None = None) -> list[str]:
    """The children's JAX device plugins (``jax-cuda13-plugin 0.11.2``): none on a CPU host."""
    return list(_probe(Path(python or settings.child_python)).get("plugins") or [])


def xla_flags(device: str) -> str:
    """The XLA flags a child on ``device`` runs with."""
    return CPU_XLA_FLAGS if device == "cpu" else GPU_XLA_FLAGS


def runtime_record(device: str) -> dict[str, str]:
    """What a verdict and a set of expected outputs record of their runtime."""
    record = {**runtime_versions(), "xla_flags": xla_flags(device), "execution": EXECUTION}
    if device == "gpu":
        record["matmul_precision"] = GPU_MATMUL_PRECISION
    return record
