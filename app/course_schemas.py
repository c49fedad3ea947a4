"""Request and response models of the instructor's JSON API (app/api/routes/courses.py),
named by direction like app/schemas.py."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class CourseCreate(BaseModel):
    name: str = Field(min_length=1, max_length=120)


class CourseJoin(BaseModel):
    code: str = Field(min_length=4, max_length=16, description="The code the instructor shares.")


class AssignmentPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    problem: str
    due_at: datetime | None = Field(None, description="UTC; submits after it are late.")


class CoursePublic(BaseModel):
    id: int
    name: str
    role: str = Field(description="instructor or learner")
    join_code: str | None = Field(None, description="Instructors only.")
    created_at: datetime
    assignments: list[AssignmentPublic] = Field(default_factory=list)


class CoursesPublic(BaseModel):
    data: list[CoursePublic]
    count: int


class AssignmentCreate(BaseModel):
    problem: str = Field(description="A published problem's slug.")
    due_at: datetime | None = Field(
        None, description="ISO 8601; without an offset it is UTC. Assigning again moves it."
    )


class MemberPublic(BaseModel):
    id: int
    name: str
    role: str = Field(description="instructor or learner")


class MembersPublic(BaseModel):
    data: list[MemberPublic]
    count: int


class CellPublic(BaseModel):
    problem: str
    best_verdict: str | None
    best_score: float
    attempts: int
    first_accepted_at: datetime | None
    last_submitted_at: datetime | None
    late: bool


class LearnerGrades(BaseModel):
    learner_id: int
    learner: str
    solved: int
    cells: list[CellPublic]


class GradeMatrix(BaseModel):
    """The course's grade matrix: per learner and assigned problem, the best score the
    course counts (late submits flagged), as on the dashboard and in grades.csv."""

    course_id: int
    problems: list[AssignmentPublic]
    learners: list[LearnerGrades]


class TimelineEntryPublic(BaseModel):
    submission_id: int
    problem: str
    submitted_at: datetime
    status: str
    verdict: str | None
    score: float | None
    late: bool
    problem_version: int | None


class Timeline(BaseModel):
    learner_id: int
    learner: str
    data: list[TimelineEntryPublic]


class RegradeCreate(BaseModel):
    version: int = Field(ge=1, description="The problem version to regrade against.")


class RegradeChange(BaseModel):
    learner: str
    submission_id: int
    submitted_at: datetime
    old_verdict: str | None
    old_score: float | None
    new_verdict: str | None
    new_score: float | None
    changed: bool


class RegradePublic(BaseModel):
    id: int
    problem: str
    version: int | None
    status: str = Field(description="running, ready (all regraded), applied or discarded.")
    done: int
    total: int
    changes: list[RegradeChange]
