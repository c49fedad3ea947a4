"""Course pages: list, create, join, delete; the course page (the staff's grade
dashboard, a learner's own standing); assigning and unassigning; the CSV exports."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Form, Request, UploadFile, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select

from app.core.config import grader_settings, settings
from app.core.downloads import csv_response
from app.core.request_db import SessionDep
from app.core.throttle import client_address
from app.data import assignments, catalog, courses, mail, members
from app.data.assignments import AssignmentSettings, PastDueError
from app.errors import DomainError, ForbiddenError, InvalidInputError, NotFoundError
from app.grading import notebook_submissions, notebooks
from app.grading.notifications import announce_new_work
from app.models import Assignment, Course, Submission, User, utcnow
from app.reports import deadlines, export_ids, exports, gradebook
from app.vocabulary import STAFF_ROLES, GradeStatus, LatePolicy, MemberRole, RubricMode
from app.web.guards import CourseInstructor, CourseMember, CourseStaff, CsrfChecked, SignedInUser
from app.web.render import page
from grader.child.verdicts import Mode

router = APIRouter(include_in_schema=False)
SOON = timedelta(days=7)


def _back(course_id: int | None = None, anchor: str = "") -> RedirectResponse:
    return RedirectResponse(
        (f"/courses/{course_id}" if course_id else "/courses") + anchor,
        status_code=status.HTTP_303_SEE_OTHER,
    )


@router.get("/courses", response_class=HTMLResponse)
def course_list(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    return page(
        request, "courses.html", user, memberships=courses.courses_of(session=session, user=user)
    )


@router.post("/courses")
def create_course(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    name: Annotated[str, Form()],
) -> Response:
    course = courses.create_course(session=session, name=name, instructor=user)
    return _back(course.id)


@router.post("/courses/join")
def join_course(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    code: Annotated[str, Form()],
    student_id: Annotated[str, Form(max_length=1000)] = "",
) -> Response:
    try:
        course = courses.join_course(
            session=session,
            code=code,
            user=user,
            address=client_address(request),
            student_id=student_id,
        )
    except DomainError as error:
        return page(
            request,
            "courses.html",
            user,
            error.status,
            memberships=courses.courses_of(session=session, user=user),
            error=str(error),
        )
    return _back(course.id)


def _earlier_work(
    session: SessionDep, course: Course, user: User, found: list[Assignment]
) -> dict[str, datetime]:
    """Problems the learner submitted before their window opened (work that does not
    count), each with the moment it opens: the assignment's opening, or when an
    instructor added them by name."""
    added = members.counted_from(session=session, course=course).get(user.id)
    earlier = {}
    for assignment in found:
        opens = max(assignment.opens_at, added) if added else assignment.opens_at
        before = session.scalar(
            select(Submission.id).where(
                Submission.user_id == user.id,
                Submission.problem == assignment.problem,
                Submission.mode == Mode.SUBMIT,
                Submission.created_at < opens,
            )
        )
        if before is not None:
            earlier[assignment.problem] = opens
    return earlier


def _course_page(
    request: Request,
    session: SessionDep,
    access: courses.CourseAccess,
    *,
    view: dict[str, str],
    status_code: int = 200,
    **extra: object,
) -> Response:
    course, role, user = access.course, access.role, access.user
    found = assignments.assignments_of(session=session, course=course)
    # The bank's published problems and this course's own (published after a passing check).
    titles = {
        p.slug: p.config.title
        for _version, p in catalog.live_problems(session=session, course_id=course.id)
    }
    policies = {a.problem: deadlines.describe(a) for a in found}
    context: dict[str, object] = {
        # Each assignment's current settings, for the form to fill in when it is picked.
        "assigned_forms": {a.problem: _form_of(a) for a in found}
        if role == MemberRole.INSTRUCTOR
        else {},
        "course": course,
        "role": role,
        "assignments": found,
        "titles": titles,
        "policies": policies,
        "view": view,
        "now": utcnow(),
        **extra,
    }
    if role in STAFF_ROLES:
        matrix = gradebook.grade_matrix(session=session, course=course)
        context |= {
            "matrix": matrix,
            "rows": matrix.rows(sort=view["sort"], query=view["q"], show=view["show"]),
            "removed": assignments.removed_of(session=session, course=course),
            "withheld_ids": export_ids.withheld(
                session=session, course=course, learners=matrix.learners
            ),
            "policy_names": [p.value for p in LatePolicy],
        }
    else:
        mine = gradebook.grade_matrix(session=session, course=course, learner_ids=[user.id])
        cells = {a.problem: mine.cell(user, a.problem) for a in found}
        now = utcnow()
        context |= {
            "cells": cells,
            "due_soon": [
                a
                for a in found
                if (due := cells[a.problem].due_at) is not None
                and now <= due <= now + SOON
                and cells[a.problem].status not in (GradeStatus.SOLVED, GradeStatus.LATE)
            ],
            "earlier": _earlier_work(session, course, user, found),
            "notebooks": notebook_submissions.notebook_names(session=session, course=course),
        }
    return page(request, "course.html", user, status_code, **context)


@router.get("/courses/{course_id}", response_class=HTMLResponse)
def course_page(
    request: Request,
    session: SessionDep,
    access: CourseMember,
    sort: str = "name",
    q: str = "",
    show: str = "all",
    edit: str = "",
) -> Response:
    """``edit``: an assigned problem whose current settings fill the assignment form."""
    editing = next(
        (
            a
            for a in assignments.assignments_of(session=session, course=access.course)
            if a.problem == edit and access.role == MemberRole.INSTRUCTOR
        ),
        None,
    )
    return _course_page(
        request,
        session,
        access,
        view={"sort": sort, "q": q, "show": show},
        prefill=_form_of(editing) if editing else None,
    )


def _form_of(assignment: Assignment) -> dict[str, str]:
    """An assignment's current settings as the assignment form writes them (UTC)."""

    def moment(value: datetime | None) -> str:
        return value.strftime("%Y-%m-%dT%H:%M") if value else ""

    return {
        "problem": assignment.problem, "opens": moment(assignment.opens_at),
        "due": moment(assignment.due_at), "late_policy": assignment.late_policy,
        "cutoff": moment(assignment.late_cutoff_at),
        "penalty_percent": f"{assignment.penalty_percent:g}",
        "penalty_unit": assignment.penalty_unit,
        "penalty_floor": f"{assignment.penalty_floor_percent:g}",
        "points": f"{assignment.max_points:g}",
        "rubric_mode": assignment.rubric_mode,
        "notebook": assignment.notebook or "",
    }  # fmt: skip


