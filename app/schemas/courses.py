"""Request and response models of the instructor's JSON API (app/api/routes/courses.py),
named by direction like app/schemas/learners.py."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from app.vocabulary import (
    GradeStatus,
    LatePolicy,
    MemberRole,
    RegradeStatus,
    RubricMode,
    SimilarityScope,
    SimilarityStatus,
    SubmissionStatus,
)


class CourseCreate(BaseModel):
    name: str = Field(min_length=1, max_length=120)


class CourseJoin(BaseModel):
    code: str = Field(min_length=4, max_length=16, description="The code the instructor shares.")
    student_id: str = Field(
        "",
        max_length=64,
        description=(
            "Your student id, for a course that asks for one when your account has none"
            " (kept on your account as self-declared)."
        ),
    )


class AssignmentPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    problem: str
    opens_at: datetime = Field(description="UTC; submits from then on count.")
    due_at: datetime | None = Field(None, description="UTC; submits after it are late.")
    late_policy: str = Field(description="none, cutoff or penalty.")
    late_cutoff_at: datetime | None = Field(None, description="UTC; nothing counts after it.")
    penalty_percent: float = Field(description="Lost per started unit late (penalty policy).")
    penalty_unit: str = Field(description="day or hour.")
    penalty_floor_percent: float = Field(description="The least a late submit keeps.")
    max_points: float
    rubric_mode: str = Field(description="How rubric items meet the automatic score.")
    notebook: str | None = Field(None, description="The notebook assignment it is part of.")


class StandingPublic(BaseModel):
    """A learner's own standing on one assignment."""

    problem: str
    status: GradeStatus = Field(description="late: solved, only after the due date.")
    due_at: datetime | None = Field(description="Their due date, extension included (UTC).")
    extended: bool
    points: float
    max_points: float


class CoursePublic(BaseModel):
    id: int
    name: str
    role: str = Field(description="instructor, ta or learner")
    join_code: str | None = Field(None, description="Staff only.")
    created_at: datetime
    assignments: list[AssignmentPublic] = Field(default_factory=list)
    standing: list[StandingPublic] | None = Field(
        None, description="Learners only: their status, due date and points per assignment."
    )


class CoursesPublic(BaseModel):
    data: list[CoursePublic]
    count: int


class AssignmentCreate(BaseModel):
    """Assign a problem, or change its settings (every field is set again)."""

    problem: str = Field(description="A published problem's slug.")
    due_at: datetime | None = Field(
        None, description="ISO 8601; without an offset it is UTC. Assigning again moves it."
    )
    opens_at: datetime | None = Field(
        None, description="Default: when first assigned; submits before it do not count."
    )
    late_policy: LatePolicy = LatePolicy.NONE
    late_cutoff_at: datetime | None = None
    penalty_percent: float = Field(0.0, ge=0, le=100)
    penalty_unit: Literal["day", "hour"] = "day"
    penalty_floor_percent: float = Field(0.0, ge=0, le=100)
    max_points: float = Field(10.0, gt=0, le=10_000)
    rubric_mode: RubricMode = Field(
        RubricMode.ADDED,
        description="added: rubric items' points are added to the automatic points;"
        " replacing: once graded by hand, the items' points alone are the score.",
    )
    notebook: str | None = Field(
        None,
        max_length=100,
        description="A notebook's name: the course's assignments with the same name are one"
        " notebook, submitted as one .ipynb upload. Empty or null: none.",
    )
    confirm_past_due: bool = Field(
        False, description="A due date in the past is refused (409) unless this is true."
    )


class ExtensionCreate(BaseModel):
    problem: str
    due_at: datetime = Field(description="The new due date; ISO 8601, UTC without an offset.")
    user: str = Field("", description="A learner's user name; or give a group.")
    group: str = Field("", description="A group of the course's learners.")


class ExtensionsCreate(BaseModel):
    """Granted all together or not at all: a 400 names every bad item."""

    data: list[ExtensionCreate] = Field(max_length=5_000)


class ExtensionPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    problem: str
    user_id: int | None
    group_name: str
    due_at: datetime


class ExtensionsPublic(BaseModel):
    data: list[ExtensionPublic]
    count: int


class MemberCreate(BaseModel):
    user: str = Field(description="The account's user name.")
    role: MemberRole = MemberRole.LEARNER


class MemberUpdate(BaseModel):
    group: str = Field("", max_length=60, description="A group (section); empty for none.")


class OverrideCreate(BaseModel):
    points: float | None = Field(
        description="The learner's points on the assignment; null gives back the computed score."
    )
    reason: str = Field(min_length=1, max_length=2_000)


class OverridePublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    problem: str
    user_id: int
    score: float | None = Field(description="0-1 of the points; null: override cleared.")
    old_score: float | None
    reason: str
    created_by_name: str
    created_at: datetime


