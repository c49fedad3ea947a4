"""Course problems: problems that belong to one course, written in the browser or
imported from a folder, a zip or the course's git repository.

A course problem's slug is ``c<course id>-<name>`` (``course_slug``), so every row that
names a problem by slug (assignments, submissions, verdicts) names its course too, and
the bank never holds one: `sync` refuses a folder named that way. Its files are author
code: they are run in sandboxes only (``catalog.problem_of`` loads them untrusted), and
only what `check` produced from them is trusted (docs/security.md)."""

from __future__ import annotations

import re
import tomllib

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import CourseMember, ProblemRecord, ProblemVersion, User
from app.vocabulary import Role
from grader.problems import snapshot
from grader.problems.problem import SLUG
from grader.problems.source import PROBLEMS, REFERENCES, content_hash

COURSE_SLUG = re.compile(r"^c([0-9]+)-(.+)$")


class CourseProblemError(ValueError):
    """A course problem request that cannot be carried out, with a message for people."""


def course_slug(course_id: int, name: str) -> str:
    """The slug of course ``course_id``'s problem ``name`` (lower-case words and hyphens)."""
    if not SLUG.match(name):
        raise CourseProblemError(
            f"{name!r} is not a problem name: use lower-case letters, digits and single"
            " hyphens between them (for example 'masked-softmax')"
        )
    return f"c{course_id}-{name}"


def course_of_slug(slug: str) -> int | None:
    """The course a problem slug belongs to; None for the bank's."""
    match = COURSE_SLUG.match(slug)
    return int(match.group(1)) if match else None


def is_course_slug(slug: str) -> bool:
    return course_of_slug(slug) is not None


def record_version(
    *, session: Session, course_id: int, slug: str, files: dict[str, bytes], author: User | None
) -> tuple[ProblemVersion, bool]:
    """The version of course ``course_id``'s problem ``slug`` holding exactly ``files``: the
    existing one when nothing changed, else a new one, numbered after the newest.
    Returns (version, created). The caller has validated the files and commits."""
    if course_of_slug(slug) != course_id:
        raise CourseProblemError(f"{slug!r} is not a problem of course {course_id}")
    record = session.get(ProblemRecord, slug)
    if record is None:
        record = ProblemRecord(slug=slug, course_id=course_id)
        session.add(record)
    elif record.course_id != course_id:
        raise CourseProblemError(f"{slug!r} belongs to another course")
    digest = content_hash(files)
    existing = session.scalar(
        select(ProblemVersion).where(
            ProblemVersion.slug == slug, ProblemVersion.content_hash == digest
        )
    )
    if existing is not None:
        return existing, False
    number = 1 + (
        session.scalar(select(func.max(ProblemVersion.number)).where(ProblemVersion.slug == slug))
        or 0
    )
    problem_title = _title(files, slug)
    version = ProblemVersion(
        slug=slug,
        number=number,
        content_hash=digest,
        title=problem_title,
        files_json=snapshot.encode(files),
        author_id=author.id if author is not None else None,
    )
    session.add(version)
    session.flush()
    return version, True


def _title(files: dict[str, bytes], slug: str) -> str:
    """The title problem.toml gives (the files were validated before), cut to the column."""
    try:
        config = tomllib.loads(files[f"problems/{slug}/problem.toml"].decode())
        return str(config.get("title") or slug)[:120]
    except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return slug[:120]


def course_problem_slugs(*, session: Session, course_id: int) -> list[str]:
    return list(
        session.scalars(
            select(ProblemRecord.slug)
            .where(ProblemRecord.course_id == course_id)
            .order_by(ProblemRecord.slug)
        )
    )


def course_of_problem(*, session: Session, slug: str) -> int | None:
    """The course a problem belongs to (its record's, else its slug's); None for the bank's."""
    record_course = session.scalar(
        select(ProblemRecord.course_id).where(ProblemRecord.slug == slug)
    )
    return record_course if record_course is not None else course_of_slug(slug)


def may_see(*, session: Session, slug: str, user: User | None) -> bool:
    """Whether ``user`` may know that problem ``slug`` exists: every bank problem, and a
    course problem for that course's members (any role) and platform admins only. The
    one test every route that names a problem by slug asks (anyone else gets a 404)."""
    course_id = course_of_problem(session=session, slug=slug)
    if course_id is None:
        return True
    if user is None:
        return False
    if user.role == Role.ADMIN:
        return True
    member = session.scalar(
        select(CourseMember.id).where(
            CourseMember.course_id == course_id, CourseMember.user_id == user.id
        )
    )
    return member is not None


def in_course_scope(*, session: Session, slug: str, course_id: int) -> bool:
    """Whether course ``course_id`` may use problem ``slug``: a bank problem or its own."""
    owner = course_of_problem(session=session, slug=slug)
    return owner is None or owner == course_id


def renamed(files: dict[str, bytes], old: str, new: str) -> dict[str, bytes]:
    """A problem's snapshot files under another slug: its folder and its reference moved."""
    moved = {}
    for path, data in files.items():
        if path == f"{REFERENCES}/{old}.py":
            moved[f"{REFERENCES}/{new}.py"] = data
        elif path.startswith(f"{PROBLEMS}/{old}/"):
            moved[f"{PROBLEMS}/{new}/{path.removeprefix(f'{PROBLEMS}/{old}/')}"] = data
    return moved
