"""/docs: the API's reference, from the vendored Swagger UI (static/vendor/swagger-ui).
FastAPI's own page loads it from a CDN; classrooms are often offline."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

router = APIRouter(include_in_schema=False)


@router.get("/docs")
def api_docs() -> Response:
    return HTMLResponse(API_DOCS_PAGE)


# The vendored Swagger UI, started by a script file: the pages allow no inline script.
API_DOCS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>jaxjudge API</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/vendor/swagger-ui/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/static/vendor/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/static/api-docs.js"></script></body></html>
"""
