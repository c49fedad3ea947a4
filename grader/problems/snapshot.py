"""A problem version as data: its source's files (grader/problems/source.py) as one
immutable snapshot.

The platform stores snapshots in its database (one per content hash) and grades
against a materialised copy, so a problem edited on disk changes nothing for
learners until the new version is published, and an old verdict can always name
the exact files that produced it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
from pathlib import Path

from grader.problems.problem import Problem, load_problem
from grader.problems.source import ProblemSource, content_hash


def take(problem: Problem) -> dict[str, bytes]:
    return problem.source.files()


def encode(files: dict[str, bytes]) -> str:
    return json.dumps({name: base64.b64encode(data).decode() for name, data in files.items()})


def decode(text: str) -> dict[str, bytes]:
    return {name: base64.b64decode(data) for name, data in json.loads(text).items()}


def materialise(slug: str, files: dict[str, bytes], root: Path, *, trusted: bool = True) -> Problem:
    """Write the snapshot under ``root/<hash>/`` once (atomically) and load it
    (``trusted``: as ``load_problem``'s)."""
    target = root / content_hash(files)
    if not target.is_dir():
        unsafe = [name for name in files if not ProblemSource(target, slug).owns(name)]
        if unsafe:
            raise ValueError(f"unsafe path in a problem snapshot: {unsafe[0]!r}")
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
        try:
            for name, data in files.items():
                path = staging / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            os.rename(staging, target)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if not target.is_dir():  # another process won the race: theirs is identical
                raise
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    return load_problem(ProblemSource(target, slug).folder, trusted=trusted)
