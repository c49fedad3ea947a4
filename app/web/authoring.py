"""Authors' pages: every synced problem and version, a preview of any version as
learners would see it with its check report, and publishing."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select

from app.api.deps import SessionDep
from app.core.markdown import render_markdown
from app.core.sessions import check_csrf
from app.data import catalog
from app.grading import checks as authoring
from app.models import ProblemRecord, ProblemVersion, User
from app.web.courses import required_user
from app.web.pages import page, sample_views, signature_of, walkthrough_views

router = APIRouter(include_in_schema=False)

PREVIEW_ROLES = ("author", "instructor", "admin")
PUBLISH_ROLES = ("author", "admin")


def _staff(request: Request, session: SessionDep, roles: tuple[str, ...] = PREVIEW_ROLES) -> User:
    user = required_user(request, session)
    if user.role not in roles:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, f"Only {', '.join(roles)} accounts can do this."
        )
    return user


def _version(session: SessionDep, slug: str, number: int | None) -> ProblemVersion:
    version = (
        catalog.version_by_number(session, slug, number)
        if number is not None
        else next(iter(catalog.versions(session, slug)), None)
    )
    if version is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"No such version of {slug!r}.")
    return version


@router.get("/author", response_class=HTMLResponse)
def author_home(request: Request, session: SessionDep) -> Response:
    user = _staff(request, session)
    live = dict(session.execute(select(ProblemRecord.slug, ProblemRecord.live_version_id)).all())
    rows: dict[str, list[ProblemVersion]] = {}
    for version in session.scalars(
        select(ProblemVersion).order_by(ProblemVersion.slug, ProblemVersion.number.desc())
    ):
        rows.setdefault(version.slug, []).append(version)
    return page(request, "author.html", user, problems=rows, live=live)


@router.get("/author/problems/{slug}", response_class=HTMLResponse)
def preview(
    slug: str, request: Request, session: SessionDep, version: int | None = None
) -> Response:
    user = _staff(request, session)
    chosen = _version(session, slug, version)
    problem = catalog.problem_of(chosen)
    live = catalog.live_version(session, slug)
    unlocked = walkthrough_views(problem)
    return page(
        request,
        "preview.html",
        user,
        version=chosen,
        versions=catalog.versions(session, slug),
        live=live,
        problem=problem,
        statement=render_markdown(problem.statement),
        signature=signature_of(problem),
        samples=sample_views(problem),
        hints=[render_markdown(hint) for hint in problem.hints],
        walkthrough=unlocked["walkthrough"],
        reference=unlocked["reference"],
        check=json.loads(chosen.check_json) if chosen.check_json else None,
        can_publish=user.role in PUBLISH_ROLES,
    )


def _to_preview(version: ProblemVersion) -> RedirectResponse:
    return RedirectResponse(
        f"/author/problems/{version.slug}?version={version.number}",
        status_code=status.HTTP_303_SEE_OTHER,
    )


@router.post("/author/problems/{slug}/versions/{number}/check")
def start_check(
    slug: str,
    number: int,
    request: Request,
    session: SessionDep,
    csrf: Annotated[str, Form(alias="csrf_token")] = "",
) -> Response:
    check_csrf(request, csrf)
    _staff(request, session)
    version = _version(session, slug, number)
    authoring.request_check(session, version=version)
    return _to_preview(version)


@router.post("/author/problems/{slug}/versions/{number}/publish")
def publish(
    slug: str,
    number: int,
    request: Request,
    session: SessionDep,
    csrf: Annotated[str, Form(alias="csrf_token")] = "",
) -> Response:
    check_csrf(request, csrf)
    _staff(request, session, PUBLISH_ROLES)
    version = _version(session, slug, number)
    if version.check_status != "passed":
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            "Run the check on this version first; only a version whose check passed is published "
            "from here (`jaxjudge publish` is the override).",
        )
    catalog.publish(session, version=version)
    return _to_preview(version)
