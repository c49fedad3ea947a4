"""What operators look at: the grading processes, the queue, and what is stuck. Read
from the database, so it covers every worker on every machine (their heartbeats) and
every web process; /metrics (app/server/metrics.py) and /admin/workers show it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.grading.heartbeats import STALE_AFTER
from app.models import Submission, WorkerHeartbeat, utcnow
from app.vocabulary import SubmissionStatus

QUEUED_TOO_LONG = timedelta(minutes=2)


@dataclass(frozen=True)
class WorkerView:
    row: WorkerHeartbeat
    age_seconds: float

    @property
    def stale(self) -> bool:
        return self.age_seconds > STALE_AFTER.total_seconds()

    @property
    def busy_children(self) -> int:
        return len([job for job in self.row.current_jobs.split(",") if job])


@dataclass(frozen=True)
class QueueEntry:
    submission: Submission
    why_stuck: str | None


def _naive(moment: datetime) -> datetime:
    return moment.replace(tzinfo=None)


def workers(*, session: Session, now: datetime | None = None) -> list[WorkerView]:
    now = _naive(now or utcnow())
    rows = session.scalars(select(WorkerHeartbeat).order_by(WorkerHeartbeat.name)).all()
    return [WorkerView(row, (now - _naive(row.heartbeat_at)).total_seconds()) for row in rows]


def depth_by_status(*, session: Session) -> dict[str, int]:
    counts = dict(
        session.execute(select(Submission.status, func.count()).group_by(Submission.status)).all()
    )
    return {status.value: int(counts.get(status.value, 0)) for status in SubmissionStatus}


def _why_stuck(row: Submission, now: datetime, live: set[str]) -> str | None:
    if row.status == SubmissionStatus.RUNNING:
        if row.lease_expires_at is not None and _naive(row.lease_expires_at) < now:
            return "lease expired: its worker stopped renewing (it will be graded again)"
        owner = (row.lease_owner or "").rsplit(":", 1)[0]
        if owner and owner not in live:
            return "held by a worker with no recent heartbeat"
    elif row.status == SubmissionStatus.QUEUED and now - _naive(row.created_at) > QUEUED_TOO_LONG:
        return f"waiting for more than {int(QUEUED_TOO_LONG.total_seconds() // 60)} minutes"
    return None


def unfinished(*, session: Session, limit: int = 200) -> list[QueueEntry]:
    """Queued and running submissions, oldest first, each with why it looks stuck."""
    now = _naive(utcnow())
    live = {view.row.name for view in workers(session=session) if not view.stale}
    rows = session.scalars(
        select(Submission)
        .where(Submission.status.in_([SubmissionStatus.QUEUED, SubmissionStatus.RUNNING]))
        .order_by(Submission.id)
        .limit(limit)
    ).all()
    return [QueueEntry(row, _why_stuck(row, now, live)) for row in rows]


@dataclass(frozen=True)
class FinishedTimes:
    problem: str
    verdict: str
    queue_wait: float
    grading: float
    total: float


def finished_times(*, session: Session) -> list[FinishedTimes]:
    """Every graded submission's timings (seconds), for the metrics' histograms."""
    rows = session.execute(
        select(
            Submission.problem,
            Submission.verdict,
            Submission.created_at,
            Submission.started_at,
            Submission.finished_at,
        ).where(Submission.status == SubmissionStatus.DONE, Submission.finished_at.is_not(None))
    ).all()
    times = []
    for problem, verdict, created, started, finished in rows:
        if finished is None:
            continue
        begun = started or created
        times.append(
            FinishedTimes(
                problem,
                verdict or "unknown",
                max(0.0, (begun - created).total_seconds()),
                max(0.0, (finished - begun).total_seconds()),
                max(0.0, (finished - created).total_seconds()),
            )
        )
    return times
