"""Request and response models of the JSON API, named by direction."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class SubmissionCreate(BaseModel):
    problem: str = Field(description="Problem slug, e.g. nnx-grad-accumulation.")
    code: str = Field(description="The Python source defining the entry point.")
    mode: Literal["run", "submit"] = Field(
        "submit", description="run: sample cases only, not recorded as an attempt."
    )


class SubmissionCreated(BaseModel):
    id: int


class ProblemPublic(BaseModel):
    slug: str
    title: str
    track: str
    position: int
    difficulty: str
    estimated_minutes: int
    tags: list[str]
    entry_point: str
    arguments: list[str]
    device: str


class ProblemsPublic(BaseModel):
    data: list[ProblemPublic]
    count: int


SubmissionPublic = dict[
    str, Any
]  # id, status, position while queued; the grade report's fields when done
