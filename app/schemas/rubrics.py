"""The rubric API's models (app/api/routes/course_rubrics.py): an assignment's items,
their audit trail, and what is applied to one submission."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.vocabulary import RubricAction, RubricMode


class RubricItemCreate(BaseModel):
    points: float = Field(
        description="-1000 to 1000; negative: a deduction. Finite (no NaN, no infinity)."
    )
    description: str = Field(description="What the item means; 1 to 500 characters.")


class RubricItemUpdate(BaseModel):
    """Change an item: what is left out keeps its value."""

    points: float | None = None
    description: str | None = None


class RubricItemPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    position: int
    points: float
    description: str
    removed_at: datetime | None = Field(description="Set once removed: it counts no more.")


class RubricEventPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    item_id: int | None
    submission_id: int | None
    action: RubricAction
    detail: str = Field(description='Points before and after, e.g. "+2 -> +1.5: shapes".')
    created_by_name: str
    created_at: datetime


class RubricPublic(BaseModel):
    """An assignment's rubric: its mode, its items (removed ones too) and its audit."""

    problem: str
    rubric_mode: RubricMode
    max_points: float
    items: list[RubricItemPublic]
    events: list[RubricEventPublic]


class AppliedItemPublic(BaseModel):
    item: RubricItemPublic
    applied_by_name: str
    applied_at: datetime


class SubmissionRubricPublic(BaseModel):
    """What staff applied to one submission, and what it is worth now."""

    submission_id: int
    changed: bool = Field(description="False: it already was so (applied, taken off, graded).")
    graded_by_name: str | None = Field(description="Who graded it by hand; null: nobody yet.")
    graded_at: datetime | None
    manual_points: float = Field(description="The applied items' points (removed ones: 0).")
    applied: list[AppliedItemPublic]
