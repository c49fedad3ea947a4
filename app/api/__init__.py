"""The JSON API under /api/: one router gathering each resource's (routes/)."""

from fastapi import APIRouter

from app.api.routes import (
    course_grading,
    course_people,
    course_rubrics,
    courses,
    problems,
    submissions,
    tokens,
)

router = APIRouter()
for part in (
    problems.router,
    problems.tracks_router,
    submissions.router,
    tokens.router,
    courses.router,
    course_people.router,
    course_grading.router,
    course_rubrics.router,
):
    router.include_router(part)
