"""The instructor's JSON API: courses, members, assignments, the grade matrix, the CSVs,
a learner's timeline and regrades, with the same permissions as the pages (a course
does not exist for anyone outside it; its learners may not read instructors' views)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response, status

from app.api.deps import CurrentUser, SessionDep
from app.core.downloads import csv_response
from app.core.throttle import client_address
from app.course_schemas import (
    AssignmentCreate,
    AssignmentPublic,
    CellPublic,
    CourseCreate,
    CourseJoin,
    CoursePublic,
    CoursesPublic,
    GradeMatrix,
    LearnerGrades,
    MemberPublic,
    MembersPublic,
    RegradeChange,
    RegradeCreate,
    RegradePublic,
    Timeline,
    TimelineEntryPublic,
)
from app.data import catalog, courses, regrades
from app.data.courses import CourseAccess
from app.errors import NotFoundError
from app.grading.notifications import announce_new_work
from app.models import Course, Regrade
from app.reports import exports, gradebook, timeline
from app.vocabulary import MemberRole

router = APIRouter(prefix="/api/courses", tags=["courses"])
CSV: dict[str, dict[str, object]] = {"text/csv": {}}


def _member(course_id: int, user: CurrentUser, session: SessionDep) -> CourseAccess:
    return courses.access(session=session, course_id=course_id, user=user)


def _instructor(found: Annotated[CourseAccess, Depends(_member)]) -> CourseAccess:
    return courses.as_instructor(found)


Member = Annotated[CourseAccess, Depends(_member)]
Instructor = Annotated[CourseAccess, Depends(_instructor)]


def _public(session: SessionDep, course: Course, role: str) -> CoursePublic:
    return CoursePublic(
        id=course.id,
        name=course.name,
        role=MemberRole(role).value,
        join_code=course.join_code if role == MemberRole.INSTRUCTOR else None,
        created_at=course.created_at,
        assignments=[
            AssignmentPublic.model_validate(a)
            for a in courses.assignments_of(session=session, course=course)
        ],
    )


@router.get("", response_model=CoursesPublic)
def list_courses(user: CurrentUser, session: SessionDep) -> CoursesPublic:
    """The caller's courses, as instructor or learner."""
    found = [_public(session, c, r) for c, r in courses.courses_of(session=session, user=user)]
    return CoursesPublic(data=found, count=len(found))


@router.post("", status_code=status.HTTP_201_CREATED, response_model=CoursePublic)
def create_course(body: CourseCreate, user: CurrentUser, session: SessionDep) -> CoursePublic:
    """A new course with the caller as its instructor (instructor and admin accounts)."""
    course = courses.create_course(session=session, name=body.name, instructor=user)
    return _public(session, course, MemberRole.INSTRUCTOR)


@router.post("/join", response_model=CoursePublic)
def join_course(
    request: Request, body: CourseJoin, user: CurrentUser, session: SessionDep
) -> CoursePublic:
    course = courses.join_course(
        session=session, code=body.code, user=user, address=client_address(request)
    )
    role = courses.membership(session=session, course=course, user=user) or MemberRole.LEARNER
    return _public(session, course, role)


@router.get("/{course_id}", response_model=CoursePublic)
def get_course(access: Member, session: SessionDep) -> CoursePublic:
    return _public(session, access.course, access.role)


@router.get("/{course_id}/members", response_model=MembersPublic)
def list_members(access: Instructor, session: SessionDep) -> MembersPublic:
    rows = courses.members_of(session=session, course=access.course)
    data = [MemberPublic(id=u.id, name=u.name, role=MemberRole(r).value) for u, r in rows]
    return MembersPublic(data=data, count=len(data))


@router.put("/{course_id}/assignments", response_model=AssignmentPublic)
def assign_problem(
    body: AssignmentCreate, access: Instructor, session: SessionDep
) -> AssignmentPublic:
    """Assign a published problem, or move its due date (null: no due date)."""
    if catalog.live_version(session, body.problem) is None:
        raise NotFoundError(f"Unknown problem {body.problem!r}.")
    assignment = courses.assign(
        session=session, course=access.course, problem=body.problem, due_at=body.due_at
    )
    return AssignmentPublic.model_validate(assignment)


