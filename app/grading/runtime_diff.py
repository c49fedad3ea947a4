"""Which verdicts a new grading runtime would change, before an operator moves to it.

`jaxjudge runtime diff` grades stored submissions again with a candidate interpreter
(a virtualenv holding the new jax, flax and optax) in a staging data folder: its own
expected outputs, compilation caches and time-limit calibration, nothing shared with
the serving runtime's. Each submission meets the same problem version and the same
hidden inputs it was graded on; a verdict or score that moves is a change, reported
with why. `jaxjudge runtime apply` makes a report's new verdicts current once the
candidate is the serving runtime, keeping every replaced verdict (docs/operations.md).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.data import catalog, lti_scores, regrades
from app.errors import ConflictError
from app.models import ProblemVersion, Submission
from app.vocabulary import SubmissionStatus
from grader.child.verdicts import Mode, Verdict
from grader.judging.report import GradeReport
from grader.problems.problem import Problem

log = logging.getLogger("jaxjudge.runtime")

# Verdicts that say nothing about the submission: never compared.
_NOT_VERDICTS = (Verdict.INTERNAL_ERROR.value,)


@dataclass(frozen=True)
class StoredVerdict:
    """A graded submit as the serving runtime left it."""

    submission_id: int
    slug: str
    version_id: int
    code: str
    hidden_draw: int
    verdict: str
    score: float
    result_json: str | None


@dataclass
class VerdictChange:
    submission_id: int
    slug: str
    old_verdict: str
    new_verdict: str
    old_score: float
    new_score: float
    why: str
    new_result_json: str


@dataclass
class ProblemDiff:
    slug: str
    version_id: int
    graded: int = 0
    changes: list[VerdictChange] = field(default_factory=list)
    # The candidate could not grade this problem at all (its reference failed): why.
    failure: str | None = None


@dataclass
class RuntimeDiff:
    serving: dict[str, str]
    candidate: dict[str, str]
    problems: list[ProblemDiff] = field(default_factory=list)

    @property
    def graded(self) -> int:
        return sum(problem.graded for problem in self.problems)

    @property
    def changes(self) -> list[VerdictChange]:
        return [change for problem in self.problems for change in problem.changes]

    @property
    def failures(self) -> list[ProblemDiff]:
        return [problem for problem in self.problems if problem.failure]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RuntimeDiff:
        problems = [
            ProblemDiff(**{**problem, "changes": [VerdictChange(**c) for c in problem["changes"]]})
            for problem in data["problems"]
        ]
        return cls(serving=data["serving"], candidate=data["candidate"], problems=problems)

    def lines(self) -> list[str]:
        """The report as a person reads it."""
        moved = [
            f"{name} {self.serving.get(name)} -> {self.candidate.get(name)}"
            for name in sorted(set(self.serving) | set(self.candidate))
            if self.serving.get(name) != self.candidate.get(name)
        ]
        out = [f"runtime: {', '.join(moved) or 'no difference'}"]
        for problem in self.problems:
            if problem.failure:
                out.append(f"{problem.slug}: CANNOT GRADE on the candidate: {problem.failure}")
                continue
            out.append(
                f"{problem.slug}: {problem.graded} graded, {len(problem.changes)} would change"
            )
            out += [
                f"  #{c.submission_id}: {c.old_verdict} ({c.old_score:g}) -> {c.new_verdict}"
                f" ({c.new_score:g}): {c.why}"
                for c in problem.changes
            ]
        out.append(
            f"{self.graded} submission(s) graded again, {len(self.changes)} verdict(s) would"
            f" change, {len(self.failures)} problem(s) cannot be graded"
        )
        return out


def stored_verdicts(
    session: Session, *, per_problem: int | None, slugs: Iterable[str] = ()
) -> list[StoredVerdict]:
    """Graded submits to grade again: for each problem, the newest ``per_problem``
    accepted and the newest ``per_problem`` not accepted (every one when None)."""
    query = (
        select(Submission)
        .where(
            Submission.mode == Mode.SUBMIT.value,
            Submission.status == SubmissionStatus.DONE,
            Submission.verdict.is_not(None),
            Submission.verdict.not_in(_NOT_VERDICTS),
            Submission.problem_version_id.is_not(None),
        )
        .order_by(Submission.problem, Submission.id.desc())
    )
    wanted = set(slugs)
    if wanted:
        query = query.where(Submission.problem.in_(wanted))
    taken: dict[tuple[str, bool], int] = {}
    chosen: list[StoredVerdict] = []
    for submission in session.scalars(query):
        accepted = submission.verdict == Verdict.ACCEPTED.value
        count = taken.get((submission.problem, accepted), 0)
        if per_problem is not None and count >= per_problem:
            continue
        taken[(submission.problem, accepted)] = count + 1
        assert submission.problem_version_id is not None and submission.verdict is not None
        chosen.append(
            StoredVerdict(
                submission_id=submission.id,
                slug=submission.problem,
                version_id=submission.problem_version_id,
                code=submission.code,
                hidden_draw=submission.hidden_draw or 0,
                verdict=submission.verdict,
                score=submission.score or 0.0,
                result_json=submission.result_json,
            )
        )
    return chosen


def _first_failure(report: dict[str, Any]) -> str:
    for case in report.get("cases") or []:
        if case.get("verdict") not in (Verdict.ACCEPTED.value, Verdict.SKIPPED.value):
            where = "a hidden case" if case.get("hidden") else f"case {case.get('name')!r}"
            message = (case.get("message") or "").strip().splitlines()
            return f"{where}: {case['verdict']}" + (f" ({message[0]})" if message else "")
    message = (report.get("message") or "").strip().splitlines()
    return message[0] if message else str(report.get("verdict"))


def why_changed(old: StoredVerdict, new: GradeReport) -> str:
    """The case that now fails, or the one that failed before and now passes."""
    if new.verdict is not Verdict.ACCEPTED:
        return "now " + _first_failure(new.to_json())
    before = json.loads(old.result_json) if old.result_json else {}
    return "now accepted; before, " + _first_failure(before)


GradeStored = Callable[[Problem, StoredVerdict], GradeReport]


def diff(
    session: Session,
    stored: list[StoredVerdict],
    grade: GradeStored,
    *,
    serving: dict[str, str],
    candidate: dict[str, str],
    progress: Callable[[str], None] = lambda line: None,
) -> RuntimeDiff:
    """Grade ``stored`` with ``grade`` (the candidate runtime) and compare."""
    result = RuntimeDiff(serving=serving, candidate=candidate)
    by_version: dict[int, ProblemDiff] = {}
    problems: dict[int, Problem] = {}
    for item in stored:
        entry = by_version.get(item.version_id)
        if entry is None:
            entry = by_version[item.version_id] = ProblemDiff(item.slug, item.version_id)
            result.problems.append(entry)
            problems[item.version_id] = catalog.problem_of(
                session.get_one(ProblemVersion, item.version_id)
            )
        if entry.failure:
            continue
        try:
            report = grade(problems[item.version_id], item)
        except Exception as error:  # the reference itself fails: every verdict is moot
            entry.failure = f"{type(error).__name__}: {error}"
            progress(f"{item.slug}: cannot grade on the candidate: {entry.failure}")
            continue
        if report.verdict is Verdict.INTERNAL_ERROR:
            entry.failure = report.message or "the grader failed"
            progress(f"{item.slug}: cannot grade on the candidate: {entry.failure}")
            continue
        entry.graded += 1
        if report.verdict.value != item.verdict or abs(report.score - item.score) > 1e-9:
            change = VerdictChange(
                submission_id=item.submission_id,
                slug=item.slug,
                old_verdict=item.verdict,
                new_verdict=report.verdict.value,
                old_score=item.score,
                new_score=report.score,
                why=why_changed(item, report),
                new_result_json=json.dumps(report.to_json(), allow_nan=False),
            )
            entry.changes.append(change)
            progress(f"  #{item.submission_id} {item.slug}: {item.verdict} -> {change.new_verdict}")
    return result


def apply(session: Session, report: RuntimeDiff, *, serving: dict[str, str]) -> int:
    """Make ``report``'s new verdicts current, once its candidate is the serving runtime.
    A submission whose verdict moved since the report was made is left alone. Each
    replaced verdict is kept (``past_verdicts``) and the learner's LMS grade is sent
    again. Returns how many verdicts changed."""
    if report.candidate != serving:
        raise ConflictError(
            "this report was made for another runtime than the one serving now; switch to"
            " the candidate first (docs/operations.md), or make the report again"
        )
    applied = 0
    for change in report.changes:
        submission = session.get(Submission, change.submission_id)
        if submission is None or submission.verdict != change.old_verdict:
            log.warning("submission %s changed since the report; left alone", change.submission_id)
            continue
        regrades.keep_past_verdict(session=session, submission_id=submission.id, shown=submission)
        submission.verdict, submission.score = change.new_verdict, change.new_score
        submission.result_json = change.new_result_json
        lti_scores.score_changed(
            session=session, user_id=submission.user_id, problem=submission.problem
        )
        applied += 1
    session.flush()
    return applied
