"""The platform's words, each said once: a submission's status, an account's role, a
course member's role, a version's check status, a regrade's status and scope, a
learner's progress on a problem, a grade-book cell's status, an LMS grade's place in
the outbox, and a similarity report's status and scope.

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
    """A version's check (app/grading/author_checks.py): queued until a worker claims it."""

    UNCHECKED = "unchecked"
    QUEUED = "queued"  # waits for a worker: neither finished nor failed
    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"


class ProductKind(StrEnum):
    """What a passing check of a course problem's version produced and the version keeps
    (app/models.py ``ProblemVersionProduct``): its case bank, its expected outputs, and
    expected outputs a worker derived on another device or runtime, accepted because they
    agree with the check's (grader/expected.py ``derive``)."""

    CASES = "cases"
    EXPECTED = "expected"
    DERIVED = "derived"


class RegradeStatus(StrEnum):
    RUNNING = "running"
    READY = "ready"  # every item re-run: waits to be applied or discarded
    APPLIED = "applied"
    DISCARDED = "discarded"


class RegradeScope(StrEnum):
    """Where an applied regrade's verdicts hold (app/data/regrades.py)."""

    COURSE = "course"  # only the course that ran it sees the new verdicts
    PLATFORM = "platform"  # the submissions themselves changed


class ProgressStatus(StrEnum):
    """A problem as the learner's own submits leave it, any course aside
    (app/data/progress.py); marking it complete is kept apart."""

    SOLVED = "solved"  # an accepted submit
    ATTEMPTED = "attempted"  # submitted, nothing accepted
    UNSEEN = "unseen"  # never submitted


class GradeStatus(StrEnum):
    """A learner on an assigned problem as the course counts it (app/reports/gradebook.py)."""

    SOLVED = "solved"
    LATE = "late"  # solved, only late
    ATTEMPTED = "attempted"
    NOT_STARTED = "not started"  # no submit that counts


class OutboxStatus(StrEnum):
    """A row of an outbox: a learner's grade for the LMS (app/lti/outbox.py), or a mail
    (app/mail/delivery.py)."""

    PENDING = "pending"  # to be sent (again): armed, or retried after a failure
    SENT = "sent"
    FAILED = "failed"  # given up on: the platform refused, or too many tries


class SimilarityStatus(StrEnum):
    """A similarity report's (app/reports/similarity_runs.py)."""

    RUNNING = "running"
    READY = "ready"
    FAILED = "failed"  # stored with its error, or still running after its server stopped


class SimilarityScope(StrEnum):
    """Which submit of each learner a similarity report compares."""

    ACCEPTED = "accepted"  # their latest accepted one in the window
    FINAL = "final"  # their latest one in the window, whatever its verdict


class MailKind(StrEnum):
    """What a mail in the outbox is for (app/data/mail.py); notifications carry a
    switch each on the account page (``NotificationKind``)."""

    PASSWORD_RESET = "password-reset"
    EMAIL_VERIFICATION = "email-verification"
    COMMENT = "comment"
    REGRADE = "regrade"
    EXTENSION = "extension"
    DEADLINE_DIGEST = "deadline-digest"
    TEST = "test"  # `jaxjudge mail test`: does mail reach an address


class NotificationKind(StrEnum):
    """A notification an account can turn off (each a ``User.notify_*`` column)."""

    COMMENT = "comment"  # a staff comment on your submission
    REGRADE = "regrade"  # a regrade changed your verdict or score
    EXTENSION = "extension"  # an extension granted to you
    DEADLINE = "deadline"  # the daily digest of assignments due within 24 h


class OneTimeLinkPurpose(StrEnum):
    """What a single-use link mailed (or printed for an admin) does (app/data/one_time_links.py)."""

    RESET_PASSWORD = "reset-password"
    VERIFY_EMAIL = "verify-email"


class SignInProtocol(StrEnum):
    """How an external identity provider signs people in (app/sso/)."""

    OIDC = "oidc"
    SAML = "saml"


class IdSource(StrEnum):
    """Where an account's own email or student id came from; the export says it per row
    (app/reports/export_ids.py). The instructor's mapping and the course's LMS are
    kept apart from the account (CourseMember.student_id, LtiAccount.email)."""

    NONE = ""  # nothing set
    SELF_DECLARED = "self"  # typed by the learner, unverified
    VERIFIED = "verified"  # an email whose link the learner followed
    SSO = "sso"  # from the university's identity provider (OIDC claim or SAML attribute)
    LMS = "lms"  # from an LMS launch


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


class RubricMode(StrEnum):
    """How an assignment's rubric items meet its automatic score (app/reports/gradebook.py)."""

    ADDED = "added"  # the items' points are added to the automatic points (capped 0..max)
    REPLACING = "replacing"  # once graded by hand, the items' points alone are the score


class RubricAction(StrEnum):
    """One line of a rubric's audit trail (app/data/rubrics.py)."""

    ITEM_CREATED = "item created"
    ITEM_CHANGED = "item changed"
    ITEM_REMOVED = "item removed"
    APPLIED = "applied"
    UNAPPLIED = "unapplied"
    MARKED_GRADED = "marked graded"