@router.get("/{course_id}/grades", response_model=GradeMatrix)
def grade_matrix(access: Instructor, session: SessionDep) -> GradeMatrix:
    matrix = gradebook.grade_matrix(session=session, course=access.course)
    learners = []
    for learner in matrix.learners:
        cells = []
        for assignment in matrix.problems:
            cell = asdict(matrix.cell(learner, assignment.problem))
            cells.append(CellPublic(problem=assignment.problem, **cell))
        learners.append(
            LearnerGrades(
                learner_id=learner.id,
                learner=learner.name,
                solved=matrix.solved_count(learner),
                cells=cells,
            )
        )
    return GradeMatrix(
        course_id=access.course.id,
        problems=[AssignmentPublic.model_validate(a) for a in matrix.problems],
        learners=learners,
    )


@router.get("/{course_id}/grades.csv", response_class=Response, responses={200: {"content": CSV}})
def grades_csv(access: Instructor, session: SessionDep) -> Response:
    """The grade matrix as a spreadsheet: per learner, per problem a score and a late flag."""
    matrix = gradebook.grade_matrix(session=session, course=access.course)
    return csv_response(exports.matrix_csv(matrix), f"grades-course-{access.course.id}.csv")


@router.get(
    "/{course_id}/submissions.csv", response_class=Response, responses={200: {"content": CSV}}
)
def submissions_csv(access: Instructor, session: SessionDep) -> Response:
    """Every submit made in the course, one row each, with its code."""
    body = exports.submissions_csv(session=session, course=access.course)
    return csv_response(body, f"submissions-course-{access.course.id}.csv")


@router.get("/{course_id}/learners/{learner_id}/timeline", response_model=Timeline)
def learner_timeline(learner_id: int, access: Instructor, session: SessionDep) -> Timeline:
    """A learner's submits in the course, newest first, with what the course counts."""
    learner = courses.course_learner(session=session, course=access.course, learner_id=learner_id)
    entries = timeline.timeline(session=session, course=access.course, learner=learner)
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
                problem_version=e.version,
            )
            for e in entries
        ],
    )


def _regrade_public(session: SessionDep, regrade: Regrade) -> RegradePublic:
    done, total = regrades.progress(session, regrade)
    return RegradePublic(
        id=regrade.id,
        problem=regrade.problem,
        version=catalog.version_number(session, regrade.version_id),
        status=regrade.status,
        done=done,
        total=total,
        changes=[
            RegradeChange.model_validate(c, from_attributes=True)
            for c in regrades.changes(session, regrade)
        ],
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
    courses.require_assigned(session=session, course=access.course, slug=slug)
    target = catalog.version_by_number(session, slug, body.version)
    if target is None:
        raise NotFoundError(f"No version {body.version} of {slug!r}.")
    regrade = regrades.start(session=session, course=access.course, version=target, by=access.user)
    session.commit()
    announce_new_work()
    return _regrade_public(session, regrade)


@router.get("/{course_id}/regrades/{regrade_id}", response_model=RegradePublic)
def get_regrade(regrade_id: int, access: Instructor, session: SessionDep) -> RegradePublic:
    """Progress and, per submit, the old and the new verdict."""
    return _regrade_public(session, regrades.in_course(session, access.course, regrade_id))


@router.post("/{course_id}/regrades/{regrade_id}/apply", response_model=RegradePublic)
def apply_regrade(regrade_id: int, access: Instructor, session: SessionDep) -> RegradePublic:
    """The course counts the new verdicts from now on (this course only)."""
    regrade = regrades.in_course(session, access.course, regrade_id)
    regrades.apply(session, regrade=regrade)
    return _regrade_public(session, regrade)


@router.post("/{course_id}/regrades/{regrade_id}/discard", response_model=RegradePublic)
def discard_regrade(regrade_id: int, access: Instructor, session: SessionDep) -> RegradePublic:
    regrade = regrades.in_course(session, access.course, regrade_id)
    regrades.discard(session, regrade=regrade)
    return _regrade_public(session, regrade)
