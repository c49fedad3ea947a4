"""The platform's words, each said once: a submission's status, an account's role, a
course member's role, a version's check status, a regrade's status and scope.

Stored as their string values (the columns are strings); compared and assigned as
these members. The verdicts are the grader's (grader/child/verdicts.py).
"""

from __future__ import annotations

from enum import StrEnum


class SubmissionStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"  # claimed by a worker under a lease
    DONE = "done"


class Role(StrEnum):
    """What an account may do across the platform."""

    LEARNER = "learner"
    AUTHOR = "author"  # previews, checks and publishes problem versions
    INSTRUCTOR = "instructor"  # creates courses
    ADMIN = "admin"  # everything, and manages accounts


class MemberRole(StrEnum):
    """What a member may do in one course."""

    INSTRUCTOR = "instructor"  # every instructor of a course is its co-instructor
    TEACHING_ASSISTANT = "ta"  # sees and grades; changes neither staff nor the course
    LEARNER = "learner"


STAFF_ROLES = (MemberRole.INSTRUCTOR, MemberRole.TEACHING_ASSISTANT)


class LatePolicy(StrEnum):
    """What a submit after its due date earns (app/reports/deadlines.py)."""

    NONE = "none"  # counts in full, marked late
    CUTOFF = "cutoff"  # counts in full until the cut-off, not at all after
    PENALTY = "penalty"  # loses penalty_percent per started day or hour, down to the floor


class CheckStatus(StrEnum):
    UNCHECKED = "unchecked"
    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"


class RegradeStatus(StrEnum):
    RUNNING = "running"
    READY = "ready"  # every item re-run: waits to be applied or discarded
    APPLIED = "applied"
    DISCARDED = "discarded"


class RegradeScope(StrEnum):
    COURSE = "course"  # only the course that ran it sees the new verdicts
    PLATFORM = "platform"  # the submissions themselves changed


PREVIEW_ROLES = (Role.AUTHOR, Role.INSTRUCTOR, Role.ADMIN)
PUBLISH_ROLES = (Role.AUTHOR, Role.ADMIN)
COURSE_CREATOR_ROLES = (Role.INSTRUCTOR, Role.ADMIN)


# How a track's slug (problem.toml `track`) is written for people; others are
# shown with their hyphens as spaces.
TRACK_TITLES = {
    "gradient-accumulation": "Gradient accumulation",
    "jax-foundations": "JAX foundations",
    "optax-and-flax": "Optax and Flax",
}


def track_title(track: str) -> str:
    return TRACK_TITLES.get(track, track.replace("-", " ").capitalize())
