"""Security headers on every answer, request bodies bounded before they are read, and
text that is not valid Unicode refused with a message (app/core/body_limits_and_headers.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.core.config import grader_settings, settings
from app.core.db import session_scope
from app.data import accounts, api_tokens


@pytest.fixture
def bearer(database: str) -> dict[str, str]:
    with session_scope() as session:
        user = accounts.create_user(session=session, name="ada", password="long test password")
        return {"Authorization": f"Bearer {api_tokens.create(session=session, user=user)[0]}"}


@pytest.mark.parametrize(
    "path", ["/login", "/api/problems", "/no-such-page", "/docs", "/static/style.css"]
)
def test_every_answer_carries_the_security_headers(client: TestClient, path: str) -> None:
    headers = client.get(path).headers
    policy = headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "script-src 'self';" in policy
    assert "unsafe-eval" not in policy
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"


def test_lms_framing_is_allowed_only_to_the_configured_origins(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JAXJUDGE_LMS_FRAME_ORIGINS: those LMSs (and no one else) may frame the pages, and
    the session cookie is SameSite=None so that it comes back inside their frame."""
    from app.server.main import create_app

    monkeypatch.setattr(settings, "lms_frame_origins", "https://canvas.uni.example")
    monkeypatch.setattr(settings, "secure_cookies", True)
    with TestClient(create_app(workers=0, prepare=False), base_url="https://testserver") as app:
        answer = app.get("/login")
    policy = answer.headers["content-security-policy"]
    assert "frame-ancestors 'self' https://canvas.uni.example" in policy
    assert "x-frame-options" not in answer.headers
    cookie = answer.headers["set-cookie"].lower()
    assert "samesite=none" in cookie and "secure" in cookie and "httponly" in cookie
    assert cookie.endswith("; partitioned")  # kept in the LMS's frame under the LMS's site


def test_pages_hold_no_inline_script(client: TestClient) -> None:
    for path in ("/login", "/signup", "/docs"):
        html = client.get(path).text
        assert "<script>" not in html and "onclick" not in html


def test_a_declared_oversized_body_is_refused_before_authentication(client: TestClient) -> None:
    limit = 2 * grader_settings.max_source_bytes + 64 * 1024
    answer = client.post(
        "/api/submissions",
        content=b"x" * (limit + 1),
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 413  # not 401: the body was never read
    assert "larger than this address accepts" in answer.json()["detail"]
    assert answer.headers["connection"] == "close"


def test_a_form_gets_the_small_limit(client: TestClient) -> None:
    answer = client.post("/login", data={"name": "x" * (settings.max_request_bytes + 1)})
    assert answer.status_code == 413


def test_a_chunked_body_is_cut_off_at_the_limit(client: TestClient) -> None:
    sent = []

    def chunks() -> Iterator[bytes]:
        for _ in range(100):  # 6.4 MB if it were all read
            sent.append(1)
            yield b"x" * 65536

    answer = client.post(
        "/api/submissions", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 413


def test_a_submission_just_under_the_source_limit_is_accepted(
    client: TestClient, bearer: dict[str, str]
) -> None:
    code = "#" * (grader_settings.max_source_bytes - 1)
    answer = client.post(
        "/api/submissions",
        json={"problem": "scan-microbatched-grads", "code": code},
        headers=bearer,
    )
    assert answer.status_code == 202


def test_a_lone_surrogate_is_a_422_with_a_message(
    client: TestClient, bearer: dict[str, str]
) -> None:
    body = b'{"problem": "scan-microbatched-grads", "code": "x = \'\\ud800\'"}'
    answer = client.post(
        "/api/submissions",
        content=body,
        headers={**bearer, "Content-Type": "application/json"},
    )
    assert answer.status_code == 422
    assert "lone surrogate" in str(answer.json()["detail"])


def test_undecodable_form_text_is_refused_with_a_message(client: TestClient) -> None:
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/signup").text)
    assert token
    answer = client.post(
        "/signup",
        content=b"name=a%ED%A0%80b&password=long+test+password&csrf_token=" + token[1].encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    # Bytes that are not UTF-8 arrive as U+FFFD: the name rule refuses them, never a 500.
    assert answer.status_code == 400 and "only ASCII" in answer.text
