"""Every learner's window on every assignment of a course, read once: the
assignments, the learners' groups and the extensions (app/reports/deadlines.py
does the maths)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.data import assignments, extensions, members
from app.models import Assignment, Course, CourseMember, User
from app.reports import deadlines
from app.vocabulary import MemberRole


class CourseWindows:
    def __init__(self, session: Session, course: Course) -> None:
        self.assignments = {
            a.problem: a for a in assignments.assignments_of(session=session, course=course)
        }
        self._groups = members.groups_of(session=session, course=course)
        self._counted_from = members.counted_from(session=session, course=course)
        self._granted = extensions.Granted(extensions.of_course(session=session, course=course))
        self._found: dict[tuple[int, str], deadlines.Deadline] = {}

    def of(self, user_id: int, problem: str) -> deadlines.Deadline:
        key = (user_id, problem)
        if key not in self._found:
            extended = self._granted.learner_due(
                user_id=user_id, group=self._groups.get(user_id, ""), problem=problem
            )
            self._found[key] = deadlines.deadline_for(
                self.assignments[problem], extended, self._counted_from.get(user_id)
            )
        return self._found[key]

    def standing(self, user_id: int, problem: str, submitted_at: datetime) -> deadlines.Standing:
        window = self.of(user_id, problem)
        return deadlines.standing(self.assignments[problem], window, submitted_at)


@dataclass(frozen=True)
class LearnerDeadline:
    """A learner's deadline for a problem in one of their courses."""

    course: Course
    window: deadlines.Deadline
    policy: str


def learner_deadlines(*, session: Session, user: User, problem: str) -> list[LearnerDeadline]:
    """For the problem page: the learner's window on ``problem`` in each course that
    assigns it to them."""
    found = []
    for course in session.scalars(
        select(Course)
        .join(CourseMember, CourseMember.course_id == Course.id)
        .join(Assignment, Assignment.course_id == Course.id)
        .where(
            CourseMember.user_id == user.id,
            CourseMember.role == MemberRole.LEARNER,
            Assignment.problem == problem,
            Assignment.removed_at.is_(None),
        )
        .order_by(Course.id)
    ):
        windows = CourseWindows(session, course)
        found.append(
            LearnerDeadline(
                course,
                windows.of(user.id, problem),
                deadlines.describe(windows.assignments[problem]),
            )
        )
    return found
