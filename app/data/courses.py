"""Courses: membership, assignments, the grade matrix, timelines and CSVs (keyword-only
data functions). Every read counts only the submits made within the course, with the
verdicts the course sees (app/course_submissions.py)."""

from __future__ import annotations

import csv
import io
import secrets
import statistics
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import ForbiddenError, InvalidInputError
from app.models import Assignment, Course, CourseMember, ProblemVersion, Submission, User
from app.reports.course_submissions import RESULT_JSON, SCORE, VERDICT, VERSION_ID, within
from grader.report import GradeReport

JOIN_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
STAFF_ROLES = ("instructor", "admin")


def create_course(*, session: Session, name: str, instructor: User) -> Course:
    if instructor.role not in STAFF_ROLES:
        raise ForbiddenError("only instructors can create courses")
    if not 1 <= len(name.strip()) <= 120:
        raise InvalidInputError("a course name is 1-120 characters")
    course = Course(
        name=name.strip(), join_code="".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(8))
    )
    session.add(course)
    session.flush()
    session.add(CourseMember(course_id=course.id, user_id=instructor.id, role="instructor"))
    session.flush()
    return course


def join_course(*, session: Session, code: str, user: User) -> Course:
    course = session.scalar(select(Course).where(Course.join_code == code.strip().upper()))
    if course is None:
        raise InvalidInputError("no course has that join code")
    if membership(session=session, course=course, user=user) is None:
        session.add(CourseMember(course_id=course.id, user_id=user.id, role="learner"))
        session.flush()
    return course


def membership(*, session: Session, course: Course, user: User) -> str | None:
    return session.scalar(
        select(CourseMember.role).where(
            CourseMember.course_id == course.id, CourseMember.user_id == user.id
        )
    )


def courses_of(*, session: Session, user: User) -> list[tuple[Course, str]]:
    rows = session.execute(
        select(Course, CourseMember.role)
        .join(CourseMember, CourseMember.course_id == Course.id)
        .where(CourseMember.user_id == user.id)
        .order_by(Course.id)
    )
    return [(course, role) for course, role in rows]


def assign(
    *, session: Session, course: Course, problem: str, due_at: datetime | None
) -> Assignment:
    existing = session.scalar(
        select(Assignment).where(Assignment.course_id == course.id, Assignment.problem == problem)
    )
    if existing is not None:
        existing.due_at = due_at
        return existing
    assignment = Assignment(course_id=course.id, problem=problem, due_at=due_at)
    session.add(assignment)
    session.flush()
    return assignment


def assignments_of(*, session: Session, course: Course) -> list[Assignment]:
    return list(
        session.scalars(
            select(Assignment).where(Assignment.course_id == course.id).order_by(Assignment.id)
        )
    )


@dataclass
class Cell:
    """One learner on one assigned problem."""

    best_verdict: str | None = None
    best_score: float = 0.0
    attempts: int = 0
    first_accepted_at: datetime | None = None
    last_submitted_at: datetime | None = None
    late: bool = False


@dataclass
class Matrix:
    problems: list[Assignment]
    learners: list[User]
    cells: dict[tuple[int, str], Cell] = field(default_factory=dict)

    def cell(self, learner: User, problem: str) -> Cell:
        return self.cells.get((learner.id, problem), Cell())

    def solve_rate(self, problem: str) -> float:
        solved = sum(
            1 for learner in self.learners if self.cell(learner, problem).first_accepted_at
        )
        return solved / len(self.learners) if self.learners else 0.0

    def median_attempts(self, problem: str) -> float | None:
        """Median attempts to the first acceptance, among those who solved it."""
        counts = [self._attempts_to_solve.get((learner.id, problem)) for learner in self.learners]
        solved = [count for count in counts if count is not None]
        return statistics.median(solved) if solved else None

    _attempts_to_solve: dict[tuple[int, str], int] = field(default_factory=dict)

    def solved_count(self, learner: User) -> int:
        return sum(
            1 for a in self.problems if self.cell(learner, a.problem).first_accepted_at is not None
        )

    def rows(self, *, sort: str = "name", query: str = "", show: str = "all") -> list[User]:
        """Learners filtered by name and by ``show`` (all | unsolved | late), then sorted by
        name, by problems solved (``solved``), or by one problem's score (its slug)."""
        picked = [u for u in self.learners if query.strip().lower() in u.name.lower()]
        if show == "unsolved":
            picked = [u for u in picked if self.solved_count(u) < len(self.problems)]
        elif show == "late":
            picked = [u for u in picked if any(self.cell(u, a.problem).late for a in self.problems)]
        if sort == "solved":
            return sorted(picked, key=lambda u: (-self.solved_count(u), u.name))
        if sort in {a.problem for a in self.problems}:
            return sorted(
                picked,
                key=lambda u: (-self.cell(u, sort).best_score, self.cell(u, sort).attempts, u.name),
            )
        return picked  # already by name


