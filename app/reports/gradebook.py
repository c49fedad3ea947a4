"""The course's grade book: each learner's result on each assigned problem, as the
course counts it (app/reports/deadlines.py: the window, the learner's due date
with any extension, the late policy), and an override in force on top.

For each (learner, problem): the *raw* score is the best score of the submits that
count; the *final* score is the best of each counted submit's score times what its
lateness keeps (so an on-time partial answer can beat a penalised full one), unless
staff overrode it. Both are 0 to 1 of the assignment's points.

A submit's score is its *combined* one (app/data/rubrics.py ``combined_score``): the automatic score with
the rubric items staff applied to it, as the assignment's rubric mode says; a submit
nobody graded by hand scores its automatic score alone, as before rubrics."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Select
from sqlalchemy.orm import Session

from app.data import assignments, courses, extensions, lti_scores, overrides, rubrics
from app.data.course_submissions import SCORE, VERDICT, within
from app.models import Assignment, Course, Extension, ScoreOverride, Submission, User
from app.reports.windows import CourseWindows
from app.vocabulary import GradeStatus, SubmissionStatus
from grader.child.verdicts import Verdict


@dataclass
class Cell:
    """One learner on one assigned problem."""

    best_verdict: str | None = None
    best_score: float = 0.0  # raw: the best counted (combined) score, before any penalty
    final_score: float = 0.0  # after the late policy and any override
    computed_score: float = 0.0  # final before an override
    attempts: int = 0  # submits that count
    not_counted: int = 0  # made outside the window (before it opened, after the cut-off)
    first_accepted_at: datetime | None = None
    last_submitted_at: datetime | None = None
    late: bool = False
    due_at: datetime | None = None  # the learner's, extension included
    extended: bool = False
    override: ScoreOverride | None = None
    # The submit that gave ``computed_score``: its automatic score, its rubric items'
    # points (None: nobody graded it by hand) and who graded it.
    scored_submission_id: int | None = None
    automatic_score: float = 0.0
    manual_points: float | None = None
    graded_by: str | None = None

    @property
    def status(self) -> GradeStatus:
        if self.first_accepted_at is not None:
            return GradeStatus.LATE if self.late else GradeStatus.SOLVED
        return GradeStatus.ATTEMPTED if self.attempts else GradeStatus.NOT_STARTED


@dataclass
class Matrix:
    problems: list[Assignment]
    learners: list[User]
    cells: dict[tuple[int, str], Cell] = field(default_factory=dict)
    _attempts_to_solve: dict[tuple[int, str], int] = field(default_factory=dict)

    def cell(self, learner: User, problem: str) -> Cell:
        return self.cells.get((learner.id, problem), Cell())

    def points(self, learner: User, assignment: Assignment) -> float:
        return self.cell(learner, assignment.problem).final_score * assignment.max_points

    def total(self, learner: User) -> float:
        return sum(self.points(learner, a) for a in self.problems)

    def total_possible(self) -> float:
        return sum(a.max_points for a in self.problems)

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

    def solved_count(self, learner: User) -> int:
        return sum(
            1 for a in self.problems if self.cell(learner, a.problem).first_accepted_at is not None
        )

    def rows(self, *, sort: str = "name", query: str = "", show: str = "all") -> list[User]:
        """Learners filtered by name and by ``show`` (all | unsolved | late), then sorted by
        name, by problems solved (``solved``), or by one problem's final score (its slug)."""
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
                key=lambda u: (
                    -self.cell(u, sort).final_score,
                    self.cell(u, sort).attempts,
                    u.name,
                ),
            )
        return picked  # already by name


