"""Authors' checks of a synced version: `jaxjudge check` (grader/check.py, which this
module only runs) in the background on the version's snapshot, its report stored with
the version for the preview page."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.data import catalog, check_products
from app.grading import preparation
from app.models import ProblemVersion, utcnow
from app.vocabulary import CheckStatus

if TYPE_CHECKING:
    from grader.check import CheckResult
    from grader.problems.problem import Problem

log = logging.getLogger("jaxjudge.authoring")
_one_at_a_time = threading.Lock()  # checks are CPU-heavy: never two at once per process


def request_check(session: Session, *, version: ProblemVersion) -> bool:
    """Mark the version as being checked; False if a check is running. The caller
    commits, then starts it (``start_check``): a check that finished before "running"
    was committed would be overwritten by it, and the page right after must show it."""
    if version.check_status == CheckStatus.RUNNING:
        return False
    version.check_status = CheckStatus.RUNNING
    version.check_log = ""  # the new check's lines only
    session.flush()
    return True


def start_check(version_id: int) -> None:
    """Run the check of a version marked (and committed) as being checked, in the background."""
    threading.Thread(
        target=run_check, args=(version_id,), name=f"jaxjudge-check-{version_id}", daemon=True
    ).start()


def run_check(version_id: int) -> None:
    from grader.check import check_problem

    with _one_at_a_time:
        with session_scope() as session:
            version = session.get_one(ProblemVersion, version_id)
            problem = catalog.problem_of(version)
        try:
            # A course's problem is checked as it loaded: untrusted, every piece of its
            # author's code in a sandbox (grader/author_code.py).
            result = check_problem(
                problem.folder, trusted=problem.trusted, progress=_progress_of(version_id)
            )
            report = report_of(result)
        except Exception as error:  # a broken problem must not leave the version "running"
            log.exception("check of version %s failed", version_id)
            report = {"ok": False, "errors": [f"the check itself failed: {error!r}"], "notes": [],
                      "timings": {}, "text": ""}  # fmt: skip
        with session_scope() as session:
            if report["ok"] and not problem.trusted:
                _keep_products(session, version_id, problem, report)
            record(session.get_one(ProblemVersion, version_id), report)
    # The check ran the reference: store the version's samples for its preview now.
    try:
        preparation.prepare_version(version_id)
    except Exception:  # the preview says the samples are being prepared; the preparer retries
        log.exception("storing the samples of version %s failed", version_id)


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


def _progress_of(version_id: int) -> Callable[[str], None]:
    """Store each progress line of the check on its version as it comes (committed at
    once, in a session of its own: the editor polls for them while the check runs)."""

    def store(line: str) -> None:
        with session_scope() as session:
            version = session.get_one(ProblemVersion, version_id)
            version.check_log = f"{version.check_log}{line.rstrip()}\n"

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
    """Keep ``report`` as the version's check: from the background check, or from a
    `jaxjudge check` run on the same content (app/commands/cli.py)."""
    version.check_status = CheckStatus.PASSED if report["ok"] else CheckStatus.FAILED
    version.check_json = json.dumps(report)
    version.checked_at = utcnow()


def forget_interrupted_checks(session: Session) -> None:
    """At start: a check that was running when the server stopped will never finish."""
    session.execute(
        update(ProblemVersion)
        .where(ProblemVersion.check_status == CheckStatus.RUNNING)
        .values(check_status=CheckStatus.UNCHECKED)
    )
