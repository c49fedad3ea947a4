"""Similarity reports on the web: start one for an assigned problem, watch it,
read its pairs, and compare one pair side by side with the matched lines marked."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.core.request_db import SessionDep
from app.data import assignments
from app.errors import NotFoundError
from app.models import Submission
from app.reports import similarity_runs
from app.vocabulary import SimilarityScope
from app.web.guards import CourseStaff, CsrfChecked
from app.web.render import page

router = APIRouter(include_in_schema=False)


@router.post("/courses/{course_id}/problems/{slug}/similarity")
def start_report(
    slug: str,
    session: SessionDep,
    access: CourseStaff,
    _csrf: CsrfChecked,
    scope: Annotated[str, Form()] = SimilarityScope.ACCEPTED,
) -> Response:
    assignments.require_assigned(session=session, course=access.course, slug=slug)
    report = similarity_runs.start(
        session=session, course=access.course, problem=slug, scope=scope, by=access.user
    )
    session.commit()
    similarity_runs.launch(report.id)
    return RedirectResponse(
        f"/courses/{access.course.id}/similarity/{report.id}",
        status_code=status.HTTP_303_SEE_OTHER,
    )


@router.get("/courses/{course_id}/similarity/{report_id}", response_class=HTMLResponse)
def report_page(
    report_id: int, request: Request, session: SessionDep, access: CourseStaff
) -> Response:
    report = similarity_runs.in_course(session=session, course=access.course, report_id=report_id)
    return page(
        request,
        "similarity.html",
        access.user,
        course=access.course,
        report=report,
        state=similarity_runs.status_of(report),
        pairs=similarity_runs.counted_pairs(session=session, course=access.course, report=report),
    )


def _marked(code: str, spans: list[tuple[int, int]]) -> list[tuple[int, str, bool]]:
    """(line number, text, matched) for each line of ``code``."""
    matched = {line for first, last in spans for line in range(first, last + 1)}
    return [(n, text, n in matched) for n, text in enumerate(code.splitlines(), start=1)]


@router.get(
    "/courses/{course_id}/similarity/{report_id}/pairs/{index}", response_class=HTMLResponse
)
def pair_page(
    report_id: int, index: int, request: Request, session: SessionDep, access: CourseStaff
) -> Response:
    report = similarity_runs.in_course(session=session, course=access.course, report_id=report_id)
    pair = similarity_runs.counted_pair(
        session=session, course=access.course, report=report, index=index
    )
    left = session.get(Submission, pair.left_submission)
    right = session.get(Submission, pair.right_submission)
    if left is None or right is None:
        raise NotFoundError("One of the two submissions is gone.")
    return page(
        request,
        "similarity_pair.html",
        access.user,
        course=access.course,
        report=report,
        pair=pair,
        left=_marked(left.code, pair.left_lines),
        right=_marked(right.code, pair.right_lines),
    )
