"""The light client's wheel, for `%pip install` from a notebook (app/core/client_wheel.py).
Public: the client holds no secret, and a learner installs it before signing in."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from app.core import client_wheel

router = APIRouter(include_in_schema=False)
PATH = f"/client/{client_wheel.FILENAME}"


@router.get(PATH)
def client_wheel_file() -> Response:
    return Response(
        client_wheel.wheel(),
        media_type="application/octet-stream",
        headers={
            "Content-Disposition": f'attachment; filename="{client_wheel.FILENAME}"',
            "Cache-Control": "public, max-age=3600",
        },
    )
