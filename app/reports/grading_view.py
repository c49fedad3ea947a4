"""The grading view's read model: for one assignment, each learner of the course with
the submission staff grade by hand, its automatic score, the rubric's points on it,
the two combined, and who graded it; for one submission, all a grader needs beside
its code. And what a learner reads of it: the items applied to their submission and
the combined score.

Which submission is a learner's to grade: one already graded by hand among the
submits that count (the latest such), else the counted submit with the best automatic
score after the late policy (the latest of equals: the learner's final word), else
their latest submit of any kind. Applying an item never moves a learner to another
submission."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from app.data import comments, courses, rubrics
from app.models import (
    Assignment,
    Course,
    ManualGrading,
    RubricApplication,
    RubricItem,
    Submission,
    SubmissionComment,
    User,
)
from app.reports import gradebook, timeline
from app.reports.timeline import TimelineEntry
from app.vocabulary import SubmissionStatus

Applied = list[tuple[RubricApplication, RubricItem]]


@dataclass(frozen=True)
class Grading:
    """A submission's hand grading: the items on it, their points, who graded it."""

    assignment: Assignment
    auto_score: float | None  # 0..1, the course's verdict's (None before it is graded)
    applied: Applied
    graded: ManualGrading | None

    @property
    def manual_points(self) -> float:
        return rubrics.manual_points(self.applied)

    @property
    def combined(self) -> float | None:
        """0..1 of the assignment's points, as the grade book counts this submission."""
        if self.auto_score is None and self.graded is None:
            return None
        return gradebook.combined_score(
            automatic=self.auto_score or 0.0,
            manual_points=self.manual_points if self.graded is not None else None,
            assignment=self.assignment,
        )

    @property
    def appliers(self) -> list[str]:
        return sorted({application.applied_by_name for application, _item in self.applied})


@dataclass(frozen=True)
class Row:
    """One learner on the assignment: the submission to grade (None: nothing submitted)."""

    learner: User
    entry: TimelineEntry | None
    grading: Grading | None


@dataclass(frozen=True)
class Queue:
    assignment: Assignment
    rows: list[Row]

    def neighbours(self, submission_id: int) -> tuple[Row | None, Row | None]:
        """The previous and the next learner with a submission, around this one's."""
        graded = [row for row in self.rows if row.entry is not None]
        ids = [row.entry.submission.id for row in graded if row.entry is not None]
        if submission_id not in ids:
            return None, None
        at = ids.index(submission_id)
        return (graded[at - 1] if at > 0 else None), (
            graded[at + 1] if at + 1 < len(graded) else None
        )


def queue(*, session: Session, course: Course, assignment: Assignment) -> Queue:
    """Every learner of the course, by name, with their submission to grade."""
    learners = courses.learners_of(session=session, course=course)
    entries = [
        entry
        for entry in timeline.course_submits(
            session=session, course=course, user_ids=None, newest_first=False
        )
        if entry.submission.problem == assignment.problem
    ]
    ids = [entry.submission.id for entry in entries]
    marked = rubrics.gradings(session=session, submission_ids=ids, course=course)
    picked = {user.id: _to_grade(user.id, entries, marked) for user in learners}
    chosen = [entry.submission.id for entry in picked.values() if entry is not None]
    applied = rubrics.applied(session=session, submission_ids=chosen, course=course)
    rows = []
    for learner in learners:
        entry = picked[learner.id]
        grading = None
        if entry is not None:
            grading = _grading(assignment, entry, applied, marked)
        rows.append(Row(learner, entry, grading))
    return Queue(assignment, rows)


def _to_grade(
    user_id: int, entries: list[TimelineEntry], marked: dict[int, ManualGrading]
) -> TimelineEntry | None:
    theirs = [entry for entry in entries if entry.submission.user_id == user_id]  # oldest first
    counted = [
        entry
        for entry in theirs
        if entry.standing.counts and entry.submission.status == SubmissionStatus.DONE
    ]
    by_hand = [entry for entry in counted if entry.submission.id in marked]
    if by_hand:
        return by_hand[-1]
    if counted:
        return max(
            reversed(counted), key=lambda entry: (entry.score or 0.0) * entry.standing.factor
        )
    return theirs[-1] if theirs else None


def _grading(
    assignment: Assignment,
    entry: TimelineEntry,
    applied: dict[int, Applied],
    marked: dict[int, ManualGrading],
) -> Grading:
    done = entry.submission.status == SubmissionStatus.DONE
    return Grading(
        assignment=assignment,
        auto_score=(entry.score or 0.0) if done else None,
        applied=applied.get(entry.submission.id, []),
        graded=marked.get(entry.submission.id),
    )


@dataclass(frozen=True)
class LineComments:
    """A submission's comments as its code view shows them: on the whole, or after the
    last line of the range each is anchored to."""

    whole: list[SubmissionComment] = field(default_factory=list)
    after_line: dict[int, list[SubmissionComment]] = field(default_factory=dict)
    commented: set[int] = field(default_factory=set)  # lines inside some comment's range


def by_line(found: list[SubmissionComment]) -> LineComments:
    view = LineComments()
    for comment in found:
        if comment.line_start is None or comment.line_end is None:
            view.whole.append(comment)
            continue
        view.after_line.setdefault(comment.line_end, []).append(comment)
        view.commented.update(range(comment.line_start, comment.line_end + 1))
    return view


def learner_gradings(*, session: Session, submissions: list[Submission]) -> dict[int, Grading]:
    """What a learner reads of the hand grading of their submissions: per submission with
    rubric activity, its applied items and the combined score (of the assignment the
    items belong to; the course's own verdict is the learner's here too)."""
    ids = [submission.id for submission in submissions]
    applied = rubrics.applied(session=session, submission_ids=ids)
    marked = rubrics.gradings(session=session, submission_ids=ids)
    found = {}
    for submission in submissions:
        on_it = applied.get(submission.id, [])
        if not on_it:
            continue
        assignment = session.get_one(Assignment, on_it[0][1].assignment_id)
        done = submission.status == SubmissionStatus.DONE
        found[submission.id] = Grading(
            assignment=assignment,
            auto_score=(submission.score or 0.0) if done else None,
            applied=[(a, item) for a, item in on_it if item.assignment_id == assignment.id],
            graded=marked.get(submission.id),
        )
    return found


def submission_grading(
    *, session: Session, course: Course, assignment: Assignment, submission: Submission
) -> tuple[TimelineEntry | None, Grading]:
    """One submission as the course sees it (its verdict may be a course regrade's) and
    its hand grading."""
    entry = next(
        (
            found
            for found in timeline.course_submits(
                session=session, course=course, user_ids=[submission.user_id], newest_first=True
            )
            if found.submission.id == submission.id
        ),
        None,
    )
    ids = [submission.id]
    graded = Grading(
        assignment=assignment,
        auto_score=None if entry is None or entry.verdict is None else (entry.score or 0.0),
        applied=rubrics.applied(session=session, submission_ids=ids, course=course).get(
            submission.id, []
        ),
        graded=rubrics.gradings(session=session, submission_ids=ids, course=course).get(
            submission.id
        ),
    )
    return entry, graded


def staff_comments(
    *, session: Session, course: Course, submission: Submission
) -> list[SubmissionComment]:
    """The course staff's comments on the submission, oldest first."""
    found = comments.on_submissions(session=session, submission_ids=[submission.id], course=course)
    return found.get(submission.id, [])
