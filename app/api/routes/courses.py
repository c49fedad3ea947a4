"""The instructor's JSON API: courses, members, assignments, the grade matrix, the CSVs,
a learner's timeline and regrades, with the same permissions as the pages (a course
does not exist for anyone outside it; its learners may not read instructors' views)."""

from __future__ import annotations

from dataclasses import fields
from typing import Annotated

from fastapi import APIRouter, Depends, File, Form, Header, Request, Response, UploadFile, status
from sqlalchemy.orm import Session

from app.api import grade_book_answers, hot_reads
from app.api.deps import Authorization, CurrentUser
from app.api.hot_reads import Body
from app.api.routes.submissions import read_notebook_upload, require_confirmed_email
from app.core.config import grader_settings, settings
from app.core.downloads import csv_response
from app.core.request_db import SessionDep
from app.core.throttle import client_address
from app.data import assignments, catalog, comments, courses, members, overrides, regrades
from app.data.assignments import AssignmentSettings
from app.data.courses import CourseAccess
from app.errors import NotFoundError
from app.grading import notebook_submissions
from app.grading.notifications import announce_new_work
from app.models import Course, Regrade, User
from app.reports import exports, gradebook, timeline
from app.schemas.courses import (
    AssignmentCreate,
    AssignmentPublic,
    CellPublic,
    CommentPublic,
    CourseCreate,
    CourseJoin,
    CoursePublic,
    CoursesPublic,
    GradeMatrix,
    LearnerGrades,
    MemberPublic,
    MembersPublic,
    OverridePublic,
    RegradeCreate,
    RegradePublic,
    StandingPublic,
    Timeline,
    TimelineEntryPublic,
)
from app.schemas.learners import CourseNotebookSubmitted, NotebookProblemSubmitted
from app.vocabulary import STAFF_ROLES, MemberRole

router = APIRouter(prefix="/api/courses", tags=["courses"])
CSV: dict[str, dict[str, object]] = {"text/csv": {}}


def _member(course_id: int, user: CurrentUser, session: SessionDep) -> CourseAccess:
    return courses.access(session=session, course_id=course_id, user=user)


# A role check reads nothing: on the event loop, not a thread hop of its own.
async def _instructor(found: Annotated[CourseAccess, Depends(_member)]) -> CourseAccess:
    return courses.as_instructor(found)


async def _staff(found: Annotated[CourseAccess, Depends(_member)]) -> CourseAccess:
    return courses.as_staff(found)


Member = Annotated[CourseAccess, Depends(_member)]
Instructor = Annotated[CourseAccess, Depends(_instructor)]
Staff = Annotated[CourseAccess, Depends(_staff)]


def _public(session: SessionDep, course: Course, role: str, user: User) -> CoursePublic:
    found = assignments.assignments_of(session=session, course=course)
    standing = None
    if role == MemberRole.LEARNER:
        mine = gradebook.grade_matrix(session=session, course=course, learner_ids=[user.id])
        standing = [
            StandingPublic(
                problem=a.problem,
                status=(cell := mine.cell(user, a.problem)).status,
                due_at=cell.due_at,
                extended=cell.extended,
                points=cell.final_score * a.max_points,
                max_points=a.max_points,
            )
            for a in found
        ]
    return CoursePublic(
        id=course.id,
        name=course.name,
        role=MemberRole(role).value,
        join_code=course.join_code if role in STAFF_ROLES else None,
        created_at=course.created_at,
        assignments=[AssignmentPublic.model_validate(a) for a in found],
        standing=standing,
    )


@router.get("", response_model=CoursesPublic)
def list_courses(user: CurrentUser, session: SessionDep) -> CoursesPublic:
    """The caller's courses, as instructor or learner."""
    found = [
        _public(session, c, r, user) for c, r in courses.courses_of(session=session, user=user)
    ]
    return CoursesPublic(data=found, count=len(found))


