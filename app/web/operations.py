"""The operators' page: grading processes, the trusted runs of a first start, and the
queue, stuck submissions first."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.core.request_db import SessionDep
from app.grading import preparation
from app.reports import operations
from app.web.guards import Admin
from app.web.render import page

router = APIRouter(include_in_schema=False)


@router.get("/admin/workers", response_class=HTMLResponse)
def workers_and_queue(request: Request, session: SessionDep, admin: Admin) -> Response:
    """Every grading process (from its heartbeat) and every unfinished submission,
    stuck ones first (app/reports/operations.py)."""
    entries = operations.unfinished(session=session)
    return page(
        request,
        "admin_workers.html",
        admin,
        workers=operations.workers(session=session),
        depth=operations.depth_by_status(session=session),
        entries=sorted(entries, key=lambda entry: (entry.why_stuck is None, entry.submission.id)),
        stuck=sum(entry.why_stuck is not None for entry in entries),
        preparation=preparation.PROGRESS.snapshot(),
    )
