"""Authors' checks of a synced version: `jaxjudge check` (grader/check.py, which this
module only runs) on the version's snapshot, run by a grading worker, its report stored
with the version for the preview page.

A requested check is queued on its version and claimed like a submission
(app/grading/queue.py): a conditional UPDATE from queued, or running under an expired
lease, to running under the claiming worker's lease, so two workers never both win it.
Workers take a check only when no submission or regrade item waits (checks are long and
CPU-heavy: learners first), and one at a time per process (app/grading/worker.py). The
lease is renewed with each progress line and between them; recording requires still
holding it, so a worker that lost it drops its result, and a check whose worker died is
claimed again once its lease expires: no version stays running for ever.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import ColumnElement, CursorResult, and_, or_, select, update
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.data import catalog, check_products
from app.grading import heartbeats, preparation
from app.models import ProblemVersion, utcnow
from app.vocabulary import CheckStatus

if TYPE_CHECKING:
    from grader.check import CheckResult
    from grader.problems.problem import Problem

log = logging.getLogger("jaxjudge.authoring")
one_at_a_time = threading.Lock()  # checks are CPU-heavy: never two at once per process


def request_check(session: Session, *, version: ProblemVersion) -> bool:
    """Queue the version's check; False if one is queued or running. The caller commits,
    then wakes the workers (app/grading/notifications.py ``announce_new_work``)."""
    if version.check_status in (CheckStatus.QUEUED, CheckStatus.RUNNING):
        return False
    version.check_status = CheckStatus.QUEUED
    version.check_log = ""  # the new check's lines only
    version.check_lease_owner, version.check_lease_expires_at = None, None
    session.flush()
    return True


def waits_without_worker(session: Session, version: ProblemVersion) -> bool:
    """The version's check is queued and no grading process reports itself alive (the
    pages say so: it runs once a `jaxjudge worker` or a server with workers starts)."""
    return version.check_status == CheckStatus.QUEUED and not heartbeats.live(session)


def _rows(session: Session, statement: Any) -> int:
    result = cast(
        CursorResult[Any], session.execute(statement.execution_options(synchronize_session=False))
    )
    return result.rowcount


def _claimable(now: Any) -> ColumnElement[bool]:
    expired = or_(
        ProblemVersion.check_lease_expires_at.is_(
            None
        ),  # left by a server before workers ran checks
        ProblemVersion.check_lease_expires_at <= now,
    )
    return or_(
        ProblemVersion.check_status == CheckStatus.QUEUED,
        and_(ProblemVersion.check_status == CheckStatus.RUNNING, expired),
    )


def claim_check(session: Session, *, worker: str, lease_seconds: int) -> int | None:
    """Claim the oldest claimable check for ``worker``: its version's id, or None."""
    now = utcnow()
    candidates = (
        select(ProblemVersion.id).where(_claimable(now)).order_by(ProblemVersion.id).limit(5)
    )
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        candidates = candidates.with_for_update(skip_locked=True)
    for version_id in session.scalars(candidates).all():
        won = _rows(
            session,
            update(ProblemVersion)
            .where(ProblemVersion.id == version_id, _claimable(now))
            .values(
                check_status=CheckStatus.RUNNING,
                check_lease_owner=worker,
                check_lease_expires_at=now + timedelta(seconds=lease_seconds),
                check_log="",  # a second attempt shows its own lines
            ),
        )
        if won == 1:
            return version_id
    return None


def _held_by(version_id: int, worker: str) -> ColumnElement[bool]:
    return and_(
        ProblemVersion.id == version_id,
        ProblemVersion.check_lease_owner == worker,
        ProblemVersion.check_status == CheckStatus.RUNNING,
    )


def renew_check(session: Session, version_id: int, *, worker: str, lease_seconds: int) -> bool:
    """Extend ``worker``'s lease on the check; False if it was lost (drop the result)."""
    statement = (
        update(ProblemVersion)
        .where(_held_by(version_id, worker))
        .values(check_lease_expires_at=utcnow() + timedelta(seconds=lease_seconds))
    )
    return _rows(session, statement) == 1


def run_check(version_id: int, *, worker: str, lease_seconds: int) -> bool:
    """Run the claimed check of a version and record its report if ``worker`` still holds
    the lease; False when it did not (another worker runs it now)."""
    from grader.check import check_problem

    problem: Problem | None = None
    try:
        with session_scope() as session:
            problem = catalog.problem_of(session.get_one(ProblemVersion, version_id))
        # A course's problem is checked as it loaded: untrusted, every piece of its
        # author's code in a sandbox (grader/author_code.py).
        result = check_problem(
            problem.folder,
            trusted=problem.trusted,
            progress=_progress_of(version_id, worker, lease_seconds),
        )
        report = report_of(result)
    except Exception as error:  # a broken problem must not leave the version "running"
        log.exception("check of version %s failed", version_id)
        report = {"ok": False, "errors": [f"the check itself failed: {error!r}"], "notes": [],
                  "timings": {}, "text": ""}  # fmt: skip
    with session_scope() as session:
        # The conditional renewal takes the row's write lock until this commits: the lease
        # cannot move between the test and the record.
        if not renew_check(session, version_id, worker=worker, lease_seconds=lease_seconds):
            return False
        if report["ok"] and problem is not None and not problem.trusted:
            _keep_products(session, version_id, problem, report)
        version = session.get_one(ProblemVersion, version_id, populate_existing=True)
        record(version, report)
        version.check_lease_owner, version.check_lease_expires_at = None, None
    # The check ran the reference: store the version's samples for its preview now.
    try:
        preparation.prepare_version(version_id)
    except Exception:  # the preview says the samples are being prepared; the preparer retries
        log.exception("storing the samples of version %s failed", version_id)
    return True


def _keep_products(
    session: Session, version_id: int, problem: Problem, report: dict[str, Any]
) -> None:
    """Store what the check produced with the version, in the transaction that records it
    as passed: graders use these and never run the author's code again (check_products)."""
    try:
        check_products.keep(session=session, version_id=version_id, problem=problem, device="cpu")
    except OSError as error:
        report["ok"] = False
        report["errors"] = [*report["errors"], f"the check's results could not be kept: {error}"]


def _progress_of(version_id: int, worker: str, lease_seconds: int) -> Callable[[str], None]:
    """Store each progress line of the check on its version as it comes, renewing the
    lease (committed at once, in a session of its own: the editor polls for them while
    the check runs). A worker that lost the lease writes nothing."""

    def store(line: str) -> None:
        with session_scope() as session:
            session.execute(
                update(ProblemVersion)
                .where(_held_by(version_id, worker))
                .values(
                    check_log=ProblemVersion.check_log + f"{line.rstrip()}\n",
                    check_lease_expires_at=utcnow() + timedelta(seconds=lease_seconds),
                )
                .execution_options(synchronize_session=False)
            )

    return store


def report_of(result: CheckResult) -> dict[str, Any]:
    """A check's report as a version keeps it (the preview shows it)."""
    from grader.check import render

    return {
        "ok": result.ok,
        "errors": result.errors,
        "notes": result.notes,
        "todos": result.todos,
        "cases": result.cases,
        "timings": result.timings,
        "text": render(result, verbose=True),
    }


def record(version: ProblemVersion, report: dict[str, Any]) -> None:
    """Keep ``report`` as the version's check: from a worker's check, or from a
    `jaxjudge check` run on the same content (app/commands/cli.py)."""
    version.check_status = CheckStatus.PASSED if report["ok"] else CheckStatus.FAILED
    version.check_json = json.dumps(report)
    version.checked_at = utcnow()
