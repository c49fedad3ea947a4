"""Regrading, CMS-style: re-run a course's submissions for one problem against a
chosen version in the background, show whose verdict would change, then apply
or discard. Applying keeps every replaced verdict (`past_verdicts`) with the
version that produced it; discarding changes nothing.

A regrade targets the live version or one whose check passed. Applied by the
course's instructor, it changes only what that course sees (`course_verdicts`,
app/data/course_submissions.py): another course that holds the same submission,
and the learner's own pages, keep their verdict. An author or an admin may
apply it platform-wide instead, which rewrites the submissions themselves.

Manual grades (rubric items, app/data/rubrics.py) stay on the submission they were
given on whatever a regrade does; where the new automatic verdict moves a submission's
total, the preview and the result say so ("manual grades kept: total 2 -> 10 of 10").
"""

from __future__ import annotations

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.data import assignments, lti_scores, notifications, rubrics
from app.data.course_submissions import SCORE, VERDICT, VERSION_ID, within
from app.errors import ConflictError, NotFoundError
from app.models import (
    Assignment,
    Course,
    CourseVerdict,
    PastVerdict,
    ProblemRecord,
    ProblemVersion,
    Regrade,
    RegradeItem,
    Submission,
    User,
    utcnow,
)
from app.schemas.courses import RegradeChange
from app.vocabulary import CheckStatus, RegradeScope, RegradeStatus, SubmissionStatus

PENDING = (RegradeStatus.RUNNING, RegradeStatus.READY)


def in_course(*, session: Session, course: Course, regrade_id: int) -> Regrade:
    """One of the course's regrades; for any other id, NotFoundError."""
    regrade = session.get(Regrade, regrade_id)
    if regrade is None or regrade.course_id != course.id:
        raise NotFoundError(f"No regrade {regrade_id} in this course.")
    return regrade


def start(*, session: Session, course: Course, version: ProblemVersion, by: User) -> Regrade:
    """Queue every graded submit made within the course for the problem, except those
    the chosen version already produced (as the course sees them)."""
    live = session.scalar(
        select(ProblemRecord.live_version_id).where(ProblemRecord.slug == version.slug)
    )
    if version.id != live and version.check_status != CheckStatus.PASSED:
        raise ConflictError(
            f"v{version.number} of {version.slug} is neither live nor checked; an author must"
            " run its check (and it must pass) before a course is regraded against it"
        )
    pending = session.scalar(
        select(Regrade).where(
            Regrade.course_id == course.id,
            Regrade.problem == version.slug,
            Regrade.status.in_(PENDING),
        )
    )
    if pending is not None:
        raise ConflictError(
            f"regrade #{pending.id} of {version.slug} is still {pending.status}; "
            "apply or discard it first"
        )
    submissions = list(
        session.execute(
            within(course, Submission.id, VERDICT, SCORE)
            .where(
                Submission.problem == version.slug,
                Submission.status == SubmissionStatus.DONE,
                VERSION_ID.is_distinct_from(version.id),
            )
            .order_by(Submission.id)
        )
    )
    if not submissions:
        raise ConflictError(
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
            submission_id=submission_id,
            old_verdict=verdict,
            old_score=score,
        )
        for submission_id, verdict, score in submissions
    )
    session.flush()
    return regrade


def finish_if_complete(*, session: Session, item_id: int) -> None:
    item = session.get(RegradeItem, item_id)
    if item is None:
        return
    regrade = session.get_one(Regrade, item.regrade_id)
    done, total = progress(session=session, regrade=regrade)
    if regrade.status == RegradeStatus.RUNNING and done == total:
        regrade.status = RegradeStatus.READY
        session.flush()


def progress(*, session: Session, regrade: Regrade) -> tuple[int, int]:
    rows = dict(
        session.execute(
            select(RegradeItem.status, func.count())
            .where(RegradeItem.regrade_id == regrade.id)
            .group_by(RegradeItem.status)
        ).all()
    )
    return rows.get(SubmissionStatus.DONE, 0), sum(rows.values())


def changes(*, session: Session, regrade: Regrade) -> list[RegradeChange]:
    """Every item, changed verdicts first, then by learner and submission."""
    rows = session.execute(
        select(RegradeItem, Submission.created_at, User.name)
        .join(Submission, Submission.id == RegradeItem.submission_id)
        .join(User, User.id == Submission.user_id)
        .where(RegradeItem.regrade_id == regrade.id)
    ).all()
    course = session.get_one(Course, regrade.course_id)
    assignment = assignments.find(session=session, course=course, problem=regrade.problem)
    by_hand = rubrics.graded_by_hand(
        session=session, course=course, submission_ids=[item.submission_id for item, *_ in rows]
    )
    found = [
        RegradeChange(
            learner=name,
            submission_id=item.submission_id,
            submitted_at=created_at,
            old_verdict=item.old_verdict,
            old_score=item.old_score,
            new_verdict=item.new_verdict,
            new_score=item.new_score,
            manual_note=_manual_note(item, assignment, by_hand.get(item.submission_id)),
        )
        for item, created_at, name in rows
    ]
    return sorted(found, key=lambda c: (not c.changed, c.learner, c.submission_id))


