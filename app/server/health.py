"""What operators and orchestrators ask: /healthz (the process answers), /readyz (the
database takes a write and a warm worker reported in) and /metrics (app/server/metrics.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as SqlTimeoutError

from app.core.config import settings
from app.core.db import session_scope
from app.errors import first_line
from app.grading import heartbeats, preparation

router = APIRouter()


@router.get("/healthz", tags=["health"])
def healthz() -> dict[str, str]:
    """Liveness: the process answers. Says nothing of the database (see /readyz)."""
    return {"status": "ok"}


@router.get("/readyz", tags=["health"])
def readyz() -> JSONResponse:
    """Readiness: the database takes a committed write, a grading process reported in
    the last 15 s, and a warm sandbox is ready. 503 with the reasons when not."""
    return JSONResponse(*readiness())


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """Prometheus' view of the queue, the verdicts and every worker (app/server/metrics.py)."""
    from app.server import metrics as prometheus  # at the first scrape, not at every start

    if not prometheus.allowed(
        token=settings.metrics_token,
        authorization=request.headers.get("authorization"),
        client=request.client.host if request.client else None,
        forwarded="x-forwarded-for" in request.headers,
    ):
        return JSONResponse(
            {
                "detail": "Metrics need JAXJUDGE_METRICS_TOKEN as a bearer token, or a scrape from this machine."
            },
            status_code=403,
        )
    return Response(prometheus.render(), media_type=prometheus.CONTENT_TYPE)


def readiness() -> tuple[dict[str, object], int]:
    """What /readyz answers, and its status."""
    problems: list[str] = []
    workers: list[dict[str, object]] = []
    try:
        with session_scope() as session:
            heartbeats.database_writable(session)
            workers = [
                {"name": w.name, "idle": w.idle_children, "pool": w.pool_size, "warm": w.warm}
                for w in heartbeats.live(session)
            ]
    except (OperationalError, SqlTimeoutError, InterfaceError) as error:
        problems.append(f"database: {first_line(error)}")
    if not problems and not workers:
        problems.append("no grading worker reported in the last 15 s")
    elif workers and not any(w["warm"] for w in workers):
        problems.append("no grading worker has a warm sandbox yet")
    body = {
        "ready": not problems,
        "problems": problems,
        "workers": workers,
        "trusted_runs": _trusted_runs(),
    }
    return body, 200 if not problems else 503


def _trusted_runs() -> dict[str, object]:
    """How far this process's trusted runs are (app/grading/preparation.py): information,
    not readiness. Learners are served meanwhile, and a problem's submissions wait."""
    progress = preparation.PROGRESS.snapshot()
    return {
        "running": progress.running,
        "total": progress.total,
        "gradable": len(progress.gradable),
        "diagnosable": len(progress.diagnosable),
        "failed": sorted(progress.failed),
    }
