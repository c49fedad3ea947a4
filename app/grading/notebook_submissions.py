"""A learner's notebook made into submissions: one problem's (the problem page, `POST
/api/submissions/notebook`, `%jaxjudge submit SLUG --notebook PATH`), or a course's
notebook assignment's, one per problem whose entry points it defines. Each submission
stores the extracted code (app/grading/notebooks.py) and is graded as if typed.

Nothing here commits: the caller does, once, so a notebook that fails half-way stores
nothing. Malformed notebooks, unknown problems and limits raise the app's errors
(one sentence each) before anything is added.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.data import assignments, catalog
from app.data import submissions as submission_data
from app.errors import InvalidInputError, NotFoundError
from app.grading.notebooks import (
    CodeCell,
    Extracted,
    NotebookError,
    code_cells,
    entry_points,
    extract,
)
from app.models import Course, Submission, User
from grader.child.verdicts import Mode
from grader.problems.problem import Problem


@dataclass(frozen=True)
class NotebookSubmission:
    """One problem's outcome of a notebook: its submission, or why none was made."""

    problem: str
    title: str
    submission: Submission | None
    extracted: Extracted | None
    reason: str | None = None  # why no submission


def cells_of(raw: bytes) -> list[CodeCell]:
    """The notebook's code cells, or InvalidInputError in one sentence."""
    try:
        return code_cells(raw)
    except NotebookError as error:
        raise InvalidInputError(str(error)) from None


def _extracted(cells: list[CodeCell], problem: Problem, max_source_bytes: int) -> Extracted:
    try:
        found = extract(b"", entry_points(problem), cells=cells)
    except NotebookError as error:
        raise InvalidInputError(str(error)) from None
    size = len(found.code.encode())
    if size > max_source_bytes:
        raise InvalidInputError(
            f"The code taken from the notebook is {size // 1024} KiB; the limit is"
            f" {max_source_bytes // 1024} KiB."
        )
    return found


def submit_one(
    *,
    session: Session,
    user: User,
    slug: str,
    raw: bytes,
    mode: str,
    max_source_bytes: int,
    max_queued: int,
    max_submits_per_hour: int | None,
    client_key: str | None,
) -> tuple[Submission, Extracted]:
    """The notebook's code for ``slug``, stored as one submission (queued)."""
    visible = catalog.visible_live_problem(session=session, slug=slug, user=user)
    if visible is None:  # a course's own problem does not exist outside the course
        raise catalog.unknown_problem(session=session, slug=slug)
    version, problem = visible
    found = _extracted(cells_of(raw), problem, max_source_bytes)
    submission = submission_data.create_submission(
        session=session,
        user=user,
        problem=slug,
        code=found.code,
        mode=mode,
        version_id=version.id,
        max_queued=max_queued,
        max_submits_per_hour=max_submits_per_hour,
        client_key=client_key,
    )
    return submission, found


def notebook_names(*, session: Session, course: Course) -> dict[str, list[str]]:
    """The course's notebook assignments: each name with its problems, in assignment order."""
    named: dict[str, list[str]] = {}
    for assignment in assignments.assignments_of(session=session, course=course):
        if assignment.notebook:
            named.setdefault(assignment.notebook, []).append(assignment.problem)
    return named


def problem_key(client_key: str | None, slug: str) -> str | None:
    """One upload's Idempotency-Key, made into one key per problem it submits to."""
    if client_key is None:
        return None
    return "nb-" + hashlib.sha256(f"{client_key}\0{slug}".encode()).hexdigest()[:48]


def submit_course_notebook(
    *,
    session: Session,
    user: User,
    course: Course,
    name: str,
    raw: bytes,
    max_source_bytes: int,
    max_queued: int,
    max_submits_per_hour: int | None,
    client_key: str | None,
) -> list[NotebookSubmission]:
    """One submission per problem of the notebook assignment ``name`` whose entry
    points the notebook defines; the others say why not. A retry with the same
    ``client_key`` answers the submissions the first one stored."""
    slugs = notebook_names(session=session, course=course).get(name)
    if not slugs:
        raise NotFoundError(f"This course has no notebook assignment {name!r}.")
    cells = cells_of(raw)
    outcomes: list[NotebookSubmission] = []
    for slug in slugs:
        visible = catalog.visible_live_problem(session=session, slug=slug, user=user)
        if visible is None:
            outcomes.append(NotebookSubmission(slug, slug, None, None, "Not published yet."))
            continue
        version, problem = visible
        title = problem.config.title
        key = problem_key(client_key, slug)
        earlier = key and submission_data.submission_by_key(session=session, user=user, key=key)
        try:
            found = _extracted(cells, problem, max_source_bytes)
        except InvalidInputError as error:
            outcomes.append(NotebookSubmission(slug, title, None, None, str(error)))
            continue
        if earlier:
            outcomes.append(NotebookSubmission(slug, title, earlier, found))
            continue
        try:
            with session.begin_nested():
                submission = submission_data.create_submission(
                    session=session,
                    user=user,
                    problem=slug,
                    code=found.code,
                    mode=Mode.SUBMIT,
                    version_id=version.id,
                    max_queued=max_queued,
                    max_submits_per_hour=max_submits_per_hour,
                    client_key=key,
                )
        except IntegrityError:  # the same upload, sent again at once, stored it just now
            earlier = submission_data.submission_by_key(session=session, user=user, key=key or "")
            if not earlier:
                raise
            submission = earlier
        outcomes.append(NotebookSubmission(slug, title, submission, found))
    return outcomes