@router.post("", status_code=status.HTTP_201_CREATED, response_model=CoursePublic)
def create_course(body: CourseCreate, user: CurrentUser, session: SessionDep) -> CoursePublic:
    """A new course with the caller as its instructor (instructor and admin accounts)."""
    course = courses.create_course(session=session, name=body.name, instructor=user)
    return _public(session, course, MemberRole.INSTRUCTOR, user)


@router.post("/join", response_model=CoursePublic)
def join_course(
    request: Request, body: CourseJoin, user: CurrentUser, session: SessionDep
) -> CoursePublic:
    course = courses.join_course(
        session=session,
        code=body.code,
        user=user,
        address=client_address(request),
        student_id=body.student_id,
    )
    role = courses.membership(session=session, course=course, user=user) or MemberRole.LEARNER
    return _public(session, course, role, user)


@router.get("/{course_id}", response_model=CoursePublic)
def get_course(access: Member, session: SessionDep) -> CoursePublic:
    return _public(session, access.course, access.role, access.user)


@router.get("/{course_id}/members", response_model=MembersPublic)
def list_members(access: Staff, session: SessionDep) -> MembersPublic:
    rows = courses.members_of(session=session, course=access.course)
    groups = members.groups_of(session=session, course=access.course)
    ids = members.student_ids_of(session=session, course=access.course)
    data = [
        MemberPublic(
            id=u.id,
            name=u.name,
            role=MemberRole(r).value,
            group=groups.get(u.id, ""),
            student_id=ids.get(u.id, ""),
        )
        for u, r in rows
    ]
    return MembersPublic(data=data, count=len(data))


@router.put("/{course_id}/assignments", response_model=AssignmentPublic)
def assign_problem(
    body: AssignmentCreate, access: Instructor, session: SessionDep
) -> AssignmentPublic:
    """Assign a published problem with its window, late policy and points, or change
    them (every field is set again). A due date in the past is refused (409) unless
    ``confirm_past_due``. Grades are recomputed, and sent to a linked LMS again."""
    if catalog.live_version(session=session, slug=body.problem) is None:
        raise NotFoundError(f"Unknown problem {body.problem!r}.")  # another course's: assign's
    settings = AssignmentSettings(**body.model_dump(exclude={"problem", "confirm_past_due"}))
    assignment = assignments.assign(
        session=session,
        course=access.course,
        problem=body.problem,
        settings=settings,
        confirm_past_due=body.confirm_past_due,
    )
    gradebook.grades_changed(session=session, course=access.course, problem=body.problem)
    return AssignmentPublic.model_validate(assignment)


@router.delete("/{course_id}/assignments/{slug}", status_code=status.HTTP_204_NO_CONTENT)
def unassign_problem(slug: str, access: Instructor, session: SessionDep) -> Response:
    """Take the problem off the grade book; its submits and settings are kept, and
    assigning it again brings them back."""
    assignments.unassign(session=session, course=access.course, problem=slug)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.delete("/{course_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_course(confirm_name: str, access: Instructor, session: SessionDep) -> Response:
    """Delete the course (``confirm_name``: its exact name); learners keep their submits."""
    courses.delete_course(session=session, course=access.course, confirm_name=confirm_name)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/{course_id}/grades",
    response_model=GradeMatrix,
    responses={304: {"description": "Unchanged since the ETag sent in If-None-Match."}},
)
async def grade_matrix(
    course_id: int, request: Request, authorization: Authorization = None
) -> Response:
    """Every learner's grade on every assignment. Kept as computed until a grade changes
    (app/api/grade_book_answers.py): send the ETag back in If-None-Match to get 304."""

    def read(session: Session, user: User) -> Body:
        access = courses.as_staff(courses.access(session=session, course_id=course_id, user=user))
        return grade_book_answers.grade_book(
            session, access.course, lambda: _grade_matrix(session, access.course)
        )

    return await hot_reads.answer(request, authorization, read)


