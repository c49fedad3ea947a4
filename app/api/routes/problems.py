"""The problems as the API lists them with the caller's progress, tracks, marking a
problem complete, and revealing a problem's hints."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status
from sqlalchemy.orm import Session

from app.api import hot_reads
from app.api.deps import Authorization, CurrentUser
from app.core.markdown import render_markdown
from app.core.request_db import SessionDep
from app.data import catalog, hints, progress
from app.models import User
from app.schemas.learners import ProblemPublic, ProblemsPublic, TrackPublic, TracksPublic
from app.vocabulary import track_title

router = APIRouter(prefix="/api/problems", tags=["problems"])
tracks_router = APIRouter(prefix="/api/tracks", tags=["problems"])
# What a problem's config says as it is; its functions come from its parts (a problem with
# [[parts]] has no top-level entry_point or arguments).
FROM_PARTS = {"entry_point", "arguments", "entry_points"}
CONFIG_FIELDS = set(ProblemPublic.model_fields) - {"slug", "status", "marked_complete"} - FROM_PARTS


@router.get("", response_model=ProblemsPublic)
async def list_problems(request: Request, authorization: Authorization = None) -> Response:
    """Every published problem, the easiest track first and by position within it, with the
    caller's status."""
    return await hot_reads.answer(request, authorization, problems_of)


def problems_of(session: Session, user: User) -> ProblemsPublic:
    data = [
        ProblemPublic(
            slug=item.problem.slug,
            status=item.status,
            marked_complete=item.marked,
            entry_point=item.problem.parts[0].entry_point,
            arguments=list(item.problem.parts[0].arguments),
            entry_points=[part.entry_point for part in item.problem.parts],
            **item.problem.config.model_dump(include=CONFIG_FIELDS, mode="json"),
        )
        for track in progress.live_tracks(session=session, user=user)
        for item in track.problems
    ]
    return ProblemsPublic(data=data, count=len(data))


@tracks_router.get("", response_model=TracksPublic)
async def list_tracks(request: Request, authorization: Authorization = None) -> Response:
    """The caller's progress through each track."""
    return await hot_reads.answer(request, authorization, tracks_of)


def tracks_of(session: Session, user: User) -> TracksPublic:
    return TracksPublic(
        data=[
            TrackPublic(
                track=t.track,
                title=track_title(t.track),
                total=t.total,
                solved=t.solved,
                marked_complete=t.marked_only,
                percent_done=t.percent_done,
                next_problem=t.next_problem.slug if t.next_problem else None,
            )
            for t in progress.live_tracks(session=session, user=user)
        ]
    )


@router.put("/{slug}/complete", status_code=status.HTTP_204_NO_CONTENT)
def mark_complete(slug: str, user: CurrentUser, session: SessionDep) -> Response:
    """Mark a problem complete (skipped or reviewed); solved stays apart. Idempotent."""
    progress.set_marked(session=session, user=user, problem=slug, marked=True)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.delete("/{slug}/complete", status_code=status.HTTP_204_NO_CONTENT)
def unmark_complete(slug: str, user: CurrentUser, session: SessionDep) -> Response:
    """Take the mark back. Idempotent."""
    progress.set_marked(session=session, user=user, problem=slug, marked=False)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{slug}/hints")
def reveal_hint(slug: str, user: CurrentUser, session: SessionDep) -> dict[str, object]:
    """Reveal the next hint (recorded; revealed hints stay revealed)."""
    live = catalog.visible_live_problem(session=session, slug=slug, user=user)
    if live is None:
        raise catalog.unknown_problem(session=session, slug=slug)
    texts = live[1].hints
    revealed = hints.reveal_next_hint(
        session=session, user=user, problem=slug, available=len(texts)
    )
    return {
        "revealed": revealed,
        "count": len(texts),
        "hints": [render_markdown(text) for text in texts[:revealed]],
    }