class OverridesPublic(BaseModel):
    data: list[OverridePublic]
    count: int


class CommentCreate(BaseModel):
    body: str = Field(min_length=1, max_length=5_000)
    line_start: int | None = Field(
        None, description="The first line of the submitted code it is about (1-based)."
    )
    line_end: int | None = Field(
        None, description="Its last line (inclusive); both null: the whole submission."
    )


class CommentPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    submission_id: int
    author_name: str
    body: str
    created_at: datetime
    line_start: int | None
    line_end: int | None


class CommentsPublic(BaseModel):
    data: list[CommentPublic]
    count: int


class SimilarityCreate(BaseModel):
    scope: SimilarityScope = Field(
        SimilarityScope.ACCEPTED,
        description="accepted: each learner's accepted submits; final: their last.",
    )


class SimilarityPairPublic(BaseModel):
    left_submission: int
    right_submission: int
    left_learner: str
    right_learner: str
    similarity: float = Field(description="Shared fingerprints over the smaller side's, 0-1.")
    jaccard: float
    left_lines: list[tuple[int, int]]
    right_lines: list[tuple[int, int]]


class SimilarityPublic(BaseModel):
    id: int
    problem: str
    scope: SimilarityScope
    status: SimilarityStatus
    submissions: int
    seconds: float | None
    pairs: list[SimilarityPairPublic]


class MemberPublic(BaseModel):
    id: int
    name: str
    role: str = Field(description="instructor, ta or learner")
    group: str = ""
    student_id: str = ""


class MembersPublic(BaseModel):
    data: list[MemberPublic]
    count: int


class CellPublic(BaseModel):
    problem: str
    status: GradeStatus = Field(description="late: solved, only after the due date.")
    best_verdict: str | None
    best_score: float = Field(
        description="Raw: the best counted score (0-1, automatic and rubric combined), before"
        " penalties."
    )
    final_score: float = Field(description="0-1 after the late policy and any override.")
    points: float = Field(description="final_score times the assignment's points.")
    attempts: int = Field(description="Submits that count (inside the window).")
    not_counted: int = Field(description="Submits outside the window.")
    first_accepted_at: datetime | None
    last_submitted_at: datetime | None
    late: bool
    due_at: datetime | None = Field(description="The learner's due date, extension included.")
    extended: bool
    override_reason: str | None
    scored_submission_id: int | None = Field(
        description="The submit that gave the score (before any override)."
    )
    automatic_score: float = Field(description="That submit's automatic score (0-1).")
    manual_points: float | None = Field(
        description="The points of the rubric items applied to it; null: not graded by hand."
    )
    graded_by: str | None = Field(description="Who graded that submit by hand.")


class LearnerGrades(BaseModel):
    learner_id: int
    learner: str
    solved: int
    total_points: float
    cells: list[CellPublic]


class GradeMatrix(BaseModel):
    """The course's grade matrix: per learner and assigned problem, the best score the
    course counts (late submits flagged), as on the dashboard and in grades.csv."""

    course_id: int
    problems: list[AssignmentPublic]
    total_possible: float
    learners: list[LearnerGrades]


class TimelineEntryPublic(BaseModel):
    submission_id: int
    problem: str
    submitted_at: datetime
    status: SubmissionStatus
    verdict: str | None
    score: float | None
    late: bool
    counts: bool = Field(description="Inside the learner's window (see why_not otherwise).")
    why_not: str
    kept_percent: float = Field(description="What the late policy keeps of its score.")
    problem_version: int | None
    comments: list[CommentPublic]


class Timeline(BaseModel):
    learner_id: int
    learner: str
    data: list[TimelineEntryPublic]
    overrides: list[OverridePublic]


class RegradeCreate(BaseModel):
    version: int = Field(ge=1, description="The problem version to regrade against.")


class RegradeChange(BaseModel):
    """One regraded submission, old and new (app/data/regrades.py ``changes``)."""

    learner: str
    submission_id: int
    submitted_at: datetime
    old_verdict: str | None
    old_score: float | None
    new_verdict: str | None
    new_score: float | None
    manual_note: str | None = Field(
        None,
        description='Graded by hand and the total moves: "manual grades kept: total 7.5 -> 9'
        ' of 10" (the rubric items stay on the submission).',
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def changed(self) -> bool:
        return self.new_verdict is not None and (
            self.new_verdict != self.old_verdict
            or round(self.new_score or 0.0, 6) != round(self.old_score or 0.0, 6)
        )


class RegradePublic(BaseModel):
    id: int
    problem: str
    version: int | None
    status: RegradeStatus
    done: int
    total: int
    changes: list[RegradeChange]
