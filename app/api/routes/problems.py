from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import CurrentUser
from app.schemas import ProblemPublic, ProblemsPublic
from grader.problem import load_problem, problem_folders

router = APIRouter(prefix="/api/problems", tags=["problems"])


@router.get("", response_model=ProblemsPublic)
def list_problems(_user: CurrentUser) -> ProblemsPublic:
    """Every problem, by track and position."""
    problems = [load_problem(folder) for folder in problem_folders()]
    problems.sort(key=lambda p: (p.config.track, p.config.position))
    data = [
        ProblemPublic(
            slug=p.slug, **p.config.model_dump(include=set(ProblemPublic.model_fields) - {"slug"})
        )
        for p in problems
    ]
    return ProblemsPublic(data=data, count=len(data))