def _moment(text: str, field: str) -> datetime | None:
    if not text.strip():
        return None
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise InvalidInputError(
            f"The {field} must look like 2026-12-01T23:59 (UTC) or 2026-12-01T23:59+01:00."
        ) from None


def _number(text: str, field: str, default: float) -> float:
    try:
        return float(text) if text.strip() else default
    except ValueError:
        raise InvalidInputError(f"The {field} must be a number.") from None


@router.post("/courses/{course_id}/assignments")
def assign_problem(
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    problem: Annotated[str, Form()],
    due: Annotated[str, Form()] = "",
    opens: Annotated[str, Form()] = "",
    late_policy: Annotated[str, Form()] = "none",
    cutoff: Annotated[str, Form()] = "",
    penalty_percent: Annotated[str, Form()] = "",
    penalty_unit: Annotated[str, Form()] = "day",
    penalty_floor: Annotated[str, Form()] = "",
    points: Annotated[str, Form()] = "",
    rubric_mode: Annotated[str, Form()] = RubricMode.ADDED,
    notebook: Annotated[str, Form(max_length=200)] = "",
    confirm_past_due: Annotated[str, Form()] = "",
) -> Response:
    course = access.course
    if catalog.live_version(session=session, slug=problem) is None:
        raise NotFoundError(f"Unknown problem {problem!r}.")
    form = {
        "problem": problem, "due": due, "opens": opens, "late_policy": late_policy,
        "cutoff": cutoff, "penalty_percent": penalty_percent, "penalty_unit": penalty_unit,
        "penalty_floor": penalty_floor, "points": points, "notebook": notebook,
        "rubric_mode": rubric_mode,
    }  # fmt: skip
    view = {"sort": "name", "q": "", "show": "all"}
    try:
        if late_policy not in tuple(LatePolicy):
            raise InvalidInputError("The late policy is none, cutoff or penalty.")
        if rubric_mode not in tuple(RubricMode):
            raise InvalidInputError("The rubric mode is added or replacing.")
        settings = AssignmentSettings(
            due_at=_moment(due, "due date"),
            opens_at=_moment(opens, "opening time"),
            late_policy=LatePolicy(late_policy),
            late_cutoff_at=_moment(cutoff, "late cut-off"),
            penalty_percent=_number(penalty_percent, "penalty", 0.0),
            penalty_unit=penalty_unit,
            penalty_floor_percent=_number(penalty_floor, "penalty floor", 0.0),
            max_points=_number(points, "points", 10.0),
            rubric_mode=RubricMode(rubric_mode),
            notebook=notebook or None,
        )
        assignments.assign(
            session=session,
            course=course,
            problem=problem,
            settings=settings,
            confirm_past_due=confirm_past_due == "yes",
        )
    except PastDueError as error:  # a question for the instructor, not a failure: 200
        session.rollback()
        return _course_page(request, session, access, view=view, confirm=form, error=str(error))
    except DomainError as error:
        session.rollback()
        return _course_page(
            request, session, access, view=view, status_code=error.status, error=str(error)
        )
    gradebook.grades_changed(session=session, course=course, problem=problem)
    return _back(course.id)


