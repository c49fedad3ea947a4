"""A problem version as data: its folder and reference as one immutable snapshot.

The platform stores snapshots in its database (one per content hash) and grades
against a materialised copy, so a problem edited on disk changes nothing for
learners until the new version is published, and an old verdict can always name
the exact files that produced it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from grader.problems.problem import Problem, load_problem

REFERENCE_KEY = "@reference.py"  # the reference's key in a snapshot; not a valid folder path


def take(problem: Problem) -> dict[str, bytes]:
    """Every file of the problem folder (caches excluded) plus the reference."""
    files = {
        str(path.relative_to(problem.folder)): path.read_bytes()
        for path in sorted(problem.folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }
    files[REFERENCE_KEY] = problem.reference_path.read_bytes()
    return files


def content_hash(files: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return digest.hexdigest()


def encode(files: dict[str, bytes]) -> str:
    return json.dumps({name: base64.b64encode(data).decode() for name, data in files.items()})


def decode(text: str) -> dict[str, bytes]:
    return {name: base64.b64decode(data) for name, data in json.loads(text).items()}


def materialise(slug: str, files: dict[str, bytes], root: Path) -> Problem:
    """Write the snapshot under ``root/<hash>/`` once (atomically) and load it."""
    target = root / content_hash(files)
    if not target.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
        try:
            for name, data in files.items():
                relative = (
                    Path("reference_solutions", f"{slug}.py")
                    if name == REFERENCE_KEY
                    else (Path("problems", slug, name))
                )
                if ".." in relative.parts or relative.is_absolute():
                    raise ValueError(f"unsafe path in a problem snapshot: {name!r}")
                path = staging / relative
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
    return load_problem(target / "problems" / slug, target / "reference_solutions")
