from __future__ import annotations

from fastapi import APIRouter, HTTPException, status

from app import crud
from app.api.deps import CurrentUser, SessionDep
from app.core.markdown import render_markdown
from app.schemas import ProblemPublic, ProblemsPublic
from grader.problem import find_problem, load_problem, problem_folders

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


@router.post("/{slug}/hints")
def reveal_hint(slug: str, user: CurrentUser, session: SessionDep) -> dict[str, object]:
    """Reveal the next hint (recorded; revealed hints stay revealed)."""
    folder = find_problem(slug)
    if folder is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Unknown problem {slug!r}.")
    hints = load_problem(folder).hints
    revealed = crud.reveal_next_hint(session=session, user=user, problem=slug, available=len(hints))
    return {
        "revealed": revealed,
        "count": len(hints),
        "hints": [render_markdown(hint) for hint in hints[:revealed]],
    }
