"""Authors' pages: every synced problem and version, a preview of any version as
learners would see it with its check report, and publishing."""

from __future__ import annotations

import json

from fastapi import APIRouter, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select

from app.core.request_db import SessionDep
from app.data import catalog, course_problems
from app.errors import ConflictError, NotFoundError
from app.grading import author_checks
from app.grading.notifications import announce_new_work
from app.models import ProblemRecord, ProblemVersion
from app.vocabulary import PUBLISH_ROLES, CheckStatus
from app.web.guards import CsrfChecked, Publisher, Staff
from app.web.problems import learner_preview
from app.web.render import page

router = APIRouter(include_in_schema=False)


def _version(session: SessionDep, slug: str, number: int | None) -> ProblemVersion:
    # The bank's pages: a course's own problem lives in its course's editor alone.
    if course_problems.course_of_problem(session=session, slug=slug) is not None:
        raise NotFoundError(f"No such version of {slug!r}.")
    version = catalog.version_or_newest(session=session, slug=slug, number=number)
    if version is None:
        raise NotFoundError(f"No such version of {slug!r}.")
    return version


@router.get("/author", response_class=HTMLResponse)
def author_home(request: Request, session: SessionDep, user: Staff) -> Response:
    live = dict(session.execute(select(ProblemRecord.slug, ProblemRecord.live_version_id)).all())
    rows: dict[str, list[ProblemVersion]] = {}
    for version in session.scalars(
        select(ProblemVersion).order_by(ProblemVersion.slug, ProblemVersion.number.desc())
    ):
        if not course_problems.is_course_slug(version.slug):  # the bank only
            rows.setdefault(version.slug, []).append(version)
    return page(request, "author.html", user, problems=rows, live=live)


@router.get("/author/problems/{slug}", response_class=HTMLResponse)
def preview(
    slug: str, request: Request, session: SessionDep, user: Staff, version: int | None = None
) -> Response:
    chosen = _version(session, slug, version)
    problem = catalog.problem_of(chosen)
    live = catalog.live_version(session=session, slug=slug)
    return page(
        request,
        "preview.html",
        user,
        version=chosen,
        versions=catalog.versions(session=session, slug=slug),
        live=live,
        no_worker=author_checks.waits_without_worker(session, chosen),
        **learner_preview(problem, chosen),
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
    _user: Staff,
    _csrf: CsrfChecked,
) -> Response:
    version = _version(session, slug, number)
    if author_checks.request_check(session, version=version):
        session.commit()  # queued where workers look before they are woken
        announce_new_work()
    return _to_preview(version)


@router.post("/author/problems/{slug}/versions/{number}/publish")
def publish(
    slug: str,
    number: int,
    request: Request,
    session: SessionDep,
    _user: Publisher,
    _csrf: CsrfChecked,
) -> Response:
    version = _version(session, slug, number)
    if version.check_status != CheckStatus.PASSED:
        raise ConflictError(
            "Run the check on this version first; only a version whose check passed is published "
            "from here (`jaxjudge publish` is the override).",
        )
    catalog.publish(session=session, version=version)
    return _to_preview(version)
