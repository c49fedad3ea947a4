"""Per-problem analytics of a course: solve rate over time, attempts to solve,
the most frequent diagnoses and failing cases (all from stored verdicts)."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta

from sqlalchemy.orm import Session

from app.data.course_submissions import RESULT_JSON, VERDICT, within
from app.data.courses import learners_of
from app.models import Course, Submission
from app.reports.gradebook import Matrix, grade_matrix
from app.vocabulary import SubmissionStatus
from grader.child.verdicts import Verdict
from grader.judging.report import GradeReport

MOST = 8  # rows in the "most frequent" tables


@dataclass
class ProblemStats:
    learners: int
    solved: int = 0
    submissions: int = 0
    solved_by_day: list[tuple[date, int]] = field(default_factory=list)  # cumulative
    attempts_to_solve: Counter[int] = field(default_factory=Counter)
    diagnoses: list[tuple[str, int]] = field(default_factory=list)
    failing_cases: list[tuple[str, int]] = field(default_factory=list)
    verdicts: list[tuple[str, int]] = field(default_factory=list)
    max_points: float = 0.0
    mean_raw_points: float = 0.0  # over the course's learners, before the late policy
    mean_final_points: float = 0.0  # after it and any override: what the grade book counts

    @property
    def solve_rate(self) -> float:
        return self.solved / self.learners if self.learners else 0.0

    def attempt_bars(self, cap: int = 6) -> list[tuple[str, int]]:
        """Learners by attempts to their first acceptance; ``cap`` and more share a bar."""
        bars = [(str(n), self.attempts_to_solve.get(n, 0)) for n in range(1, cap)]
        bars.append((f"{cap}+", sum(c for n, c in self.attempts_to_solve.items() if n >= cap)))
        return bars

    def rate_points(self) -> list[tuple[str, float]]:
        return [
            (day.strftime("%m-%d"), count / self.learners if self.learners else 0.0)
            for day, count in self.solved_by_day
        ]


def _first_failing_case(report: GradeReport) -> str | None:
    for case in report.cases:
        if case.verdict not in (Verdict.ACCEPTED, Verdict.SKIPPED):
            kind = "hidden" if case.hidden else "sample"
            return f"{case.name} ({kind}): {case.verdict_label.lower()}"
    return None


def problem_stats(*, session: Session, course: Course, problem: str) -> ProblemStats:
    learners = learners_of(session=session, course=course)
    stats = ProblemStats(learners=len(learners))
    rows = session.execute(
        within(course, Submission.user_id, Submission.created_at, VERDICT, RESULT_JSON)
        .where(Submission.problem == problem, Submission.status == SubmissionStatus.DONE)
        .order_by(Submission.id)
    )
    attempts: Counter[int] = Counter()
    first_solved: dict[int, date] = {}
    diagnoses: Counter[str] = Counter()
    failing: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    for submission in rows:  # the course's view: its own verdicts where a regrade set them
        stats.submissions += 1
        verdicts[submission.verdict or "unknown"] += 1
        if submission.user_id in first_solved:
            continue  # after the first acceptance: not part of "where the class is stuck"
        attempts[submission.user_id] += 1
        if submission.verdict == Verdict.ACCEPTED:
            first_solved[submission.user_id] = submission.created_at.date()
            stats.attempts_to_solve[attempts[submission.user_id]] += 1
            continue
        report = GradeReport.from_stored(submission.result_json)
        if report is None:
            continue
        if report.diagnosis:
            diagnoses[report.diagnosis] += 1
        if case := _first_failing_case(report):
            failing[case] += 1
    stats.solved = len(first_solved)
    stats.diagnoses = diagnoses.most_common(MOST)
    stats.failing_cases = failing.most_common(MOST)
    stats.verdicts = verdicts.most_common()
    _points(stats, grade_matrix(session=session, course=course, problem=problem))
    if first_solved:
        day, last = min(first_solved.values()), max(first_solved.values())
        per_day = Counter(first_solved.values())
        total = 0
        while day <= last:
            total += per_day.get(day, 0)
            stats.solved_by_day.append((day, total))
            day += timedelta(days=1)
    return stats


def _points(stats: ProblemStats, matrix: Matrix) -> None:
    """Mean raw and final points of the problem's column in the grade book."""
    if not matrix.problems or not matrix.learners:
        return
    (assignment,) = matrix.problems
    cells = [matrix.cell(learner, assignment.problem) for learner in matrix.learners]
    stats.max_points = assignment.max_points
    stats.mean_raw_points = statistics.fmean(c.best_score for c in cells) * assignment.max_points
    stats.mean_final_points = statistics.fmean(c.final_score for c in cells) * assignment.max_points
