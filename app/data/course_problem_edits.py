"""The browser editor's side of a course problem: its files as the editor shows them, the
files a form sends back, their validation (no author code runs: schema, paths, sizes,
syntax), and a new problem from the scaffold or from a copy of a bank problem.

The editor names files by their path in the problem folder (``statement.md``,
``mistakes/sign.py``); the reference, which lives outside the folder
(grader/problems/source.py), is ``reference.py`` there. Files that are not UTF-8 text are
kept as they are and not shown."""

from __future__ import annotations

import ast
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sqlalchemy.orm import Session

from app.core.config import settings
from app.data import catalog, course_problems
from app.data.course_problems import CourseProblemError
from app.models import ProblemVersion, User
from grader.errors import ProblemError
from grader.problems import snapshot
from grader.problems.problem import SLUG
from grader.problems.scaffold import scaffold_files
from grader.problems.source import PROBLEMS, REFERENCES

REFERENCE_NAME = "reference.py"
# The order the editor shows a problem's files in; mistakes and anything else follow.
FIRST = (
    "statement.md",
    "starter.py",
    REFERENCE_NAME,
    "cases.py",
    "tests.py",
    "problem.toml",
    "hints.md",
    "solution.md",
    "quiz.toml",
)


class InvalidProblemError(CourseProblemError):
    """Files that cannot be saved, with every reason (file and line where known)."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__(" ".join(errors))


@dataclass(frozen=True)
class EditorFile:
    name: str  # as the editor names it
    text: str


def _root_path(slug: str, name: str) -> str:
    if name == REFERENCE_NAME:
        return f"{REFERENCES}/{slug}.py"
    return f"{PROBLEMS}/{slug}/{name}"


def _editor_name(slug: str, path: str) -> str:
    if path == f"{REFERENCES}/{slug}.py":
        return REFERENCE_NAME
    return path.removeprefix(f"{PROBLEMS}/{slug}/")


def editor_files(slug: str, files: dict[str, bytes]) -> list[EditorFile]:
    """The text files of a version, as the editor shows them, in ``FIRST``'s order."""
    shown = []
    for path, data in files.items():
        try:
            shown.append(EditorFile(_editor_name(slug, path), data.decode()))
        except UnicodeDecodeError:
            continue  # kept as it is (``from_form``)
    rank = {name: index for index, name in enumerate(FIRST)}
    return sorted(shown, key=lambda f: (rank.get(f.name, len(FIRST)), f.name))


def from_form(
    slug: str, names: list[str], texts: list[str], previous: dict[str, bytes]
) -> dict[str, bytes]:
    """The files an editor form sends: pairs of a name and a text (an empty name removes
    the file, a changed one renames it, a new pair adds one), plus the previous version's
    files that are not text, unchanged. Raises InvalidProblemError naming each bad field."""
    if len(names) != len(texts):
        raise InvalidProblemError(["The form sent names and texts that do not pair up."])
    errors: list[str] = []
    files: dict[str, bytes] = {path: data for path, data in previous.items() if not _is_text(data)}
    for name, text in zip(names, texts, strict=True):
        name = name.strip()
        if not name:
            continue
        if not _safe_name(name):
            errors.append(
                f"{name[:80]!r} is not a file name here: use a path inside the problem folder"
                " such as 'mistakes/sign_flip.py' (letters, digits, '_', '-', '.' and '/')."
            )
            continue
        path = _root_path(slug, name)
        if path in files:
            errors.append(f"{name}: two files have this name.")
            continue
        files[path] = text.replace("\r\n", "\n").encode()
    if errors:
        raise InvalidProblemError(errors)
    return files


def _is_text(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def _safe_name(name: str) -> bool:
    parts = PurePosixPath(name).parts
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./")
    return (
        len(name) <= 120
        and set(name) <= allowed
        and not name.startswith("/")
        and all(part not in ("", ".", "..") and not part.startswith(".") for part in parts)
        and "__pycache__" not in parts
    )


def validate(slug: str, files: dict[str, bytes]) -> list[str]:
    """Why ``files`` cannot be a version of problem ``slug`` (empty: they can). Sizes,
    then each Python file's syntax, then the folder as `check` loads it: nothing runs."""
    errors = []
    total = sum(len(data) for data in files.values())
    if total > settings.course_problem_bytes:
        errors.append(
            f"The problem's files hold {total // 1024} KiB together; the limit is"
            f" {settings.course_problem_bytes // 1024} KiB."
        )
    for path, data in sorted(files.items()):
        name = _editor_name(slug, path)
        if len(data) > settings.course_problem_file_bytes:
            errors.append(
                f"{name}: {len(data) // 1024} KiB; the limit for one file is"
                f" {settings.course_problem_file_bytes // 1024} KiB."
            )
        elif name.endswith(".py"):
            try:
                ast.parse(data, filename=name)
            except SyntaxError as error:
                errors.append(f"{name} line {error.lineno}: syntax error: {error.msg}.")
            except ValueError as error:  # a null byte
                errors.append(f"{name}: not Python source ({error}).")
    if errors:
        return errors
    with tempfile.TemporaryDirectory(prefix="jaxjudge-edit-") as scratch:
        try:
            snapshot.materialise(slug, files, Path(scratch), trusted=False)
        except ProblemError as error:
            return [_located(error, Path(scratch), slug)]
        except ValueError as error:  # an unsafe path (from_form refuses them first)
            return [str(error)]
    return []


def _located(error: ProblemError, scratch: Path, slug: str) -> str:
    """The error with its file named as the editor names it (not the scratch folder)."""
    try:
        relative = error.path.resolve().relative_to(scratch.resolve())
        parts = relative.parts[1:]  # below the content hash
        name = _editor_name(slug, "/".join(parts))
    except ValueError:
        name = error.path.name
    where = name + (f" line {error.line}" if error.line else "")
    return (
        f"{where}: {error.field}: {error.message}" if error.field else f"{where}: {error.message}"
    )


def save(
    *,
    session: Session,
    course_id: int,
    slug: str,
    files: dict[str, bytes],
    author: User,
) -> tuple[ProblemVersion, bool]:
    """Validate ``files`` and record them as the problem's version (a new one when they
    changed). Raises InvalidProblemError, and stores nothing, when they are invalid."""
    errors = validate(slug, files)
    if errors:
        raise InvalidProblemError(errors)
    return course_problems.record_version(
        session=session, course_id=course_id, slug=slug, files=files, author=author
    )


def create(
    *,
    session: Session,
    course_id: int,
    name: str,
    author: User,
    copy_of: str | None = None,
) -> ProblemVersion:
    """Course ``course_id``'s new problem ``name``: the scaffold (which passes `check` as it
    stands), or a copy of the bank's published problem ``copy_of`` under the new name."""
    slug = course_problems.course_slug(course_id, name.strip())
    if len(slug) > 100:
        raise CourseProblemError("A problem name is at most 90 characters.")
    if course_problems.course_of_problem(session=session, slug=slug) is not None and (
        catalog.versions(session=session, slug=slug)
    ):
        raise CourseProblemError(f"This course already has a problem named {name.strip()!r}.")
    if copy_of is None:
        files = scaffold_files(slug)
    else:
        bank = catalog.live_version(session=session, slug=copy_of)
        if bank is None or course_problems.is_course_slug(copy_of) or not SLUG.match(copy_of):
            raise CourseProblemError(f"The bank has no published problem {copy_of[:100]!r}.")
        files = course_problems.renamed(snapshot.decode(bank.files_json), copy_of, slug)
    version, _created = save(
        session=session, course_id=course_id, slug=slug, files=files, author=author
    )
    return version
