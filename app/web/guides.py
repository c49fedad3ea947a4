"""/help/<guide>: the guides in docs/ that people running a course need while they use
the pages (the LMS guide for the admin's LMS page), rendered as the problems' text is.
Public, as the project's documentation is; only the guides named here are served."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.core.markdown import render_markdown
from app.errors import NotFoundError
from app.web.render import page
from grader.config import PROJECT_ROOT

router = APIRouter(include_in_schema=False)
GUIDES = {"lti": "lti.md"}


@router.get("/help/{guide}", response_class=HTMLResponse)
def guide(guide: str, request: Request) -> Response:
    if guide not in GUIDES:
        raise NotFoundError(f"No guide {guide!r}: there is {', '.join(sorted(GUIDES))}.")
    text = (PROJECT_ROOT / "docs" / GUIDES[guide]).read_text()
    return page(request, "guide.html", None, body=render_markdown(text), name=GUIDES[guide])
