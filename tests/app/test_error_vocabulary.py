"""One vocabulary for "not found", "forbidden" and "conflict": the API, the pages and
their guards raise app/errors.py's kinds (NotFoundError, ForbiddenError,
ConflictError), answered once by app/server/error_handlers.py (JSON ``{"detail"}``
under /api/, a page elsewhere); never an ``HTTPException`` with those statuses.
HTTPException stays for what has no kind: 401 with its WWW-Authenticate header, 413,
503 with Retry-After."""

from __future__ import annotations

import ast
import re

from fastapi.testclient import TestClient

from grader.config import PROJECT_ROOT
from tests.app.conftest import sign_in, token_for

SCANNED = ["app/api", "app/web", "app/core"]
DOMAIN_STATUSES = {403, 404, 409}


def http_exception_statuses(source: str) -> list[tuple[int, int]]:
    """(line, status) of each ``HTTPException(...)`` raised with a literal status."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        called = node.func
        name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", "")
        if not name.endswith("HTTPException"):
            continue
        given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "status_code")]
        for value in given:
            if isinstance(value, ast.Constant) and isinstance(value.value, int):
                found.append((node.lineno, value.value))
            elif isinstance(value, ast.Attribute) and (
                code := re.fullmatch(r"HTTP_(\d{3})_\w+", value.attr)
            ):
                found.append((node.lineno, int(code[1])))
    return found


def test_routes_and_guards_raise_the_domain_kinds_not_http_exceptions() -> None:
    offenders = [
        f"{path.relative_to(PROJECT_ROOT)}:{line} HTTPException({code})"
        for folder in SCANNED
        for path in sorted((PROJECT_ROOT / folder).rglob("*.py"))
        for line, code in http_exception_statuses(path.read_text())
        if code in DOMAIN_STATUSES
    ]
    assert offenders == []


def test_an_http_exception_is_found_by_its_status_however_it_is_spelled() -> None:
    source = (
        "raise HTTPException(status.HTTP_404_NOT_FOUND, 'gone')\n"
        "raise fastapi.HTTPException(403)\n"
        "raise HTTPException(status_code=status.HTTP_409_CONFLICT, detail='busy')\n"
        "raise HTTPException(status.HTTP_401_UNAUTHORIZED, 'who?', headers={})\n"
        "raise NotFoundError('gone')\n"
    )
    assert http_exception_statuses(source) == [(1, 404), (2, 403), (3, 409), (4, 401)]


NO_SUCH = "Unknown problem 'no-such'. The problems are listed at /api/problems."


def test_the_api_answers_each_kind_as_detail_with_its_status(client: TestClient) -> None:
    ada = token_for("ada")
    answers = {
        "DELETE /api/tokens/999": (404, "No token 999 of yours."),
        "POST /api/tokens": (
            403,
            "An API token cannot create API tokens: create them on your account page"
            " (/account) after signing in.",
        ),
        "PUT /api/problems/no-such/complete": (404, NO_SUCH),
        "POST /api/problems/no-such/hints": (404, NO_SUCH),
        "GET /api/submissions/999": (404, "No submission 999."),
    }
    for request, (code, detail) in answers.items():
        method, path = request.split()
        answer = client.request(method, path, headers=ada, json={"name": "t"})
        assert (answer.status_code, answer.json()) == (code, {"detail": detail}), request


def test_an_expired_form_is_forbidden_in_the_api_and_on_a_page(client: TestClient) -> None:
    token_for("ada")
    sign_in(client, "ada")
    api = client.post("/api/tokens", json={"name": "t"}, headers={"X-CSRF-Token": "stale"})
    expired = "This form has expired; reload the page and try again."
    assert (api.status_code, api.json()) == (403, {"detail": expired})
    page = client.post("/account/tokens", data={"label": "t", "csrf_token": "stale"})
    assert page.status_code == 403 and expired in page.text
    assert page.headers["content-type"].startswith("text/html")
