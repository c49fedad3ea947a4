"""Held runs seen from the database: a learner's activity in another grading process
ends the run this one holds for them (grader/parking.py).

A grading process holds a learner's passing run until their submission of the same
code. With several processes (`jaxjudge worker` on more machines, or several beside
`serve`), that learner's next run or submission may be claimed by another one, which
cannot reach this process's lot. So every ``WATCH_SECONDS`` while runs are held, this
process asks the database what each of their learners did since their run: anything
but a submission of the held code that is still queued or in this process's hands
(another run, other code, another problem, that submission claimed elsewhere) lets the
held child go at once, instead of at the end of its time.
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.models import Submission
from app.vocabulary import SubmissionStatus
from grader.child.verdicts import Mode
from grader.parking import ParkingLot, Ticket

log = logging.getLogger("jaxjudge.held_runs")
WATCH_SECONDS = 2.0


def _continues(row: Submission, ticket: Ticket, process: str) -> bool:
    """Whether ``row`` may still be graded in the held child: a submission of the held
    code for the same version, queued or claimed by one of this process's workers."""
    same_code = row.mode == Mode.SUBMIT and ticket.fits(row.problem_version_id, row.code)
    ours = row.status == SubmissionStatus.QUEUED or (
        row.status == SubmissionStatus.RUNNING and (row.lease_owner or "").startswith(f"{process}:")
    )
    return same_code and ours


def superseded(
    session: Session, held: dict[str, tuple[Ticket, int]], process: str
) -> dict[str, str]:
    """Learner -> why their held run should go, for those who did something since it."""
    if not held:
        return {}
    since = {int(owner): number for owner, (_, number) in held.items()}
    rows = session.scalars(
        select(Submission).where(Submission.user_id.in_(since), Submission.id > min(since.values()))
    ).all()
    ended: dict[str, str] = {}
    for row in rows:
        owner = str(row.user_id)
        if row.id <= since[row.user_id] or owner in ended:
            continue
        if not _continues(row, held[owner][0], process):
            ended[owner] = "its learner did something else, in another grading process"
    return ended


class HeldRunWatch:
    """Ends this process's held runs whose learners moved on elsewhere."""

    def __init__(self, parking: ParkingLot, process: str) -> None:
        self.parking, self.process = parking, process
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="jaxjudge-held-runs", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def check(self) -> None:
        held = self.parking.held()
        if not held:
            return
        with session_scope() as session:
            ended = superseded(session, held, self.process)
        for owner, reason in ended.items():
            self.parking.forget(owner, reason, since=held[owner][1])

    def _loop(self) -> None:
        while not self._stop.wait(WATCH_SECONDS):
            try:
                self.check()
            except SQLAlchemyError as error:  # the next look tries again; the runs expire anyway
                log.warning("could not check held runs: %s", type(error).__name__)
