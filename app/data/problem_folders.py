"""A course's problems in and out as folders: a version exported as a zip in the bank's
layout, and an upload (a zip, a folder, a pulled repository) imported all or nothing.

The format and the safe reading of uploads are grader/problems/folders.py's; here a
problem's bank name becomes the course's slug (``c<course>-<name>``) on the way in and
loses it on the way out, so a course problem exported and imported elsewhere, or a bank
problem imported into a course, keeps its content byte for byte. An imported version is
not live: it needs a passing `check` before it is published (docs/authoring.md)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.data import course_problems
from app.models import ProblemVersion, User
from grader.problems import folders, snapshot
from grader.problems.folders import FolderError, FolderProblem
from grader.problems.source import content_hash


@dataclass(frozen=True)
class Imported:
    """One problem of an import: the version holding its files, and whether it is new."""

    slug: str
    number: int
    created: bool

    def line(self) -> str:
        what = "new version" if self.created else "unchanged, already"
        return f"{self.slug}: {what} v{self.number}"


def name_of(slug: str) -> str:
    """A problem's name in a folder: a course problem's slug without ``c<course>-``."""
    match = course_problems.COURSE_SLUG.match(slug)
    return match.group(2) if match else slug


def export_version(version: ProblemVersion) -> tuple[str, bytes]:
    """The version as a zip in the bank's layout, and the zip's file name."""
    files = snapshot.decode(version.files_json)
    name = name_of(version.slug)
    return f"{name}-v{version.number}.zip", folders.export(files, slug=version.slug, name=name)


def content_hash_as_bank(version: ProblemVersion) -> str:
    """The content hash the version's files have under their folder name: a bank problem
    imported into a course keeps the bank folder's hash (grader/problems/source.py)."""
    files = snapshot.decode(version.files_json)
    return content_hash(folders.renamed(files, version.slug, name_of(version.slug)))


def import_problems(
    *, session: Session, course_id: int, problems: list[FolderProblem], author: User | None
) -> list[Imported]:
    """Every problem as a version of course ``course_id``'s problem of the same name, or
    none of them: any invalid problem raises ``FolderError`` (every error listed) before
    anything is written. The caller commits."""
    errors = folders.validate(problems)
    slugs: dict[str, str] = {}
    for problem in problems:
        try:
            slugs[problem.name] = course_problems.course_slug(course_id, problem.name)
        except course_problems.CourseProblemError as error:
            errors.append(str(error))
    if errors:
        raise FolderError(errors)
    imported = []
    for problem in problems:
        slug = slugs[problem.name]
        version, created = course_problems.record_version(
            session=session,
            course_id=course_id,
            slug=slug,
            files=folders.renamed(problem.files, problem.name, slug),
            author=author,
        )
        imported.append(Imported(slug=slug, number=version.number, created=created))
    return imported
