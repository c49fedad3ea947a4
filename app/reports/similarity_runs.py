"""Similarity reports of an assignment, computed in the background.

Staff start one for an assigned problem; a thread of the server fingerprints each
learner's submit (``accepted``: their latest accepted one in the window; ``final``:
their latest one in the window, whatever its verdict), leaves out the code every
learner was given (the starter file and the statement's code blocks) and keeps the
most similar pairs (app/reports/similarity.py). A report only flags: two learners
may converge on the same short JAX function honestly, and staff decide.

A report still ``running`` after ``STALE`` (its server stopped) counts as failed,
and a new one may be started.

A report is read as the course is now, not as it was computed: a pair is shown
only while the course still counts both its submits (``counted_pairs``), so a
learner removed since, or an assignment taken back, drops out of the list and of
the side-by-side view, as from every other course view."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.data import catalog, courses
from app.data.course_submissions import VERDICT, within
from app.errors import ConflictError, InvalidInputError, NotFoundError
from app.models import Course, SimilarityReport, Submission, User, utcnow
from app.reports import similarity as fingerprints
from app.reports.windows import CourseWindows
from app.vocabulary import SimilarityScope, SimilarityStatus, SubmissionStatus
from grader.child.verdicts import Verdict

log = logging.getLogger(__name__)
STALE = timedelta(minutes=15)
KEPT_PAIRS = 50
CODE_BLOCK = re.compile(r"```(?:python|py)?\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class PairView:
    """One flagged pair as the pages and the API show it."""

    left_submission: int
    right_submission: int
    left_learner: str
    right_learner: str
    similarity: float
    jaccard: float
    left_lines: list[tuple[int, int]]
    right_lines: list[tuple[int, int]]


def start(
    *, session: Session, course: Course, problem: str, scope: str, by: User
) -> SimilarityReport:
    """A new report, ``running``; ``launch`` it once the transaction commits."""
    if scope not in SimilarityScope:
        raise InvalidInputError("A similarity report compares accepted or final submissions.")
    courses.hold(
        session=session, course=course
    )  # two staff starting one at once: the second is told
    busy = session.scalar(
        select(SimilarityReport.id).where(
            SimilarityReport.course_id == course.id,
            SimilarityReport.problem == problem,
            SimilarityReport.status == SimilarityStatus.RUNNING,
            SimilarityReport.created_at > utcnow() - STALE,
        )
    )
    if busy is not None:
        raise ConflictError("A similarity report of this problem is still being computed.")
    report = SimilarityReport(
        course_id=course.id, problem=problem, scope=SimilarityScope(scope), created_by=by.id
    )
    session.add(report)
    session.flush()
    return report


# One report computes at a time in a server, whatever the number of courses asking:
# the others wait (shown as running) rather than take every core from grading.
_ONE_AT_A_TIME = threading.BoundedSemaphore(1)


def launch(report_id: int) -> threading.Thread:
    thread = threading.Thread(target=_in_turn, args=(report_id,), name="similarity", daemon=True)
    thread.start()
    return thread


def _in_turn(report_id: int) -> None:
    with _ONE_AT_A_TIME:
        run(report_id)


def shared_code(*, session: Session, problem: str) -> list[str]:
    """What every learner was given: the starter and the statement's code blocks."""
    live = catalog.live_problem(session=session, slug=problem)
    if live is None:
        return []
    _version, found = live
    return [found.starter, *CODE_BLOCK.findall(found.text("statement.md"))]


def _chosen(session: Session, course: Course, report: SimilarityReport) -> dict[int, Submission]:
    """Per learner, the submit the report compares (see the module's docstring)."""
    windows = CourseWindows(session, course)
    chosen: dict[int, Submission] = {}
    rows = session.execute(
        within(course, Submission, VERDICT)
        .where(Submission.problem == report.problem, Submission.status == SubmissionStatus.DONE)
        .order_by(Submission.id)
    )
    for submission, verdict in rows:
        if not windows.standing(
            submission.user_id, submission.problem, submission.created_at
        ).counts:
            continue
        if report.scope == SimilarityScope.FINAL or verdict == Verdict.ACCEPTED:
            chosen[submission.user_id] = submission
    return chosen


