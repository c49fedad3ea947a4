"""A course's own problems in the browser, for its instructors (and admins): the list, a
new problem (the scaffold, or a copy of a bank problem), the editor (every file, a live
preview of the statement), the check with its progress, the learner-facing preview, and
publishing a version whose check passed. Teaching assistants get 403; anyone outside
the course 404, as for every course page."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from app.core.markdown import render_markdown
from app.core.request_db import SessionDep
from app.data import catalog, course_problem_edits, course_problems, courses
from app.data.course_problem_edits import InvalidProblemError
from app.data.course_problems import CourseProblemError
from app.errors import ConflictError, InvalidInputError, NotFoundError
from app.grading import author_checks
from app.grading.notifications import announce_new_work
from app.models import Course, ProblemVersion
from app.vocabulary import CheckStatus, MemberRole, Role
from app.web.guards import CsrfChecked, SignedInUser
from app.web.problems import learner_preview
from app.web.render import page
from grader.errors import ProblemError
from grader.problems import snapshot

router = APIRouter(include_in_schema=False)
MAX_PREVIEW_CHARS = 200_000  # a statement larger than a problem's files may be is not one


def _course_author(course_id: int, user: SignedInUser, session: SessionDep) -> courses.CourseAccess:
    """The course's instructors and platform admins write its problems; its teaching
    assistants may not (403); for anyone else the course does not exist (404)."""
    if user.role == Role.ADMIN:
        course = session.get(Course, course_id)
        if course is None:
            raise NotFoundError(f"No course {course_id}.")
        return courses.CourseAccess(course=course, role=MemberRole.INSTRUCTOR, user=user)
    return courses.as_instructor(courses.access(session=session, course_id=course_id, user=user))


CourseAuthor = Annotated[courses.CourseAccess, Depends(_course_author)]


def _own(session: SessionDep, access: courses.CourseAccess, slug: str) -> str:
    """``slug`` if it names one of this course's problems (else 404)."""
    owner = course_problems.course_of_problem(session=session, slug=slug)
    if owner != access.course.id or not catalog.versions(session=session, slug=slug):
        raise NotFoundError(f"This course has no problem {slug[:100]!r}.")
    return slug


def _version(
    session: SessionDep, access: courses.CourseAccess, slug: str, number: int | None
) -> ProblemVersion:
    _own(session, access, slug)
    version = (
        catalog.version_by_number(session=session, slug=slug, number=number)
        if number is not None
        else catalog.versions(session=session, slug=slug)[0]
    )
    if version is None:
        raise NotFoundError(f"No version {number} of {slug!r}.")
    return version


def _base(course_id: int) -> str:
    return f"/courses/{course_id}/authoring"


def _to_editor(version: ProblemVersion, course_id: int) -> RedirectResponse:
    return RedirectResponse(
        f"{_base(course_id)}/{version.slug}?version={version.number}",
        status_code=status.HTTP_303_SEE_OTHER,
    )


def _listing(session: SessionDep, course: Course) -> list[dict[str, Any]]:
    rows = []
    for slug in course_problems.course_problem_slugs(session=session, course_id=course.id):
        versions = catalog.versions(session=session, slug=slug)
        if versions:
            live = catalog.live_version(session=session, slug=slug)
            rows.append({"slug": slug, "newest": versions[0], "live": live})
    return rows


def _list_page(
    request: Request,
    session: SessionDep,
    access: courses.CourseAccess,
    error: str | None = None,
) -> Response:
    bank = [(p.slug, p.config.title) for _v, p in catalog.live_problems(session=session)]
    return page(
        request,
        "course_problems.html",
        access.user,
        status.HTTP_400_BAD_REQUEST if error else status.HTTP_200_OK,
        course=access.course,
        problems=_listing(session, access.course),
        bank=bank,
        error=error,
    )


@router.get("/courses/{course_id}/authoring", response_class=HTMLResponse)
def course_problem_list(request: Request, session: SessionDep, access: CourseAuthor) -> Response:
    return _list_page(request, session, access)