def learners_of(*, session: Session, course: Course) -> list[User]:
    return list(
        session.scalars(
            select(User)
            .join(CourseMember, CourseMember.user_id == User.id)
            .where(CourseMember.course_id == course.id, CourseMember.role == "learner")
            .order_by(User.name)
        )
    )


def grade_matrix(*, session: Session, course: Course) -> Matrix:
    problems = assignments_of(session=session, course=course)
    learners = learners_of(session=session, course=course)
    matrix = Matrix(problems=problems, learners=learners)
    due = {a.problem: a.due_at for a in problems}
    # Only the columns the matrix needs (not the code or the reports).
    submissions = session.execute(
        within(
            course,
            Submission.user_id,
            Submission.problem,
            Submission.created_at,
            VERDICT,
            SCORE,
        )
        .where(Submission.status == "done")
        .order_by(Submission.id)
    )
    for submission in submissions:
        key = (submission.user_id, submission.problem)
        cell = matrix.cells.setdefault(key, Cell())
        cell.attempts += 1
        cell.last_submitted_at = submission.created_at
        score = submission.score or 0.0
        if (
            cell.best_verdict is None
            or score > cell.best_score
            or (submission.verdict == "accepted" and cell.best_verdict != "accepted")
        ):
            cell.best_verdict, cell.best_score = submission.verdict, score
        if submission.verdict == "accepted" and cell.first_accepted_at is None:
            cell.first_accepted_at = submission.created_at
            matrix._attempts_to_solve[key] = cell.attempts
    for (_user_id, problem), cell in matrix.cells.items():
        deadline = due.get(problem)
        if deadline is not None:
            # Late: first solved after the deadline; or, never solved, last tried after it.
            moment = cell.first_accepted_at or cell.last_submitted_at
            cell.late = moment is not None and moment > deadline
    return matrix


def _safe(value: object) -> str:
    """Spreadsheets execute cells starting with = + - @ as formulas: quote them."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def matrix_csv(matrix: Matrix) -> str:
    """One row per learner; per assigned problem a score (0-1) and a late flag."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    header = ["learner"]
    for assignment in matrix.problems:
        header += [f"{assignment.problem} score", f"{assignment.problem} late"]
    writer.writerow(header)
    for learner in matrix.learners:
        row = [_safe(learner.name)]
        for assignment in matrix.problems:
            cell = matrix.cell(learner, assignment.problem)
            row += [f"{cell.best_score:.2f}", "yes" if cell.late else "no"]
        writer.writerow(row)
    return out.getvalue()


@dataclass(frozen=True)
class TimelineEntry:
    """A submit as the course sees it: its verdict, score and report may be the
    course's own (app/course_submissions.py)."""

    submission: Submission
    late: bool
    version: int | None
    verdict: str | None
    score: float | None
    result_json: str | None

    @property
    def report(self) -> GradeReport | None:
        return GradeReport.from_stored(self.result_json)


def _course_submits(
    session: Session, course: Course, user_ids: list[int] | None, *, newest_first: bool
) -> list[TimelineEntry]:
    """The course's submits (of these learners, or all), with late flags and the number
    of the version that graded each."""
    due = {a.problem: a.due_at for a in assignments_of(session=session, course=course)}
    query = (
        within(course, Submission, ProblemVersion.number, VERDICT, SCORE, RESULT_JSON)
        .outerjoin(ProblemVersion, ProblemVersion.id == VERSION_ID)
        .order_by(Submission.id.desc() if newest_first else Submission.id)
    )
    if user_ids is not None:
        query = query.where(Submission.user_id.in_(user_ids))
    entries = []
    for submission, number, verdict, score, result_json in session.execute(query):
        deadline = due.get(submission.problem)
        late = deadline is not None and submission.created_at > deadline
        entries.append(TimelineEntry(submission, late, number, verdict, score, result_json))
    return entries


def timeline(*, session: Session, course: Course, learner: User) -> list[TimelineEntry]:
    """A learner's submits within the course, newest first."""
    return _course_submits(session, course, [learner.id], newest_first=True)


SUBMISSION_COLUMNS = (
    "submission", "learner", "problem", "submitted_at_utc", "late", "status", "verdict",
    "score", "problem_version", "diagnosis", "code",
)  # fmt: skip


def submissions_csv(*, session: Session, course: Course) -> str:
    """Every submit of the course's learners on its assigned problems, oldest first."""
    names = {learner.id: learner.name for learner in learners_of(session=session, course=course)}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(SUBMISSION_COLUMNS)
    for entry in _course_submits(session, course, None, newest_first=False):
        submission, number = entry.submission, entry.version
        writer.writerow(
            [
                submission.id,
                _safe(names[submission.user_id]),
                submission.problem,
                submission.created_at.isoformat(timespec="seconds"),
                "yes" if entry.late else "no",
                submission.status,
                entry.verdict or "",
                "" if entry.score is None else f"{entry.score:.2f}",
                "" if number is None else number,
                _safe(entry.report.diagnosis if entry.report else ""),
                _safe(submission.code),
            ]
        )
    return out.getvalue()