def _manual_note(
    item: RegradeItem, assignment: Assignment | None, graded: tuple[str, float] | None
) -> str | None:
    """What a new automatic verdict does to a submission graded by hand (its rubric
    items stay on it): "manual grades kept: total A -> B of P"; None when it was not
    graded by hand, is not regraded yet, or its total does not move."""
    if graded is None or assignment is None or item.new_verdict is None:
        return None
    most = assignment.max_points

    def total(score: float | None) -> float:
        automatic = score or 0.0
        return (
            rubrics.combined_score(
                automatic=automatic, manual_points=graded[1], assignment=assignment
            )
            * most
        )

    before, after = total(item.old_score), total(item.new_score)
    if round(before, 6) == round(after, 6):
        return None
    return f"manual grades kept: total {before:g} -> {after:g} of {most:g}"


def keep_past_verdict(
    *,
    session: Session,
    submission_id: int,
    shown: Submission | CourseVerdict,
    regrade_id: int | None = None,
) -> None:
    """Record the verdict about to be replaced, with the version that produced it (a
    regrade's, or none for a runtime move: app/grading/runtime_diff.py)."""
    session.add(
        PastVerdict(
            submission_id=submission_id,
            problem_version_id=shown.problem_version_id,
            verdict=shown.verdict,
            score=shown.score,
            result_json=shown.result_json,
            regrade_id=regrade_id,
        )
    )


def apply(*, session: Session, regrade: Regrade, platform_wide: bool = False) -> int:
    """Make the new verdicts current, in the regrade's course (or, ``platform_wide``,
    for everyone: the caller checks that an author or admin asked). Returns how many
    verdicts changed."""
    if regrade.status != RegradeStatus.READY:
        raise ConflictError(
            f"regrade #{regrade.id} is {regrade.status}; only a finished one applies"
        )
    changed = 0
    moved: dict[int, list[notifications.Changed]] = {}
    rows = session.execute(
        select(RegradeItem, Submission, CourseVerdict)
        .join(Submission, Submission.id == RegradeItem.submission_id)
        .outerjoin(
            CourseVerdict,
            (CourseVerdict.submission_id == Submission.id)
            & (CourseVerdict.course_id == regrade.course_id),
        )
        .where(RegradeItem.regrade_id == regrade.id)
    )
    for item, submission, own in rows:
        shown: Submission | CourseVerdict = own if own is not None else submission
        keep_past_verdict(
            session=session, submission_id=submission.id, shown=shown, regrade_id=regrade.id
        )
        changed += shown.verdict != item.new_verdict
        if (shown.verdict, shown.score) != (item.new_verdict, item.new_score):
            moved.setdefault(submission.user_id, []).append(
                notifications.Changed(
                    submission.id, shown.verdict, shown.score, item.new_verdict, item.new_score
                )
            )
        if platform_wide:
            submission.verdict, submission.score = item.new_verdict, item.new_score
            submission.result_json = item.new_result_json
            submission.problem_version_id = regrade.version_id
            # The submission's verdict is now everyone's: no course keeps an older one.
            session.execute(
                delete(CourseVerdict).where(CourseVerdict.submission_id == submission.id)
            )
            continue
        if own is None:
            own = CourseVerdict(course_id=regrade.course_id, submission_id=submission.id)
            session.add(own)
        own.verdict, own.score, own.result_json = (
            item.new_verdict,
            item.new_score,
            item.new_result_json,
        )
        own.problem_version_id, own.regrade_id, own.applied_at = (
            regrade.version_id,
            regrade.id,
            utcnow(),
        )
    # Every learner whose verdict may have moved gets their LMS grade sent again.
    learners = session.scalars(
        select(Submission.user_id)
        .join(RegradeItem, RegradeItem.submission_id == Submission.id)
        .where(RegradeItem.regrade_id == regrade.id)
        .distinct()
    ).all()
    for learner in learners:
        lti_scores.score_changed(session=session, user_id=learner, problem=regrade.problem)
    notifications.regrade_applied(session=session, regrade=regrade, changed=moved)
    regrade.status = RegradeStatus.APPLIED
    regrade.scope = RegradeScope.PLATFORM if platform_wide else RegradeScope.COURSE
    regrade.decided_at = utcnow()
    session.flush()
    return changed


def discard(*, session: Session, regrade: Regrade) -> None:
    """Drop the regrade's results (a running one stops: its waiting items are removed)."""
    if regrade.status not in PENDING:
        raise ConflictError(f"regrade #{regrade.id} is already {regrade.status}")
    session.execute(
        delete(RegradeItem).where(
            RegradeItem.regrade_id == regrade.id, RegradeItem.status != SubmissionStatus.DONE
        )
    )
    regrade.status = RegradeStatus.DISCARDED
    regrade.decided_at = utcnow()
    session.flush()


def of_course(*, session: Session, course: Course) -> list[Regrade]:
    return list(
        session.scalars(
            select(Regrade).where(Regrade.course_id == course.id).order_by(Regrade.id.desc())
        )
    )


def past_verdicts(
    *, session: Session, submission_id: int, course: Course
) -> list[tuple[PastVerdict, int | None]]:
    """Verdicts of a submission that regrades replaced as this course saw them (its own
    regrades and platform-wide ones), with their version numbers, oldest first."""
    rows = session.execute(
        select(PastVerdict, ProblemVersion.number)
        .outerjoin(ProblemVersion, ProblemVersion.id == PastVerdict.problem_version_id)
        .outerjoin(Regrade, Regrade.id == PastVerdict.regrade_id)
        .where(
            PastVerdict.submission_id == submission_id,
            (Regrade.course_id == course.id) | (Regrade.scope == RegradeScope.PLATFORM),
        )
        .order_by(PastVerdict.id)
    )
    return [(past, number) for past, number in rows]
