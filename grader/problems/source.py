"""A problem as its author wrote it, in two places under one root: the folder
``problems/<slug>/`` and its reference ``reference_solutions/<slug>.py``. The root is the
project (``JAXJUDGE_CONTENT_DIR``), a materialised version under ``var/versions/<hash>/``,
or a test's copy; whichever it is, the two places are found, read and hashed together
here, and nowhere else.

The reference sits outside the folder so that nothing which serves or mounts a problem
folder can carry it along by accident."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

PROBLEMS = "problems"
REFERENCES = "reference_solutions"


@dataclass(frozen=True)
class ProblemSource:
    root: Path
    slug: str

    @classmethod
    def of(cls, folder: Path) -> ProblemSource:
        """The source whose folder is ``folder`` (``<root>/problems/<slug>``)."""
        return cls(folder.parent.parent, folder.name)

    @property
    def folder(self) -> Path:
        return self.root / PROBLEMS / self.slug

    @property
    def reference(self) -> Path:
        return self.root / REFERENCES / f"{self.slug}.py"

    def files(self) -> dict[str, bytes]:
        """Every file of both places by its path under the root (bytecode caches left out)."""
        found = {
            f"{PROBLEMS}/{self.slug}/{path.relative_to(self.folder).as_posix()}": path.read_bytes()
            for path in sorted(self.folder.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts
        }
        found[f"{REFERENCES}/{self.slug}.py"] = self.reference.read_bytes()
        return found

    def content_hash(self) -> str:
        return content_hash(self.files())

    def owns(self, name: str) -> bool:
        """Whether ``name`` is a path this source may hold (snapshots are checked with it
        before anything is written)."""
        parts = PurePosixPath(name).parts
        if ".." in parts or PurePosixPath(name).is_absolute() or "\\" in name:
            return False
        return name == f"{REFERENCES}/{self.slug}.py" or (
            len(parts) > 2 and parts[:2] == (PROBLEMS, self.slug)
        )


def content_hash(files: dict[str, bytes]) -> str:
    """A version's identity: SHA-256 over the sorted paths and each file's own SHA-256."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return digest.hexdigest()
