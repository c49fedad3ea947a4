"""File downloads the browser saves: CSV exports, for pages and API alike."""

from __future__ import annotations

from fastapi.responses import Response


def csv_response(body: str, filename: str) -> Response:
    # A byte-order mark so spreadsheets read the file as UTF-8.
    return Response(
        "\ufeff" + body,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