def _grade_matrix(session: Session, course: Course) -> GradeMatrix:
    matrix = gradebook.grade_matrix(session=session, course=course)
    learners = []
    for learner in matrix.learners:
        cells = []
        for assignment in matrix.problems:
            cell = matrix.cell(learner, assignment.problem)
            # Shallow: ``asdict`` would deep-copy each cell's override (an ORM row), which
            # was half of this read's time for 300 learners (bench/hot_reads.py).
            values = {f.name: getattr(cell, f.name) for f in fields(cell)} | {
                "status": cell.status,
                "points": matrix.points(learner, assignment),
            }
            values.pop("override")
            values.pop("computed_score")
            reason = cell.override.reason if cell.override else None
            cells.append(CellPublic(problem=assignment.problem, override_reason=reason, **values))
        learners.append(
            LearnerGrades(
                learner_id=learner.id,
                learner=learner.name,
                solved=matrix.solved_count(learner),
                total_points=matrix.total(learner),
                cells=cells,
            )
        )
    return GradeMatrix(
        course_id=course.id,
        problems=[AssignmentPublic.model_validate(a) for a in matrix.problems],
        total_possible=matrix.total_possible(),
        learners=learners,
    )


@router.get("/{course_id}/grades.csv", response_class=Response, responses={200: {"content": CSV}})
def grades_csv(access: Staff, session: SessionDep, layout: str = "generic") -> Response:
    """The grade book in points, raw and final, with a total (``generic``), or in
    ``canvas`` or ``moodle``'s import layout."""
    body = exports.grades_csv(session=session, course=access.course, layout=layout)
    suffix = "" if layout == "generic" else f"-{layout}"
    return csv_response(body, f"grades-course-{access.course.id}{suffix}.csv")


@router.get(
    "/{course_id}/grades-ids.csv", response_class=Response, responses={200: {"content": CSV}}
)
def grades_ids_csv(access: Staff, session: SessionDep) -> Response:
    """The grade exports' companion: each learner's student id and email, where each came
    from (the instructor's mapping, the LMS, or the learner: unverified), and whether
    the exports carry it; one that several learners hold is withheld from all of them."""
    body = exports.ids_csv(session=session, course=access.course)
    return csv_response(body, f"grades-course-{access.course.id}-ids.csv")


@router.get(
    "/{course_id}/overrides.csv", response_class=Response, responses={200: {"content": CSV}}
)
def overrides_csv(access: Staff, session: SessionDep) -> Response:
    """Every score override, oldest first: who, when, the old and new score, why."""
    body = exports.overrides_csv(session=session, course=access.course)
    return csv_response(body, f"overrides-course-{access.course.id}.csv")


@router.get(
    "/{course_id}/submissions.csv", response_class=Response, responses={200: {"content": CSV}}
)
def submissions_csv(access: Staff, session: SessionDep) -> Response:
    """Every submit made in the course, one row each, with its code."""
    body = exports.submissions_csv(session=session, course=access.course)
    return csv_response(body, f"submissions-course-{access.course.id}.csv")


@router.get("/{course_id}/learners/{learner_id}/timeline", response_model=Timeline)
def learner_timeline(learner_id: int, access: Staff, session: SessionDep) -> Timeline:
    """A learner's submits in the course, newest first, with what the course counts,
    staff comments, and the learner's score overrides (the audit trail)."""
    learner = courses.course_learner(session=session, course=access.course, learner_id=learner_id)
    entries = timeline.timeline(session=session, course=access.course, learner=learner)
    notes = comments.on_submissions(
        session=session, submission_ids=[e.submission.id for e in entries], course=access.course
    )
    return Timeline(
        learner_id=learner.id,
        learner=learner.name,
        data=[
            TimelineEntryPublic(
                submission_id=e.submission.id,
                problem=e.submission.problem,
                submitted_at=e.submission.created_at,
                status=e.submission.status,
                verdict=e.verdict,
                score=e.score,
                late=e.late,
                counts=e.standing.counts,
                why_not=e.standing.why_not,
                kept_percent=e.standing.factor * 100,
                problem_version=e.version,
                comments=[CommentPublic.model_validate(c) for c in notes.get(e.submission.id, [])],
            )
            for e in entries
        ],
        overrides=[
            OverridePublic.model_validate(o)
            for o in overrides.history(session=session, course=access.course, learner_id=learner.id)
        ],
    )


