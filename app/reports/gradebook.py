"""The instructor's grade book: each learner's best result on each assigned problem
(verdict, score, attempts, first acceptance, lateness), with the columns' solve rates."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session

from app.data import courses
from app.models import Assignment, Course, Submission, User
from app.reports.course_submissions import SCORE, VERDICT, within
from app.vocabulary import SubmissionStatus
from grader.verdicts import Verdict


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


def grade_matrix(*, session: Session, course: Course) -> Matrix:
    problems = courses.assignments_of(session=session, course=course)
    learners = courses.learners_of(session=session, course=course)
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
        .where(Submission.status == SubmissionStatus.DONE)
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
            or (submission.verdict == Verdict.ACCEPTED and cell.best_verdict != Verdict.ACCEPTED)
        ):
            cell.best_verdict, cell.best_score = submission.verdict, score
        if submission.verdict == Verdict.ACCEPTED and cell.first_accepted_at is None:
            cell.first_accepted_at = submission.created_at
            matrix._attempts_to_solve[key] = cell.attempts
    for (_user_id, problem), cell in matrix.cells.items():
        deadline = due.get(problem)
        if deadline is not None:
            # Late: first solved after the deadline; or, never solved, last tried after it.
            moment = cell.first_accepted_at or cell.last_submitted_at
            cell.late = moment is not None and moment > deadline
    return matrix
