"""Database models (SQLAlchemy 2). Schema changes go through migrations/."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import ForeignKey, Index, LargeBinary, String, Text, UniqueConstraint, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from app.vocabulary import (
    CheckStatus,
    IdSource,
    LatePolicy,
    OutboxStatus,
    RegradeStatus,
    Role,
    RubricMode,
    SimilarityStatus,
    SubmissionStatus,
)


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)  # stored naive, always UTC


class Base(DeclarativeBase):
    pass


ROLES = tuple(Role)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    # NFKC + case-folded: unique, so "Alice" (or full-width "alice") cannot sit beside "alice".
    canonical_name: Mapped[str] = mapped_column(String(80), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16), default=Role.LEARNER)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Disabled accounts: every session and token stops working at once.
    disabled_at: Mapped[datetime | None] = mapped_column(default=None)
    # Per-account sign-in delay (app/data/accounts.py): exponential, never permanent.
    failed_sign_ins: Mapped[int] = mapped_column(default=0)
    sign_in_blocked_until: Mapped[datetime | None] = mapped_column(default=None)
    # For grade exports: set by the learner (account page) or by an LMS launch.
    display_name: Mapped[str] = mapped_column(String(120), default="")
    email: Mapped[str] = mapped_column(String(254), default="")
    student_id: Mapped[str] = mapped_column(String(64), default="")
    # IdSource of each; an email is used (exports, notifications, reset) only once
    # verified (a followed link) or given by the identity provider.
    email_source: Mapped[str] = mapped_column(String(16), default=IdSource.NONE)
    email_verified_at: Mapped[datetime | None] = mapped_column(default=None)
    student_id_source: Mapped[str] = mapped_column(String(16), default=IdSource.NONE)
    # Notifications by email (NotificationKind), each switched off here.
    notify_comment: Mapped[bool] = mapped_column(default=True)
    notify_regrade: Mapped[bool] = mapped_column(default=True)
    notify_extension: Mapped[bool] = mapped_column(default=True)
    notify_deadline: Mapped[bool] = mapped_column(default=True)
    # When the last daily digest of due assignments went out.
    deadline_digest_at: Mapped[datetime | None] = mapped_column(default=None)


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100), default="")
    # Only a SHA-256 of the token is stored; the token is shown once.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(default=None)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)


class WebSession(Base):
    """A signed-in browser. The cookie holds only a random id (stored here hashed), so
    signing out, a password change or a disabled account end it everywhere at once."""

    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    user_agent: Mapped[str] = mapped_column(String(200), default="")


class Submission(Base):
    """A submission, stored before it is graded; the queue is this table."""

    __tablename__ = "submissions"
    __table_args__ = (
        Index("ix_submissions_claim", "status", "id"),
        Index("ix_submissions_user_problem", "user_id", "problem", "id"),
        UniqueConstraint("user_id", "client_key", name="uq_submissions_user_client_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    problem: Mapped[str] = mapped_column(String(100))
    mode: Mapped[str] = mapped_column(String(8))  # run | submit
    code: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(8), default=SubmissionStatus.QUEUED)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    lease_owner: Mapped[str | None] = mapped_column(String(64), default=None)
    lease_expires_at: Mapped[datetime | None] = mapped_column(default=None)
    attempts: Mapped[int] = mapped_column(default=0)
    verdict: Mapped[str | None] = mapped_column(String(32), default=None)
    score: Mapped[float | None] = mapped_column(default=None)
    result_json: Mapped[str | None] = mapped_column(Text, default=None)
    # While its hidden cases run: the samples' reports, written once the child has
    # answered every sample (app/grading/worker.py), shown to the learner at once.
    samples_json: Mapped[str | None] = mapped_column(Text, default=None)
    # The problem version it was (or will be) graded against; null before versioning.
    problem_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("problem_versions.id"), default=None
    )
    # Secret random draw choosing the hidden inputs: variant = draw % the
    # version's variants (grader/cases.py). Kept so a regrade meets the same
    # inputs; never shown to the learner. Null before variants (variant 0).
    hidden_draw: Mapped[int | None] = mapped_column(default=None)
    # The client's Idempotency-Key: a retried POST returns this submission again.
    client_key: Mapped[str | None] = mapped_column(String(64), default=None)


class QuizAnswer(Base):
    """A learner's answer to one quiz question: the first one counts (the explanations
    are shown after it, so a second answer would be a copy of them)."""

    __tablename__ = "quiz_answers"
    __table_args__ = (UniqueConstraint("user_id", "problem", "question"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    problem: Mapped[str] = mapped_column(String(100), index=True)
    question: Mapped[str] = mapped_column(String(40))
    picked: Mapped[str] = mapped_column(String(40))  # the choices' indices, "0,2"
    correct: Mapped[bool]
    answered_at: Mapped[datetime] = mapped_column(default=utcnow)


class ProblemMark(Base):
    """A learner marked a problem complete: skipped or reviewed on purpose, kept apart
    from solved (which only an accepted submit makes)."""

    __tablename__ = "problem_marks"
    __table_args__ = (UniqueConstraint("user_id", "problem"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    problem: Mapped[str] = mapped_column(String(100))
    marked_at: Mapped[datetime] = mapped_column(default=utcnow)


class HintReveal(Base):
    """How many of a problem's hints a learner has revealed (they stay revealed)."""

    __tablename__ = "hint_reveals"
    __table_args__ = (UniqueConstraint("user_id", "problem"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    problem: Mapped[str] = mapped_column(String(100))
    revealed: Mapped[int] = mapped_column(default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class Course(Base):
    __tablename__ = "courses"
    # An id is never given to a second course (SQLite reuses the highest deleted one
    # without it): course problems' slugs (``c<id>-...``) outlive their course.
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120))
    join_code: Mapped[str] = mapped_column(String(16), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Joining with the code asks for a student id first (kept as self-declared).
    requires_student_id: Mapped[bool] = mapped_column(default=False)


class CourseMember(Base):
    __tablename__ = "course_members"
    __table_args__ = (UniqueConstraint("course_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(16))  # MemberRole: instructor | ta | learner
    # A learner without an Enrolment (added by name) counts only their work from then.
    joined_at: Mapped[datetime] = mapped_column(default=utcnow)
    group_name: Mapped[str] = mapped_column(String(60), default="")  # a section, for extensions
    student_id: Mapped[str] = mapped_column(String(64), default="")  # the instructor's mapping


class Enrolment(Base):
    """A learner enrolled themselves in a course: joined with its code, or was enrolled
    by its LMS (a launch, a roster). All their work in an assignment's window then
    counts, whenever they joined; without one (added by name by an instructor) only
    their work from ``CourseMember.joined_at`` does, so typing an account's name into a
    course cannot open its earlier code (app/data/course_submissions.py). Kept when
    the membership is removed: adding them back restores their grades."""

    __tablename__ = "course_enrolments"
    __table_args__ = (UniqueConstraint("course_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    how: Mapped[str] = mapped_column(String(8))  # code | lms
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Assignment(Base):
    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("course_id", "problem"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"), index=True)
    problem: Mapped[str] = mapped_column(String(100))
    # The window (app/reports/deadlines.py): submits from opens_at count, late after
    # due_at under the late policy; all times naive UTC.
    assigned_at: Mapped[datetime] = mapped_column(default=utcnow)
    opens_at: Mapped[datetime] = mapped_column(default=utcnow)
    due_at: Mapped[datetime | None] = mapped_column(default=None)
    late_policy: Mapped[str] = mapped_column(String(16), default=LatePolicy.NONE)
    late_cutoff_at: Mapped[datetime | None] = mapped_column(default=None)
    penalty_percent: Mapped[float] = mapped_column(default=0.0)  # per started unit late
    penalty_unit: Mapped[str] = mapped_column(String(8), default="day")  # day | hour
    penalty_floor_percent: Mapped[float] = mapped_column(default=0.0)  # the least kept
    max_points: Mapped[float] = mapped_column(default=10.0)
    removed_at: Mapped[datetime | None] = mapped_column(default=None)  # unassigned, kept
    # The notebook this assignment is part of: the course's assignments with the same
    # name are one notebook, submitted as one upload (one submission per problem).
    notebook: Mapped[str | None] = mapped_column(String(100), default=None)
    # How its rubric items meet the automatic score (RubricMode).
    rubric_mode: Mapped[str] = mapped_column(String(16), default=RubricMode.ADDED)


class Extension(Base):
    """A later due date for one learner, or for a group of the course's learners
    (``user_id`` None, ``group_name`` set). A learner gets the later of their own and
    their group's."""

    __tablename__ = "extensions"
    __table_args__ = (
        # One extension per learner, and one per group, on an assignment: two grants
        # at once cannot leave two rows.
        Index(
            "ux_extensions_learner",
            "course_id",
            "problem",
            "user_id",
            unique=True,
            sqlite_where=text("user_id IS NOT NULL"),
            postgresql_where=text("user_id IS NOT NULL"),
        ),
        Index(
            "ux_extensions_group",
            "course_id",
            "problem",
            "group_name",
            unique=True,
            sqlite_where=text("user_id IS NULL"),
            postgresql_where=text("user_id IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    problem: Mapped[str] = mapped_column(String(100))
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), default=None
    )
    group_name: Mapped[str] = mapped_column(String(60), default="")
    due_at: Mapped[datetime]
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ScoreOverride(Base):
    """Staff set a learner's score on an assignment, with a reason. Rows are never
    changed or deleted: the newest is in force (``score`` None: back to the computed
    score), and all of them are the audit trail."""

    __tablename__ = "score_overrides"
    __table_args__ = (Index("ix_score_overrides_course", "course_id", "problem", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    problem: Mapped[str] = mapped_column(String(100))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    score: Mapped[float | None]  # 0-1 of the assignment's points
    old_score: Mapped[float | None]  # the final score it replaced
    reason: Mapped[str] = mapped_column(Text)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_by_name: Mapped[str] = mapped_column(String(64))  # kept if the account goes
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SubmissionComment(Base):
    """A course's staff comment on a learner's submission; the learner reads it."""

    __tablename__ = "submission_comments"

    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    author_name: Mapped[str] = mapped_column(String(64))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The lines of the submitted code it is about (1-based, inclusive); None: the whole.
    line_start: Mapped[int | None] = mapped_column(default=None)
    line_end: Mapped[int | None] = mapped_column(default=None)


class RubricItem(Base):
    """One item of an assignment's rubric: points (negative: a deduction) and what it
    means. An applied item counts with its current points, so a change reaches every
    submission it was applied to; a removed item is kept (its audit rows name it) and
    counts no more."""

    __tablename__ = "rubric_items"

    id: Mapped[int] = mapped_column(primary_key=True)
    assignment_id: Mapped[int] = mapped_column(
        ForeignKey("assignments.id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(default=0)
    points: Mapped[float]
    description: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    removed_at: Mapped[datetime | None] = mapped_column(default=None)


class RubricApplication(Base):
    """A rubric item applied to one submission. One row per (submission, item): two
    graders applying different items never touch each other's rows, and applying the
    same item twice is one row."""

    __tablename__ = "rubric_applications"
    __table_args__ = (UniqueConstraint("submission_id", "item_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    item_id: Mapped[int] = mapped_column(ForeignKey("rubric_items.id", ondelete="CASCADE"))
    applied_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    applied_by_name: Mapped[str] = mapped_column(String(64))
    applied_at: Mapped[datetime] = mapped_column(default=utcnow)


class ManualGrading(Base):
    """A submission staff have graded by hand (who, when): the grading view's "graded"
    mark, and what makes a REPLACING rubric replace the automatic score."""

    __tablename__ = "manual_gradings"

    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), primary_key=True
    )
    graded_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    graded_by_name: Mapped[str] = mapped_column(String(64))
    graded_at: Mapped[datetime] = mapped_column(default=utcnow)


class RubricEvent(Base):
    """The rubric's audit trail, appended to and never changed: items made, changed,
    removed; items applied to and taken off a submission; a submission marked graded."""

    __tablename__ = "rubric_events"
    __table_args__ = (Index("ix_rubric_events_assignment", "assignment_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id", ondelete="CASCADE"))
    item_id: Mapped[int | None] = mapped_column(
        ForeignKey("rubric_items.id", ondelete="SET NULL"), default=None
    )
    submission_id: Mapped[int | None] = mapped_column(
        ForeignKey("submissions.id", ondelete="SET NULL"), default=None
    )
    action: Mapped[str] = mapped_column(String(16))  # RubricAction
    detail: Mapped[str] = mapped_column(Text, default="")  # e.g. "-1 -> -2: style"
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_by_name: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SimilarityReport(Base):
    """The most similar pairs among an assignment's submissions, computed in the
    background (app/reports/similarity_runs.py)."""

    __tablename__ = "similarity_reports"

    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    problem: Mapped[str] = mapped_column(String(100))
    scope: Mapped[str] = mapped_column(String(16))  # a SimilarityScope
    status: Mapped[str] = mapped_column(String(16), default=SimilarityStatus.RUNNING)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    submissions: Mapped[int] = mapped_column(default=0)
    seconds: Mapped[float | None] = mapped_column(default=None)
    pairs_json: Mapped[str | None] = mapped_column(Text, default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None)


class ProblemVersion(Base):
    """One snapshot of a problem folder and its reference, by content hash."""

    __tablename__ = "problem_versions"
    __table_args__ = (UniqueConstraint("slug", "number"), UniqueConstraint("slug", "content_hash"))

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(100), index=True)
    number: Mapped[int]  # 1, 2, ... per problem
    content_hash: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(String(120))
    files_json: Mapped[str] = mapped_column(Text)  # grader.problems.snapshot.encode
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    check_status: Mapped[str] = mapped_column(String(16), default=CheckStatus.UNCHECKED)
    # unchecked | queued | running | passed | failed
    check_json: Mapped[str | None] = mapped_column(Text, default=None)
    checked_at: Mapped[datetime | None] = mapped_column(default=None)
    # What the problem page shows of the samples (grader.judging.samples), once the
    # version's trusted run is done; or why that run failed.
    samples_json: Mapped[str | None] = mapped_column(Text, default=None)
    samples_error: Mapped[str | None] = mapped_column(Text, default=None)
    # Who made this version in the browser or by an import (None: synced from disk).
    author_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    # The check's progress, one line per step, while it runs and after (the editor shows it).
    check_log: Mapped[str] = mapped_column(Text, default="")
    # The worker running the check, and until when (app/grading/author_checks.py).
    check_lease_owner: Mapped[str | None] = mapped_column(String(64), default=None)
    check_lease_expires_at: Mapped[datetime | None] = mapped_column(default=None)


class ProblemVersionProduct(Base):
    """What a passing check of a course problem's version produced from its author's
    code, kept with the version: the case bank (``device`` empty) and the expected
    outputs on the check's device. Graders restore these into their caches and never run
    the author's code again outside a check (docs/security.md)."""

    __tablename__ = "problem_version_products"
    __table_args__ = (UniqueConstraint("version_id", "kind", "device", "runtime_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(
        ForeignKey("problem_versions.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(16))  # app.vocabulary.ProductKind
    device: Mapped[str] = mapped_column(String(16), default="")
    # What the grader's cache key says of the runtime (grader/expected.py runtime_key).
    runtime_key: Mapped[str] = mapped_column(String(64))
    blob: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ProblemRecord(Base):
    """A problem the platform knows, and which of its versions learners get. A course
    problem (``course_id`` set) is seen by that course's members alone, and its files
    are author code, run in sandboxes only (docs/security.md); the bank's have none."""

    __tablename__ = "problems"

    slug: Mapped[str] = mapped_column(String(100), primary_key=True)
    live_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("problem_versions.id"), default=None
    )
    published_at: Mapped[datetime | None] = mapped_column(default=None)
    course_id: Mapped[int | None] = mapped_column(
        ForeignKey("courses.id", ondelete="CASCADE"), default=None, index=True
    )


class CourseProblemRepo(Base):
    """A course's git repository of problem folders (the bank's layout), pulled on demand
    and when its webhook is called with the secret (stored hashed)."""

    __tablename__ = "course_problem_repos"

    course_id: Mapped[int] = mapped_column(
        ForeignKey("courses.id", ondelete="CASCADE"), primary_key=True
    )
    url: Mapped[str] = mapped_column(String(500))
    branch: Mapped[str] = mapped_column(String(100), default="main")
    webhook_secret_hash: Mapped[str] = mapped_column(String(128))
    last_commit: Mapped[str] = mapped_column(String(64), default="")
    last_pulled_at: Mapped[datetime | None] = mapped_column(default=None)
    last_report: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PastVerdict(Base):
    """A verdict a regrade replaced, kept with the version that produced it."""

    __tablename__ = "past_verdicts"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    problem_version_id: Mapped[int | None] = mapped_column(ForeignKey("problem_versions.id"))
    verdict: Mapped[str | None] = mapped_column(String(32))
    score: Mapped[float | None]
    result_json: Mapped[str | None] = mapped_column(Text)
    replaced_at: Mapped[datetime] = mapped_column(default=utcnow)
    regrade_id: Mapped[int | None] = mapped_column(ForeignKey("regrades.id"), default=None)


class Regrade(Base):
    """A course's submissions for one problem, re-run against a chosen version."""

    __tablename__ = "regrades"

    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"), index=True)
    problem: Mapped[str] = mapped_column(String(100))
    version_id: Mapped[int] = mapped_column(ForeignKey("problem_versions.id"))
    created_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    status: Mapped[str] = mapped_column(String(16), default=RegradeStatus.RUNNING)
    # running | ready | applied | discarded
    decided_at: Mapped[datetime | None] = mapped_column(default=None)
    scope: Mapped[str | None] = mapped_column(String(16), default=None)  # a RegradeScope


class CourseVerdict(Base):
    """A course's own verdict for a submission, set by a regrade applied in that course:
    other courses, and the learner's own pages, keep the submission's verdict."""

    __tablename__ = "course_verdicts"
    __table_args__ = (UniqueConstraint("course_id", "submission_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"), index=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    verdict: Mapped[str | None] = mapped_column(String(32))
    score: Mapped[float | None]
    result_json: Mapped[str | None] = mapped_column(Text)
    problem_version_id: Mapped[int | None] = mapped_column(ForeignKey("problem_versions.id"))
    regrade_id: Mapped[int | None] = mapped_column(ForeignKey("regrades.id"))
    applied_at: Mapped[datetime] = mapped_column(default=utcnow)


class RegradeItem(Base):
    """One submission in a regrade: its verdict then, and what the new version says."""

    __tablename__ = "regrade_items"
    __table_args__ = (
        UniqueConstraint("regrade_id", "submission_id"),
        Index("ix_regrade_items_claim", "status", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    regrade_id: Mapped[int] = mapped_column(ForeignKey("regrades.id", ondelete="CASCADE"))
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(8), default=SubmissionStatus.QUEUED)
    lease_owner: Mapped[str | None] = mapped_column(String(64), default=None)
    lease_expires_at: Mapped[datetime | None] = mapped_column(default=None)
    attempts: Mapped[int] = mapped_column(default=0)
    old_verdict: Mapped[str | None] = mapped_column(String(32))
    old_score: Mapped[float | None]
    new_verdict: Mapped[str | None] = mapped_column(String(32), default=None)
    new_score: Mapped[float | None] = mapped_column(default=None)
    new_result_json: Mapped[str | None] = mapped_column(Text, default=None)


class WorkerHeartbeat(Base):
    """A grading process, as it last reported itself (every few seconds)."""

    __tablename__ = "workers"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)  # host:pid-start
    host: Mapped[str] = mapped_column(String(64))
    pid: Mapped[int]
    device: Mapped[str] = mapped_column(String(8))
    threads: Mapped[int]
    pool_size: Mapped[int]
    idle_children: Mapped[int]
    warm: Mapped[bool]  # its pool has had a child ready to take work
    current_jobs: Mapped[str] = mapped_column(String(200), default="")  # submission ids
    version: Mapped[str] = mapped_column(String(32))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    heartbeat_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class GradeBookRevision(Base):
    """One row: the grade book's revision, moved on by every commit that writes what
    grades are computed from (app/core/grade_revision.py)."""

    __tablename__ = "grade_book_revision"

    id: Mapped[int] = mapped_column(primary_key=True)
    revision: Mapped[int] = mapped_column(default=0)


class ServiceCheck(Base):
    """Rows the readiness probe writes to prove the database takes writes."""

    __tablename__ = "service_checks"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    checked_at: Mapped[datetime] = mapped_column(default=utcnow)


# LTI 1.3 (docs/lti.md): the LMSs jaxjudge is registered with, and what their launches
# linked. A platform is one (issuer, client id) registration.


class LtiPlatform(Base):
    __tablename__ = "lti_platforms"
    __table_args__ = (UniqueConstraint("issuer", "client_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    issuer: Mapped[str] = mapped_column(String(255))
    client_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(120), default="")
    auth_login_url: Mapped[str] = mapped_column(String(500))  # the OIDC authorization endpoint
    token_url: Mapped[str] = mapped_column(String(500))  # OAuth 2 token endpoint (services)
    jwks_url: Mapped[str] = mapped_column(String(500))  # the platform's public keys
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class LtiInvitationUse(Base):
    """A Dynamic Registration invitation that registered a platform: each registers one,
    even after that platform is removed."""

    __tablename__ = "lti_invitation_uses"

    invitation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    issuer: Mapped[str] = mapped_column(String(255))
    used_at: Mapped[datetime] = mapped_column(default=utcnow)


class LtiRegistrationAttempt(Base):
    """A Dynamic Registration invitation's calls out, each spent before it is made: the
    one read of the LMS's OpenID configuration (kept, so the page can be shown again)
    and the one registration call. Whoever holds an invitation picks the URLs, so it
    makes jaxjudge call out twice at most, not once per request."""

    __tablename__ = "lti_registration_attempts"

    invitation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    configuration_url: Mapped[str] = mapped_column(String(1000))
    configuration: Mapped[str | None] = mapped_column(Text, default=None)  # JSON, once read
    read_at: Mapped[datetime] = mapped_column(default=utcnow)
    registering_at: Mapped[datetime | None] = mapped_column(default=None)


class LtiDeployment(Base):
    """A deployment of the tool in a platform: launches from others are refused."""

    __tablename__ = "lti_deployments"
    __table_args__ = (UniqueConstraint("platform_id", "deployment_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"))
    deployment_id: Mapped[str] = mapped_column(String(255))


class LtiLogin(Base):
    """One OIDC login in flight: the state sent to the platform and the nonce its
    id_token must carry. Used once; a few minutes old at most."""

    __tablename__ = "lti_logins"

    id: Mapped[int] = mapped_column(primary_key=True)
    state_hash: Mapped[str] = mapped_column(String(64), unique=True)
    nonce: Mapped[str] = mapped_column(String(64))
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"))
    target_link_uri: Mapped[str] = mapped_column(String(2000))
    # SHA-256 of the secret the browser that started the login holds in a cookie.
    browser_hash: Mapped[str] = mapped_column(String(64))
    # The initiation's parameters, to start the same login again in a new window.
    relaunch_query: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None] = mapped_column(default=None)


class LtiDeepLinkRequest(Base):
    """A deep-linking request waiting for its instructor's pick. The browser's session
    names it by a random id (its hash is kept); the answer marks it used in one UPDATE,
    so one request yields at most one signed response, whatever copy of the cookie
    comes back."""

    __tablename__ = "lti_deep_link_requests"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"))
    deployment_id: Mapped[str] = mapped_column(String(255))
    return_url: Mapped[str] = mapped_column(String(1000))
    accept_multiple: Mapped[bool]
    data: Mapped[str | None] = mapped_column(Text, default=None)  # echoed to the platform
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None] = mapped_column(default=None)


class LtiAccount(Base):
    """A jaxjudge account as one platform's user (issuer, sub)."""

    __tablename__ = "lti_accounts"
    __table_args__ = (UniqueConstraint("platform_id", "sub"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"))
    sub: Mapped[str] = mapped_column(String(255))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    email: Mapped[str] = mapped_column(String(255), default="")
    full_name: Mapped[str] = mapped_column(String(255), default="")
    linked_at: Mapped[datetime] = mapped_column(default=utcnow)


class LtiContext(Base):
    """A course of the LMS (its ``context.id``) and the jaxjudge course it is."""

    __tablename__ = "lti_contexts"
    __table_args__ = (UniqueConstraint("platform_id", "context_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"))
    context_id: Mapped[str] = mapped_column(String(255))
    course_id: Mapped[int] = mapped_column(
        ForeignKey("courses.id", ondelete="CASCADE"), unique=True
    )
    deployment_id: Mapped[str] = mapped_column(String(255))
    title: Mapped[str] = mapped_column(String(255), default="")
    # Services the platform offers this context (from the latest launch's claims).
    memberships_url: Mapped[str | None] = mapped_column(String(1000), default=None)
    lineitems_url: Mapped[str | None] = mapped_column(String(1000), default=None)
    scopes: Mapped[str] = mapped_column(Text, default="")  # space-separated
    roster_synced_at: Mapped[datetime | None] = mapped_column(default=None)


class LtiResourceLink(Base):
    """A link in the LMS course to one problem, and the grade-book column it fills."""

    __tablename__ = "lti_resource_links"
    __table_args__ = (UniqueConstraint("context_id", "resource_link_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    context_id: Mapped[int] = mapped_column(ForeignKey("lti_contexts.id", ondelete="CASCADE"))
    resource_link_id: Mapped[str] = mapped_column(String(255))
    problem: Mapped[str] = mapped_column(String(100))
    lineitem_url: Mapped[str | None] = mapped_column(String(1000), default=None)
    score_maximum: Mapped[float] = mapped_column(default=100.0)


class LtiScore(Base):
    """The grade-book outbox: one row per (link, learner), set back to pending whenever
    the learner's score on the problem may have changed, sent with the score of that
    moment. Retried with back-off across restarts; sending the same score twice is
    harmless (AGS keeps the latest by timestamp)."""

    __tablename__ = "lti_scores"
    __table_args__ = (
        UniqueConstraint("link_id", "user_id"),
        Index("ix_lti_scores_due", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    link_id: Mapped[int] = mapped_column(ForeignKey("lti_resource_links.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(8), default=OutboxStatus.PENDING)
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utcnow)
    changed_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    score_given: Mapped[float | None] = mapped_column(default=None)  # what was last sent
    score_maximum: Mapped[float | None] = mapped_column(default=None)
    sent_at: Mapped[datetime | None] = mapped_column(default=None)


class LtiKey(Base):
    """The tool's RSA signing keys (client assertions, deep-linking responses). The
    newest signs; a retired one stays in the public JWKS for a day so that what it
    signed still verifies."""

    __tablename__ = "lti_keys"

    id: Mapped[int] = mapped_column(primary_key=True)
    kid: Mapped[str] = mapped_column(String(64), unique=True)
    private_pem: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    retired_at: Mapped[datetime | None] = mapped_column(default=None)


class MailMessage(Base):
    """The mail outbox: a message rendered when it was queued (in the transaction that
    caused it), sent later by app/mail/delivery.py outside any request, retried with
    back-off across restarts, shown to admins."""

    __tablename__ = "mail_outbox"
    __table_args__ = (Index("ix_mail_outbox_due", "status", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None, index=True
    )
    kind: Mapped[str] = mapped_column(String(32))  # MailKind
    to_address: Mapped[str] = mapped_column(String(254))
    subject: Mapped[str] = mapped_column(String(200))
    text_body: Mapped[str] = mapped_column(Text)
    html_body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(8), default=OutboxStatus.PENDING)
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(default=None)


class OneTimeLink(Base):
    """A single-use link (password reset, email verification): only a SHA-256 of its
    token is stored; it works once, before ``expires_at``."""

    __tablename__ = "one_time_links"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    purpose: Mapped[str] = mapped_column(String(16))  # OneTimeLinkPurpose
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    email: Mapped[str] = mapped_column(String(254), default="")  # the address verified
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None] = mapped_column(default=None)


class ExternalIdentity(Base):
    """An account's identity at an identity provider (OpenID Connect or SAML): found by
    (issuer, subject), never by email. Linked at a first sign-in (a new account) or from
    a signed-in session (the account page)."""

    __tablename__ = "external_identities"
    __table_args__ = (UniqueConstraint("issuer", "subject"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    protocol: Mapped[str] = mapped_column(String(8))  # SignInProtocol
    provider: Mapped[str] = mapped_column(String(64))  # the operator's name for it
    issuer: Mapped[str] = mapped_column(String(500))  # OIDC `iss`, SAML IdP entity id
    subject: Mapped[str] = mapped_column(String(255))  # OIDC `sub`, SAML NameID/ePPN
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime] = mapped_column(default=utcnow)


class SignInRequest(Base):
    """A sign-in sent to an identity provider, kept on the server and used once: OIDC's
    ``state`` (hashed), ``nonce`` and PKCE verifier, or a SAML AuthnRequest's ID
    (its RelayState hashed). ``link_user_id``: started from the account page to link."""

    __tablename__ = "sign_in_requests"

    id: Mapped[int] = mapped_column(primary_key=True)
    state_hash: Mapped[str] = mapped_column(String(64), unique=True)
    protocol: Mapped[str] = mapped_column(String(8))  # SignInProtocol
    provider: Mapped[str] = mapped_column(String(64))
    nonce: Mapped[str] = mapped_column(String(128), default="")
    code_verifier: Mapped[str] = mapped_column(String(128), default="")
    request_id: Mapped[str] = mapped_column(String(128), default="")  # SAML AuthnRequest ID
    next_path: Mapped[str] = mapped_column(String(2000), default="/")
    link_user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None] = mapped_column(default=None)


class SeenAssertion(Base):
    """A SAML assertion's ID, kept until it would expire anyway: a replay is refused."""

    __tablename__ = "seen_assertions"

    assertion_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    issuer: Mapped[str] = mapped_column(String(500))
    expires_at: Mapped[datetime]