def _regrade_public(session: SessionDep, regrade: Regrade) -> RegradePublic:
    done, total = regrades.progress(session=session, regrade=regrade)
    return RegradePublic(
        id=regrade.id,
        problem=regrade.problem,
        version=catalog.version_number(session=session, version_id=regrade.version_id),
        status=regrade.status,
        done=done,
        total=total,
        changes=regrades.changes(session=session, regrade=regrade),
    )


@router.post(
    "/{course_id}/problems/{slug}/regrades",
    status_code=status.HTTP_201_CREATED,
    response_model=RegradePublic,
)
def start_regrade(
    slug: str, body: RegradeCreate, access: Instructor, session: SessionDep
) -> RegradePublic:
    """Re-run the course's submits of ``slug`` against a version, without changing any
    verdict until the regrade is applied."""
    assignments.require_assigned(session=session, course=access.course, slug=slug)
    target = catalog.version_by_number(session=session, slug=slug, number=body.version)
    if target is None:
        raise NotFoundError(f"No version {body.version} of {slug!r}.")
    regrade = regrades.start(session=session, course=access.course, version=target, by=access.user)
    session.commit()
    announce_new_work()
    return _regrade_public(session, regrade)


@router.get("/{course_id}/regrades/{regrade_id}", response_model=RegradePublic)
def get_regrade(regrade_id: int, access: Instructor, session: SessionDep) -> RegradePublic:
    """Progress and, per submit, the old and the new verdict."""
    return _regrade_public(
        session, regrades.in_course(session=session, course=access.course, regrade_id=regrade_id)
    )


@router.post("/{course_id}/regrades/{regrade_id}/apply", response_model=RegradePublic)
def apply_regrade(regrade_id: int, access: Instructor, session: SessionDep) -> RegradePublic:
    """The course counts the new verdicts from now on (this course only)."""
    regrade = regrades.in_course(session=session, course=access.course, regrade_id=regrade_id)
    regrades.apply(session=session, regrade=regrade)
    return _regrade_public(session, regrade)


@router.post("/{course_id}/regrades/{regrade_id}/discard", response_model=RegradePublic)
def discard_regrade(regrade_id: int, access: Instructor, session: SessionDep) -> RegradePublic:
    regrade = regrades.in_course(session=session, course=access.course, regrade_id=regrade_id)
    regrades.discard(session=session, regrade=regrade)
    return _regrade_public(session, regrade)


@router.post(
    "/{course_id}/notebook-submissions",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=CourseNotebookSubmitted,
)
def submit_course_notebook(
    request: Request,
    access: Member,
    session: SessionDep,
    name: Annotated[str, Form(max_length=100, description="The notebook assignment's name.")],
    notebook: Annotated[UploadFile, File(description="The .ipynb file (nbformat 4).")],
    idempotency_key: Annotated[str | None, Header(max_length=64)] = None,
) -> CourseNotebookSubmitted:
    """One upload for a notebook assignment (multipart/form-data): one submission per
    problem whose entry points the notebook defines, each graded as if typed; each
    problem without one says why. Read each with ``GET /api/submissions/{id}``."""
    raw = read_notebook_upload(notebook)
    require_confirmed_email(access.user)
    outcomes = notebook_submissions.submit_course_notebook(
        session=session,
        user=access.user,
        course=access.course,
        name=name,
        raw=raw,
        max_source_bytes=grader_settings.max_source_bytes,
        max_queued=settings.max_queued_per_user,
        max_submits_per_hour=settings.max_submits_per_hour,
        client_key=idempotency_key,
    )
    session.commit()
    if any(o.submission is not None for o in outcomes):
        announce_new_work()
    return CourseNotebookSubmitted(
        notebook=name,
        submissions=[
            NotebookProblemSubmitted(
                problem=o.problem,
                title=o.title,
                id=o.submission.id if o.submission else None,
                reason=o.reason,
                cells=o.extracted.cells if o.extracted else [],
                notes=o.extracted.notes if o.extracted else [],
                missing=o.extracted.missing if o.extracted else [],
            )
            for o in outcomes
        ],
    )
