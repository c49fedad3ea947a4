"""A learner's progress (keyword-only data functions): each problem's status from
their submits (solved, attempted, unseen), the problems they marked complete, and
how far they are through each track.

"Marked complete" is the learner's own word that they are done with a problem
(skipped, or reviewed without submitting); it is kept apart from solved, which
only an accepted submit makes, and never counts as solved in a course's grades.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import bindparam, case, delete, func, literal, select, union_all
from sqlalchemy.orm import Session

from app.data import catalog
from app.models import ProblemMark, Submission, User
from app.vocabulary import ProgressStatus, track_title
from grader.child.verdicts import Mode, Verdict
from grader.problems.problem import Problem

_MARKED, _ATTEMPTED, _SOLVED = 0, 1, 2
# How hard each of problem.toml's difficulties is, for ordering tracks easiest first.
_DIFFICULTY_RANK = {"easy": 0, "medium": 1, "hard": 2}


# Built once (the problem list and the tracks ask on every request): statuses and marks in
# one query, one row per problem the learner touched, not one per submission.
_PROGRESS = union_all(
    select(
        Submission.problem,
        func.max(case((Submission.verdict == Verdict.ACCEPTED, _SOLVED), else_=_ATTEMPTED)),
    )
    .where(Submission.user_id == bindparam("user_id"), Submission.mode == Mode.SUBMIT)
    .group_by(Submission.problem),
    select(ProblemMark.problem, literal(_MARKED)).where(
        ProblemMark.user_id == bindparam("user_id")
    ),
)


def _state(session: Session, user: User) -> tuple[dict[str, ProgressStatus], set[str]]:
    """The learner's statuses and marks (``_PROGRESS``)."""
    found: dict[str, ProgressStatus] = {}
    marked_slugs: set[str] = set()
    for slug, kind in session.execute(_PROGRESS, {"user_id": user.id}):
        if kind == _MARKED:
            marked_slugs.add(slug)
        else:
            found[slug] = ProgressStatus.SOLVED if kind == _SOLVED else ProgressStatus.ATTEMPTED
    return found, marked_slugs


def statuses(*, session: Session, user: User) -> dict[str, ProgressStatus]:
    """Each problem the learner submitted to: solved (an accepted submit) or attempted."""
    return _state(session, user)[0]


def marked(*, session: Session, user: User) -> set[str]:
    return _state(session, user)[1]


def set_marked(*, session: Session, user: User, problem: str, marked: bool) -> None:
    """Mark a published ``problem`` complete, or take the mark back (either again: no
    change), for the page's form and the API alike. A problem that is not published is
    NotFoundError, and nothing is recorded."""
    if catalog.visible_live_problem(session=session, slug=problem, user=user) is None:
        raise catalog.unknown_problem(session=session, slug=problem)
    theirs = (ProblemMark.user_id == user.id, ProblemMark.problem == problem)
    if not marked:
        session.execute(delete(ProblemMark).where(*theirs))
    elif session.scalar(select(ProblemMark.id).where(*theirs)) is None:
        session.add(ProblemMark(user_id=user.id, problem=problem))
        session.flush()


@dataclass(frozen=True)
class ProblemProgress:
    problem: Problem
    status: ProgressStatus
    marked: bool

    @property
    def done(self) -> bool:
        """Solved, or set aside by the learner: not what to do next."""
        return self.status == ProgressStatus.SOLVED or self.marked


@dataclass(frozen=True)
class TrackProgress:
    track: str
    problems: list[ProblemProgress]

    @property
    def total(self) -> int:
        return len(self.problems)

    @property
    def solved(self) -> int:
        return sum(p.status == ProgressStatus.SOLVED for p in self.problems)

    @property
    def marked_only(self) -> int:
        """Marked complete and not solved (a solved problem counts once, as solved)."""
        return sum(p.marked and p.status != ProgressStatus.SOLVED for p in self.problems)

    @property
    def percent_done(self) -> int:
        done = self.solved + self.marked_only
        return round(100 * done / self.total) if self.total else 0

    @property
    def ease(self) -> tuple[float, str]:
        """Sorts tracks easiest first: the mean of their problems' difficulties, then title."""
        ranks = [_DIFFICULTY_RANK[p.problem.config.difficulty] for p in self.problems]
        return (sum(ranks) / len(ranks) if ranks else 0.0, track_title(self.track))

    @property
    def next_problem(self) -> Problem | None:
        """The first problem, by position, neither solved nor marked complete."""
        return next((p.problem for p in self.problems if not p.done), None)


def live_tracks(*, session: Session, user: User) -> list[TrackProgress]:
    """Every published problem, grouped by track, with ``user``'s progress."""
    return tracks(session=session, user=user, problems=catalog.live_problem_list(session=session))


def tracks(*, session: Session, user: User, problems: list[Problem]) -> list[TrackProgress]:
    """``problems`` (by track and position) grouped by track with the learner's progress,
    the easiest track first (``TrackProgress.ease``): a new learner's first page starts
    with the track that asks least."""
    found, marks = _state(session, user)
    grouped: dict[str, list[ProblemProgress]] = {}
    for problem in problems:
        grouped.setdefault(problem.config.track, []).append(
            ProblemProgress(
                problem, found.get(problem.slug, ProgressStatus.UNSEEN), problem.slug in marks
            )
        )
    return sorted(
        (TrackProgress(track, items) for track, items in grouped.items()), key=lambda t: t.ease
    )


def starting_point(found: list[TrackProgress]) -> Problem | None:
    """Where a learner who has done nothing yet starts: the first problem of the easiest
    track. None once they solved, attempted or marked anything."""
    if not found or any(
        p.status != ProgressStatus.UNSEEN or p.marked for t in found for p in t.problems
    ):
        return None
    return found[0].problems[0].problem if found[0].problems else None
