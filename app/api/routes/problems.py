"""The problems as the API lists them, and revealing a problem's hints."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status

from app.api.deps import CurrentUser, SessionDep
from app.core.markdown import render_markdown
from app.data import catalog, hints
from app.schemas import ProblemPublic, ProblemsPublic

router = APIRouter(prefix="/api/problems", tags=["problems"])


@router.get("", response_model=ProblemsPublic)
def list_problems(_user: CurrentUser, session: SessionDep) -> ProblemsPublic:
    """Every published problem, by track and position."""
    problems = [problem for _version, problem in catalog.live_problems(session)]
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
    live = catalog.live_problem(session, slug)
    if live is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Unknown problem {slug!r}.")
    texts = live[1].hints
    revealed = hints.reveal_next_hint(
        session=session, user=user, problem=slug, available=len(texts)
    )
    return {
        "revealed": revealed,
        "count": len(texts),
        "hints": [render_markdown(text) for text in texts[:revealed]],
    }
