"""The one compilation cache a sandbox may read: filled by the library warm-up alone.

A pooled child exercises NNX, Linen, Optax and `lax.scan` before it takes
work (grader/child/warmup.py), which compiles a few hundred small XLA programs. A
process that runs *only* that warm-up (made-up data, no problem, no reference,
no case) fills this cache once per device; sandboxes then mount it read-only
and load those programs instead of compiling them. Nothing else ever writes
here: references, mistakes and `check` use the trusted cache, which no sandbox
sees, and sandboxes are told never to write.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import shutil
import subprocess
import tempfile
from pathlib import Path

from grader.child import warmup
from grader.config import PROJECT_ROOT, settings
from grader.running.launch import clean_environment, compilation_cache_env, on_project_path
from grader.versions import runtime_versions

log = logging.getLogger("jaxjudge.warmup")
READY = ".complete"
FILL_SECONDS = 600
# Sandboxes only read: a compile would have to take 10^9 seconds to be written.
READ_ONLY = {
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "1e9",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": str(1 << 62),
}

# The warm-up the cache holds the programs of (it runs in pooled children too).
WARMUP_SOURCE = Path(warmup.__file__)


def cache_dir(device: str) -> Path:
    return settings.warmup_cache_dir / device


def fingerprint(device: str) -> str:
    """What the cache's programs depend on: the runtime, the compiler flags, the warm-up.
    A cache filled under another fingerprint is filled again."""
    digest = hashlib.sha256()
    digest.update(json.dumps(runtime_versions(), sort_keys=True).encode())
    digest.update(
        json.dumps(clean_environment(device, "/", settings.pool_memory_mb), sort_keys=True).encode()
    )
    digest.update(WARMUP_SOURCE.read_bytes())
    return digest.hexdigest()


def ready(device: str) -> Path | None:
    directory = cache_dir(device)
    marker = directory / READY
    if marker.is_file() and marker.read_text().strip() == fingerprint(device):
        return directory
    return None


def ensure(device: str) -> Path | None:
    """The filled cache for ``device``, filling it first if needed (None if that failed:
    sandboxes then start without it, only slower)."""
    if (directory := ready(device)) is not None:
        return directory
    root = settings.warmup_cache_dir
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{device}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one filler per machine; the others wait for it
        if (directory := ready(device)) is not None:
            return directory
        try:
            _fill(cache_dir(device), device)
        except (OSError, subprocess.SubprocessError) as error:
            log.warning("could not fill the warm-up compilation cache: %s", error)
            return None
    return ready(device)


def _fill(directory: Path, device: str) -> None:
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    workdir = tempfile.mkdtemp(prefix="jaxjudge-warmup-")
    try:
        env = clean_environment(device, workdir, settings.pool_memory_mb) | compilation_cache_env(
            str(directory)
        )
        subprocess.run(
            [
                str(settings.child_python),
                "-I",
                "-c",
                on_project_path("from grader.child.warmup import warm_up; warm_up()"),
            ],
            env=env,
            cwd=str(PROJECT_ROOT),
            check=True,
            timeout=FILL_SECONDS,
            capture_output=True,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    (directory / READY).write_text(fingerprint(device) + "\n")
    log.info("warm-up compilation cache filled: %s", directory)


def sandbox_env(directory: Path) -> dict[str, str]:
    return compilation_cache_env(str(directory)) | READ_ONLY