@router.post("/courses/{course_id}/authoring/new")
def new_course_problem(
    request: Request,
    session: SessionDep,
    access: CourseAuthor,
    _csrf: CsrfChecked,
    name: Annotated[str, Form(max_length=200)],
    copy_of: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    """A new problem from the scaffold, or from a copy of a bank problem (``copy_of``)."""
    try:
        version = course_problem_edits.create(
            session=session,
            course_id=access.course.id,
            name=name,
            author=access.user,
            copy_of=copy_of.strip() or None,
        )
    except CourseProblemError as error:
        session.rollback()
        return _list_page(request, session, access, error=str(error))
    session.commit()
    return _to_editor(version, access.course.id)


@router.post("/courses/{course_id}/authoring/statement-preview", response_class=HTMLResponse)
def statement_preview(
    _access: CourseAuthor,
    _csrf: CsrfChecked,
    text: Annotated[str, Form(max_length=MAX_PREVIEW_CHARS)] = "",
) -> Response:
    """statement.md as learners will see it (the editor's live preview fetches this)."""
    return HTMLResponse(render_markdown(text))


def _editor_page(
    request: Request,
    session: SessionDep,
    access: courses.CourseAccess,
    version: ProblemVersion,
    *,
    errors: list[str] | None = None,
    shown: list[course_problem_edits.EditorFile] | None = None,
) -> Response:
    files = shown or course_problem_edits.editor_files(
        version.slug, snapshot.decode(version.files_json)
    )
    statement = next((f.text for f in files if f.name == "statement.md"), "")
    return page(
        request,
        "course_problem_editor.html",
        access.user,
        status.HTTP_400_BAD_REQUEST if errors else status.HTTP_200_OK,
        course=access.course,
        version=version,
        versions=catalog.versions(session=session, slug=version.slug),
        live=catalog.live_version(session=session, slug=version.slug),
        files=files,
        statement=render_markdown(statement),
        errors=errors or [],
        check=json.loads(version.check_json) if version.check_json else None,
        no_worker=author_checks.waits_without_worker(session, version),
        base=_base(access.course.id),
        reference_name=course_problem_edits.REFERENCE_NAME,
    )


@router.get("/courses/{course_id}/authoring/{slug}", response_class=HTMLResponse)
def course_problem_editor(
    slug: str,
    request: Request,
    session: SessionDep,
    access: CourseAuthor,
    version: int | None = None,
) -> Response:
    return _editor_page(request, session, access, _version(session, access, slug, version))


@router.post("/courses/{course_id}/authoring/{slug}")
def save_course_problem(
    slug: str,
    request: Request,
    session: SessionDep,
    access: CourseAuthor,
    _csrf: CsrfChecked,
    version: Annotated[int, Form()],
    name: Annotated[list[str] | None, Form()] = None,
    text: Annotated[list[str] | None, Form()] = None,
) -> Response:
    """Save the editor's files: a new version when they changed (its check not run yet);
    invalid files are shown again with every error, and nothing is stored."""
    edited = _version(session, access, slug, version)
    names, texts = name or [], text or []
    try:
        files = course_problem_edits.from_form(
            slug, names, texts, snapshot.decode(edited.files_json)
        )
        saved, _created = course_problem_edits.save(
            session=session, course_id=access.course.id, slug=slug, files=files, author=access.user
        )
    except InvalidProblemError as error:
        session.rollback()
        shown = [
            course_problem_edits.EditorFile(n.strip(), t)
            for n, t in zip(names, texts, strict=False)
            if n.strip()
        ]
        return _editor_page(request, session, access, edited, errors=error.errors, shown=shown)
    session.commit()
    return _to_editor(saved, access.course.id)


@router.post("/courses/{course_id}/authoring/{slug}/versions/{number}/check")
def start_course_problem_check(
    slug: str, number: int, session: SessionDep, access: CourseAuthor, _csrf: CsrfChecked
) -> Response:
    """Queue `check` of the version for a grading worker (its progress: the JSON below)."""
    version = _version(session, access, slug, number)
    if author_checks.request_check(session, version=version):
        session.commit()  # queued where workers look before they are woken
        announce_new_work()
    return _to_editor(version, access.course.id)


@router.get("/courses/{course_id}/authoring/{slug}/versions/{number}/check")
def course_problem_check_progress(
    slug: str, number: int, session: SessionDep, access: CourseAuthor
) -> JSONResponse:
    """The check's status (queued: it waits for a worker; ``no_worker``: none is alive) and
    its progress lines so far (the editor polls this)."""
    version = _version(session, access, slug, number)
    report = json.loads(version.check_json) if version.check_json else None
    return JSONResponse(
        {
            "status": version.check_status,
            "no_worker": author_checks.waits_without_worker(session, version),
            "lines": version.check_log.splitlines(),
            "errors": report["errors"] if report else [],
            "text": report["text"] if report else "",
        },
        headers={"Cache-Control": "no-store"},
    )


@router.post("/courses/{course_id}/authoring/{slug}/versions/{number}/publish")
def publish_course_problem(
    slug: str, number: int, session: SessionDep, access: CourseAuthor, _csrf: CsrfChecked
) -> Response:
    """Make the version the one learners get: only once its check passed (409 otherwise).
    Learners' verdicts stay with the version that gave them until a regrade moves them."""
    version = _version(session, access, slug, number)
    if version.check_status != CheckStatus.PASSED:
        raise ConflictError(
            f"Version {version.number} has not passed its check: run the check, fix what it"
            " reports, and publish once it passes."
        )
    catalog.publish(session=session, version=version)
    session.commit()
    return _to_editor(version, access.course.id)


@router.get(
    "/courses/{course_id}/authoring/{slug}/versions/{number}/preview",
    response_class=HTMLResponse,
)
def course_problem_preview(
    slug: str, number: int, request: Request, session: SessionDep, access: CourseAuthor
) -> Response:
    """The version as learners will see it, with its sample cases once its check ran."""
    version = _version(session, access, slug, number)
    try:
        problem = catalog.problem_of(version)
    except (ProblemError, ValueError) as error:  # files saved before a stricter schema
        raise InvalidInputError(f"This version cannot be shown: {error}") from None
    return page(
        request,
        "course_problem_preview.html",
        access.user,
        course=access.course,
        version=version,
        base=_base(access.course.id),
        **learner_preview(problem, version),
    )
