"""Request and response models of the JSON API, named by direction."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from app.vocabulary import ProgressStatus, SubmissionStatus
from grader.child.verdicts import Mode, Verdict
from grader.judging.report import AuthorTestReport, CaseReport, PartReport


def _valid_unicode(text: str) -> str:
    """Refuse lone surrogates ("\\ud800" in JSON): they cannot be stored or shown."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            "the text holds a lone surrogate (an unpaired \\ud800-\\udfff escape), not valid Unicode"
        ) from None
    return text


Text = Annotated[str, AfterValidator(_valid_unicode)]


class SubmissionCreate(BaseModel):
    problem: Text = Field(max_length=100, description="Problem slug, e.g. nnx-grad-accumulation.")
    code: Text = Field(description="The Python source defining the entry point.")
    mode: Literal["run", "submit"] = Field(
        "submit", description="run: sample cases only, not recorded as an attempt."
    )


class SubmissionCreated(BaseModel):
    id: int


class NotebookSubmitted(BaseModel):
    """A notebook made into one problem's submission (POST /api/submissions/notebook)."""

    id: int = Field(description="The submission: read it as any other, GET /api/submissions/{id}.")
    problem: str
    cells: list[int] = Field(description="The cells its code was taken from (1 = the first cell).")
    notes: list[str] = Field(
        description="What was left out: magics, shell escapes, other top-level statements,"
        " cells that do not parse, definitions the entry points do not use."
    )
    missing: list[str] = Field(description="Entry points of the problem the notebook lacks.")


class NotebookProblemSubmitted(BaseModel):
    problem: str
    title: str
    id: int | None = Field(description="Its submission; None when none was made (see reason).")
    reason: str | None = None
    cells: list[int] = []
    notes: list[str] = []
    missing: list[str] = []


class CourseNotebookSubmitted(BaseModel):
    """One upload of a course's notebook assignment: a submission per problem whose
    entry points it defines (POST /api/courses/{id}/notebook-submissions)."""

    notebook: str
    submissions: list[NotebookProblemSubmitted]


class ProblemPublic(BaseModel):
    slug: str
    title: str
    track: str
    position: int
    difficulty: str
    estimated_minutes: int
    tags: list[str]
    entry_point: str = Field(description="The function to write (with parts: the first part's).")
    arguments: list[str]
    entry_points: list[str] = Field(
        default_factory=list, description="Every function to write, one per part, in order."
    )
    credit: str = Field("per-case", description="How the score is computed (problem.toml).")
    device: str
    status: ProgressStatus = Field(description="The caller's, from their own submits.")
    marked_complete: bool = Field(
        description="The caller marked it complete (skipped or reviewed); apart from solved."
    )


class ProblemsPublic(BaseModel):
    data: list[ProblemPublic]
    count: int


class TrackPublic(BaseModel):
    """The caller's progress through one track."""

    track: str
    title: str
    total: int
    solved: int
    marked_complete: int = Field(description="Marked complete and not solved.")
    percent_done: int = Field(description="Solved or marked complete, of all, in percent.")
    next_problem: str | None = Field(description="The first problem neither solved nor marked.")


class TracksPublic(BaseModel):
    data: list[TrackPublic]


class SubmissionPublic(BaseModel):
    """A submission's state; once done, the report's fields as its owner may see them
    (hidden cases reduced to their verdict: grader/judging/feedback.py)."""

    id: int
    status: SubmissionStatus
    problem: str
    mode: Mode
    position: int | None = Field(None, description="While queued: 1 is graded next.")
    stage: str = Field(
        "queued",
        description="queued; samples (compiling and running them); hidden (the samples"
        " are answered, see samples, and the hidden cases run); done.",
    )
    samples: list[CaseReport] | None = Field(
        None, description="While the hidden cases run: the samples' reports, known already."
    )
    submitted_at: datetime
    started_at: datetime | None = Field(None, description="Queue wait: started - submitted.")
    finished_at: datetime | None = Field(None, description="Grading: finished - started.")
    verdict: Verdict | None = None
    verdict_label: str | None = Field(None, description='The verdict for people ("Wrong answer").')
    score: float | None = None
    cases: list[CaseReport] | None = None
    tests: list[AuthorTestReport] | None = Field(
        None,
        description=(
            "The problem's author tests: a visible one with its message when it failed; a"
            ' hidden one as "hidden test N" and passed or failed only.'
        ),
    )
    parts: list[PartReport] | None = Field(
        None, description="A problem with several parts: each part's verdict and cases passed."
    )
    credit: str | None = Field(None, description="How the score is computed (problem.toml).")
    diagnosis: str | None = None
    message: str | None = None
    stdout: str | None = None
    hidden_output_withheld: bool | None = None
    versions: dict[str, str] | None = None
    seconds: float | None = None
    comments: list[StaffComment] | None = Field(
        None, description="Once done: comments course staff left on it, oldest first."
    )


class StaffComment(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    author_name: str
    body: str
    created_at: datetime
    line_start: int | None = None  # the lines it is about (1-based, inclusive); None: all
    line_end: int | None = None


class TokenCreate(BaseModel):
    name: Text = Field("", max_length=100, description="What the token is for, shown in lists.")
    expires_in_days: int | None = Field(
        None, ge=1, le=3650, description="Days until it stops working; null: never expires."
    )


class TokenPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    created_at: datetime
    last_used_at: datetime | None = Field(description="Recorded at most once a minute.")
    expires_at: datetime | None


class TokenCreated(TokenPublic):
    token: str = Field(description="The token itself: shown in this answer only.")


class TokensPublic(BaseModel):
    data: list[TokenPublic]
    count: int