def grade_matrix(
    *,
    session: Session,
    course: Course,
    learner_ids: list[int] | None = None,
    problem: str | None = None,
) -> Matrix:
    """The grade book (of some learners, or of one problem, for the LMS outbox)."""
    problems = [
        a
        for a in assignments.assignments_of(session=session, course=course)
        if problem is None or a.problem == problem
    ]
    wanted = None if learner_ids is None else set(learner_ids)
    learners = [
        u
        for u in courses.learners_of(session=session, course=course)
        if wanted is None or u.id in wanted
    ]
    matrix = Matrix(problems=problems, learners=learners)
    windows = CourseWindows(session, course)
    for learner in learners:
        for assignment in problems:
            window = windows.of(learner.id, assignment.problem)
            cell = matrix.cells.setdefault((learner.id, assignment.problem), Cell())
            cell.due_at, cell.extended = window.due_at, window.extended

    def counted(*columns: Any) -> Select[Any]:
        query = within(course, *columns).where(Submission.status == SubmissionStatus.DONE)
        if learner_ids is not None:
            query = query.where(Submission.user_id.in_(learner_ids))
        if problem is not None:
            query = query.where(Submission.problem == problem)
        return query

    by_hand = rubrics.graded_by_hand(
        session=session, course=course, submission_ids=counted(Submission.id)
    )
    rubric = {a.problem: a for a in problems}
    query = counted(
        Submission.id,
        Submission.user_id,
        Submission.problem,
        Submission.created_at,
        VERDICT,
        SCORE,
    ).order_by(Submission.id)
    for submission in session.execute(query):  # only the columns the matrix needs
        key = (submission.user_id, submission.problem)
        if key not in matrix.cells:
            continue
        cell = matrix.cells[key]
        standing = windows.standing(submission.user_id, submission.problem, submission.created_at)
        if not standing.counts:
            cell.not_counted += 1
            continue
        cell.attempts += 1
        cell.last_submitted_at = submission.created_at
        automatic = submission.score or 0.0
        graded = by_hand.get(submission.id)
        manual = None if graded is None else graded[1]
        score = rubrics.combined_score(
            automatic=automatic, manual_points=manual, assignment=rubric[submission.problem]
        )
        accepted = submission.verdict == Verdict.ACCEPTED
        if (
            cell.best_verdict is None
            or score > cell.best_score
            or (accepted and cell.best_verdict != Verdict.ACCEPTED)
        ):
            cell.best_verdict, cell.best_score = submission.verdict, score
        if cell.scored_submission_id is None or score * standing.factor > cell.computed_score:
            cell.computed_score = score * standing.factor
            cell.scored_submission_id, cell.automatic_score = submission.id, automatic
            cell.manual_points = manual
            cell.graded_by = None if graded is None else graded[0]
        if cell.first_accepted_at is None:
            cell.late = standing.late  # solved late, or never solved and last tried late
            if accepted:
                cell.first_accepted_at = submission.created_at
                matrix._attempts_to_solve[key] = cell.attempts
    in_force = overrides.in_force(overrides.history(session=session, course=course))
    for key, cell in matrix.cells.items():
        cell.final_score = cell.computed_score
        if (found := in_force.get(key)) is not None and found.score is not None:
            cell.override, cell.final_score = found, found.score
    return matrix


# A submit's combined score, 0 to 1 (defined beside the rubric data, where regrades
# read it too): the grade book, its pages and the grading view all count it so.
combined_score = rubrics.combined_score


def final_score(*, session: Session, course: Course, user_id: int, problem: str) -> float | None:
    """The learner's final score (0 to 1) on ``problem`` as the grade book shows it; None
    before any counted submit or override (the LMS is then left alone)."""
    matrix = grade_matrix(session=session, course=course, learner_ids=[user_id], problem=problem)
    cell = matrix.cells.get((user_id, problem))
    if cell is None or (cell.attempts == 0 and cell.override is None):
        return None
    return cell.final_score


def grades_changed(
    *, session: Session, course: Course, problem: str, learner_ids: list[int] | None = None
) -> int:
    """A late policy, an extension or an override changed these learners' grades (all
    the course's when None): arm the LMS rows of the problem's links in this course
    for each who has a grade now or was sent one before. Returns rows armed."""
    links = lti_scores.course_links(session=session, course_id=course.id, problem=problem)
    if not links:
        return 0
    sent_before = lti_scores.learners_with_rows(session=session, link_ids=links)
    matrix = grade_matrix(session=session, course=course, learner_ids=learner_ids, problem=problem)
    graded = [
        user_id
        for (user_id, _problem), cell in matrix.cells.items()
        if cell.attempts or cell.override is not None or user_id in sent_before
    ]
    for link_id in links:  # a few statements a link, however many learners
        lti_scores.arm_all(session=session, link_id=link_id, user_ids=graded)
    return len(graded) * len(links)


def extensions_changed(*, session: Session, course: Course, changed: list[Extension]) -> None:
    """Extensions granted or taken back: recompute and resend the grades they touch,
    once per problem however many rows a CSV held."""
    learners: dict[str, set[int]] = {}
    for extension in changed:
        learners.setdefault(extension.problem, set()).update(
            extensions.affected_learners(session=session, course=course, extension=extension)
        )
    for problem, ids in learners.items():
        grades_changed(session=session, course=course, problem=problem, learner_ids=sorted(ids))