@router.post("/courses/{course_id}/notebook-submissions", response_class=HTMLResponse)
def submit_notebook(
    request: Request,
    session: SessionDep,
    access: CourseMember,
    _csrf: CsrfChecked,
    name: Annotated[str, Form(max_length=100)],
    notebook: UploadFile,
) -> Response:
    """One .ipynb for a notebook assignment: a submission per problem it defines,
    listed on the course page with what was left out (or why none was made)."""
    view = {"sort": "name", "q": "", "show": "all"}
    raw = notebook.file.read(notebooks.MAX_NOTEBOOK_BYTES + 1)
    try:
        if len(raw) > notebooks.MAX_NOTEBOOK_BYTES:
            raise InvalidInputError(
                f"The notebook is larger than {notebooks.MAX_NOTEBOOK_BYTES // 1024} KiB."
            )
        if settings.require_verified_email and mail.mail_address(access.user) is None:
            raise ForbiddenError(
                "Confirm your email first: follow the link mailed to you (your account page"
                " sends it again)."
            )
        outcomes = notebook_submissions.submit_course_notebook(
            session=session,
            user=access.user,
            course=access.course,
            name=name,
            raw=raw,
            max_source_bytes=grader_settings.max_source_bytes,
            max_queued=settings.max_queued_per_user,
            max_submits_per_hour=settings.max_submits_per_hour,
            client_key=None,
        )
        session.commit()
    except DomainError as error:
        session.rollback()
        return _course_page(
            request, session, access, view=view, status_code=error.status, error=str(error)
        )
    if any(o.submission is not None for o in outcomes):
        announce_new_work()
    return _course_page(
        request, session, access, view=view, notebook_result={"name": name, "outcomes": outcomes}
    )


@router.post("/courses/{course_id}/assignments/{slug}/remove")
def unassign_problem(
    slug: str, session: SessionDep, access: CourseInstructor, _csrf: CsrfChecked
) -> Response:
    assignments.unassign(session=session, course=access.course, problem=slug)
    return _back(access.course.id)


@router.post("/courses/{course_id}/delete")
def delete_course(
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    confirm_name: Annotated[str, Form()] = "",
) -> Response:
    courses.delete_course(session=session, course=access.course, confirm_name=confirm_name)
    return _back()


@router.get("/courses/{course_id}/grades.csv")
def grades_csv(session: SessionDep, access: CourseStaff, layout: str = "generic") -> Response:
    course = access.course
    body = exports.grades_csv(session=session, course=course, layout=layout)
    suffix = "" if layout == "generic" else f"-{layout}"
    return csv_response(body, f"grades-course-{course.id}{suffix}.csv")


@router.get("/courses/{course_id}/grades-ids.csv")
def grades_ids_csv(session: SessionDep, access: CourseStaff) -> Response:
    body = exports.ids_csv(session=session, course=access.course)
    return csv_response(body, f"grades-course-{access.course.id}-ids.csv")


@router.get("/courses/{course_id}/submissions.csv")
def submissions_csv(session: SessionDep, access: CourseStaff) -> Response:
    course = access.course
    body = exports.submissions_csv(session=session, course=course)
    return csv_response(body, f"submissions-course-{course.id}.csv")


@router.get("/courses/{course_id}/overrides.csv")
def overrides_csv(session: SessionDep, access: CourseStaff) -> Response:
    course = access.course
    body = exports.overrides_csv(session=session, course=course)
    return csv_response(body, f"overrides-course-{course.id}.csv")
