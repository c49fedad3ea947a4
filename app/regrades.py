"""Regrading, CMS-style: re-run a course's submissions for one problem against a
chosen version in the background, show whose verdict would change, then apply
or discard. Applying keeps every replaced verdict (`past_verdicts`) with the
version that produced it; discarding changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.crud import CrudError
from app.models import (
    Course,
    CourseMember,
    PastVerdict,
    ProblemVersion,
    Regrade,
    RegradeItem,
    Submission,
    User,
    utcnow,
)
from app.queue import GradingJob

PENDING = ("running", "ready")


def start(*, session: Session, course: Course, version: ProblemVersion, by: User) -> Regrade:
    """Queue every graded submit of the course's learners for the problem, except
    those the chosen version already produced."""
    pending = session.scalar(
        select(Regrade).where(
            Regrade.course_id == course.id,
            Regrade.problem == version.slug,
            Regrade.status.in_(PENDING),
        )
    )
    if pending is not None:
        raise CrudError(
            f"regrade #{pending.id} of {version.slug} is still {pending.status}; "
            "apply or discard it first"
        )
    learners = select(CourseMember.user_id).where(
        CourseMember.course_id == course.id, CourseMember.role == "learner"
    )
    submissions = list(
        session.scalars(
            select(Submission)
            .where(
                Submission.user_id.in_(learners),
                Submission.problem == version.slug,
                Submission.mode == "submit",
                Submission.status == "done",
                (Submission.problem_version_id != version.id)
                | Submission.problem_version_id.is_(None),
            )
            .order_by(Submission.id)
        )
    )
    if not submissions:
        raise CrudError(
            f"no submission of this course for {version.slug} was graded by another version"
        )
    regrade = Regrade(
        course_id=course.id, problem=version.slug, version_id=version.id, created_by=by.id
    )
    session.add(regrade)
    session.flush()
    session.add_all(
        RegradeItem(
            regrade_id=regrade.id,
            submission_id=submission.id,
            old_verdict=submission.verdict,
            old_score=submission.score,
        )
        for submission in submissions
    )
    session.flush()
    return regrade


def job_for(session: Session, item: RegradeItem) -> GradingJob:
    regrade = session.get_one(Regrade, item.regrade_id)
    submission = session.get_one(Submission, item.submission_id)
    return GradingJob(
        id=item.id,
        slug=regrade.problem,
        version_id=regrade.version_id,
        code=submission.code,
        mode="submit",
        attempts=item.attempts,
        hidden_draw=submission.hidden_draw or 0,  # the same hidden inputs as the first grading
    )


def finish_if_complete(session: Session, *, item_id: int) -> None:
    item = session.get(RegradeItem, item_id)
    if item is None:
        return
    regrade = session.get_one(Regrade, item.regrade_id)
    done, total = progress(session, regrade)
    if regrade.status == "running" and done == total:
        regrade.status = "ready"
        session.flush()


def progress(session: Session, regrade: Regrade) -> tuple[int, int]:
    rows = dict(
        session.execute(
            select(RegradeItem.status, func.count())
            .where(RegradeItem.regrade_id == regrade.id)
            .group_by(RegradeItem.status)
        ).all()
    )
    return rows.get("done", 0), sum(rows.values())


@dataclass(frozen=True)
class Change:
    learner: str
    submission_id: int
    submitted_at: datetime
    old_verdict: str | None
    old_score: float | None
    new_verdict: str | None
    new_score: float | None

    @property
    def changed(self) -> bool:
        return self.new_verdict is not None and (
            self.new_verdict != self.old_verdict
            or round(self.new_score or 0.0, 6) != round(self.old_score or 0.0, 6)
        )


def changes(session: Session, regrade: Regrade) -> list[Change]:
    """Every item, changed verdicts first, then by learner and submission."""
    rows = session.execute(
        select(RegradeItem, Submission.created_at, User.name)
        .join(Submission, Submission.id == RegradeItem.submission_id)
        .join(User, User.id == Submission.user_id)
        .where(RegradeItem.regrade_id == regrade.id)
    )
    found = [
        Change(
            learner=name,
            submission_id=item.submission_id,
            submitted_at=created_at,
            old_verdict=item.old_verdict,
            old_score=item.old_score,
            new_verdict=item.new_verdict,
            new_score=item.new_score,
        )
        for item, created_at, name in rows
    ]
    return sorted(found, key=lambda c: (not c.changed, c.learner, c.submission_id))


def apply(session: Session, *, regrade: Regrade) -> int:
    """Make the new verdicts current; returns how many verdicts changed."""
    if regrade.status != "ready":
        raise CrudError(f"regrade #{regrade.id} is {regrade.status}; only a finished one applies")
    changed = 0
    rows = session.execute(
        select(RegradeItem, Submission)
        .join(Submission, Submission.id == RegradeItem.submission_id)
        .where(RegradeItem.regrade_id == regrade.id)
    )
    for item, submission in rows:
        session.add(
            PastVerdict(
                submission_id=submission.id,
                problem_version_id=submission.problem_version_id,
                verdict=submission.verdict,
                score=submission.score,
                result_json=submission.result_json,
                regrade_id=regrade.id,
            )
        )
        changed += submission.verdict != item.new_verdict
        submission.verdict = item.new_verdict
        submission.score = item.new_score
        submission.result_json = item.new_result_json
        submission.problem_version_id = regrade.version_id
    regrade.status = "applied"
    regrade.decided_at = utcnow()
    session.flush()
    return changed


def discard(session: Session, *, regrade: Regrade) -> None:
    """Drop the regrade's results (a running one stops: its waiting items are removed)."""
    if regrade.status not in PENDING:
        raise CrudError(f"regrade #{regrade.id} is already {regrade.status}")
    session.execute(
        delete(RegradeItem).where(
            RegradeItem.regrade_id == regrade.id, RegradeItem.status != "done"
        )
    )
    regrade.status = "discarded"
    regrade.decided_at = utcnow()
    session.flush()


def of_course(session: Session, course: Course) -> list[Regrade]:
    return list(
        session.scalars(
            select(Regrade).where(Regrade.course_id == course.id).order_by(Regrade.id.desc())
        )
    )


def past_verdicts(session: Session, submission_id: int) -> list[tuple[PastVerdict, int | None]]:
    """Replaced verdicts of a submission with their version numbers, oldest first."""
    rows = session.execute(
        select(PastVerdict, ProblemVersion.number)
        .outerjoin(ProblemVersion, ProblemVersion.id == PastVerdict.problem_version_id)
        .where(PastVerdict.submission_id == submission_id)
        .order_by(PastVerdict.id)
    )
    return [(past, number) for past, number in rows]