def run(report_id: int) -> None:
    """Compute the report (in its own transactions); a failure is stored on it."""
    began = time.perf_counter()
    try:
        with session_scope() as session:
            report = session.get_one(SimilarityReport, report_id)
            course = session.get_one(Course, report.course_id)
            chosen = _chosen(session, course, report)
            names = {
                u.id: u.name for u in session.scalars(select(User).where(User.id.in_(list(chosen))))
            }
            exclude = fingerprints.shared_code(
                *shared_code(session=session, problem=report.problem)
            )
            by_id = {s.id: s for s in chosen.values()}
            pairs = fingerprints.rank_pairs(
                {s.id: s.code for s in chosen.values()}, exclude=exclude, limit=KEPT_PAIRS
            )
            report.pairs_json = json.dumps(
                [
                    {
                        "left_submission": p.left,
                        "right_submission": p.right,
                        "left_learner": names.get(by_id[p.left].user_id, "?"),
                        "right_learner": names.get(by_id[p.right].user_id, "?"),
                        "similarity": round(p.similarity, 4),
                        "jaccard": round(p.jaccard, 4),
                        "left_lines": p.left_regions,
                        "right_lines": p.right_regions,
                    }
                    for p in pairs
                ]
            )
            report.submissions = len(chosen)
            report.status = SimilarityStatus.READY
            report.finished_at = utcnow()
            report.seconds = round(time.perf_counter() - began, 3)
    except Exception as error:  # stored for staff to see; the server goes on
        log.exception("similarity report %s failed", report_id)
        with session_scope() as session:
            report = session.get_one(SimilarityReport, report_id)
            report.status = SimilarityStatus.FAILED
            report.error = f"{type(error).__name__}: {error}"[:500]
            report.finished_at = utcnow()


def status_of(report: SimilarityReport) -> SimilarityStatus:
    """The report's status, a stale ``running`` one as failed."""
    if report.status == SimilarityStatus.RUNNING and report.created_at < utcnow() - STALE:
        return SimilarityStatus.FAILED
    return SimilarityStatus(report.status)


def counted_pairs(
    *, session: Session, course: Course, report: SimilarityReport
) -> list[tuple[int, PairView]]:
    """The report's pairs whose two submits the course counts now
    (app/data/course_submissions.py), each with its place in the stored report, which
    addresses its side-by-side page whatever pairs before it drop out."""
    pairs = _stored_pairs(report)
    named = {p.left_submission for p in pairs} | {p.right_submission for p in pairs}
    counted = set(session.scalars(within(course, Submission.id).where(Submission.id.in_(named))))
    return [
        (index, pair)
        for index, pair in enumerate(pairs)
        if pair.left_submission in counted and pair.right_submission in counted
    ]


def counted_pair(
    *, session: Session, course: Course, report: SimilarityReport, index: int
) -> PairView:
    """The pair stored at ``index``, while the course counts both its submits."""
    for place, pair in counted_pairs(session=session, course=course, report=report):
        if place == index:
            return pair
    raise NotFoundError(f"No pair {index} in this report.")


def _stored_pairs(report: SimilarityReport) -> list[PairView]:
    rows = json.loads(report.pairs_json or "[]")
    return [
        PairView(
            **{
                **row,
                "left_lines": [tuple(span) for span in row["left_lines"]],
                "right_lines": [tuple(span) for span in row["right_lines"]],
            }
        )
        for row in rows
    ]


def of_problem(*, session: Session, course: Course, problem: str) -> list[SimilarityReport]:
    return list(
        session.scalars(
            select(SimilarityReport)
            .where(SimilarityReport.course_id == course.id, SimilarityReport.problem == problem)
            .order_by(SimilarityReport.id.desc())
            .limit(10)
        )
    )


def in_course(*, session: Session, course: Course, report_id: int) -> SimilarityReport:
    report = session.get(SimilarityReport, report_id)
    if report is None or report.course_id != course.id:
        raise NotFoundError(f"No similarity report {report_id} in this course.")
    return report
