"""Revocable sessions and tokens: a copied cookie dies at sign-out, a password change
ends the other sessions, a disabled account stops everywhere at once, tokens are
named, listed, revoked and expire (in the page and through the API)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from app.core.db import session_scope
from app.data import accounts, api_tokens
from app.models import ApiToken, utcnow
from tests.app.conftest import in_process_client, sign_in

GOOD = "long test password"


@pytest.fixture
def app_client(database: str) -> Iterator[TestClient]:
    with session_scope() as session:
        accounts.create_user(session=session, name="ada", password=GOOD)
        accounts.create_user(session=session, name="root", password=GOOD, role="admin")
    with in_process_client() as client:
        yield client


def second_browser(client: TestClient, cookies_from: TestClient) -> TestClient:
    """Another browser holding a copy of ``cookies_from``'s cookie (a stolen one)."""
    copy = TestClient(client.app)
    copy.cookies.update(dict(cookies_from.cookies))
    return copy


def signed_in(client: TestClient) -> bool:
    return client.get("/account", follow_redirects=False).status_code == 200


def test_a_copied_cookie_stops_working_when_its_owner_signs_out(
    app_client: TestClient,
) -> None:
    token = sign_in(app_client, "ada", GOOD)
    thief = second_browser(app_client, app_client)
    assert signed_in(thief)
    app_client.post("/logout", data={"csrf_token": token})
    assert not signed_in(thief)
    assert not signed_in(app_client)


def test_a_password_change_ends_every_other_session(app_client: TestClient) -> None:
    other = TestClient(app_client.app)
    sign_in(other, "ada", GOOD)
    token = sign_in(app_client, "ada", GOOD)
    answer = app_client.post(
        "/account/password",
        data={"current": GOOD, "new": "an even longer one", "csrf_token": token},
    )
    assert answer.status_code == 200 and "1 other session(s) signed out" in answer.text
    assert signed_in(app_client) and not signed_in(other)
    wrong = app_client.post(
        "/account/password", data={"current": "nope", "new": "another new one", "csrf_token": token}
    )
    assert wrong.status_code == 400 and "current password is wrong" in wrong.text


def test_an_admin_disables_an_account_and_everything_of_it_stops_at_once(
    app_client: TestClient,
) -> None:
    sign_in(app_client, "ada", GOOD)
    with session_scope() as session:
        ada = accounts.user_by_name(session=session, name="ada")
        assert ada is not None
        token, _ = api_tokens.create(session=session, user=ada, name="laptop")
        ada_id = ada.id
    bearer = {"Authorization": f"Bearer {token}"}
    admin = TestClient(app_client.app)
    admin_csrf = sign_in(admin, "root", GOOD)
    assert "ada" in admin.get("/admin/users").text
    assert TestClient(app_client.app).get("/api/problems", headers=bearer).status_code == 200
    admin.post(f"/admin/users/{ada_id}/disable", data={"csrf_token": admin_csrf})
    assert not signed_in(app_client)
    assert TestClient(app_client.app).get("/api/problems", headers=bearer).status_code == 401
    admin.post(f"/admin/users/{ada_id}/enable", data={"csrf_token": admin_csrf})
    assert TestClient(app_client.app).get("/api/problems", headers=bearer).status_code == 200
    learner = TestClient(app_client.app)
    learner_csrf = sign_in(learner, "ada", GOOD)
    assert learner.get("/admin/users").status_code == 403
    assert (
        learner.post(
            f"/admin/users/{ada_id}/disable", data={"csrf_token": learner_csrf}
        ).status_code
        == 403
    )


def test_tokens_are_named_listed_and_revoked_in_the_page(app_client: TestClient) -> None:
    csrf = sign_in(app_client, "ada", GOOD)
    made = app_client.post(
        "/account/tokens", data={"label": "laptop", "expires_days": "30", "csrf_token": csrf}
    )
    token = re.search(r'<code class="token">(jj_[^<]+)</code>', made.text)
    assert made.status_code == 201 and token
    bearer = {"Authorization": f"Bearer {token[1]}"}
    api = TestClient(app_client.app)
    listed = api.get("/api/tokens", headers=bearer).json()
    assert listed["count"] == 1 and listed["data"][0]["name"] == "laptop"
    assert listed["data"][0]["expires_at"] is not None
    token_id = listed["data"][0]["id"]
    app_client.post(f"/account/tokens/{token_id}/revoke", data={"csrf_token": csrf})
    assert api.get("/api/tokens", headers=bearer).status_code == 401


def test_tokens_through_the_api_and_expiry(app_client: TestClient) -> None:
    csrf = sign_in(app_client, "ada", GOOD)
    made = app_client.post(
        "/api/tokens", json={"name": "ci", "expires_in_days": 1}, headers={"X-CSRF-Token": csrf}
    )
    assert made.status_code == 201 and made.json()["token"].startswith("jj_")
    with session_scope() as session:
        ada = accounts.user_by_name(session=session, name="ada")
        assert ada is not None
        first, _ = api_tokens.create(session=session, user=ada, name="first")
    api = TestClient(app_client.app)
    bearer = {"Authorization": f"Bearer {first}"}
    second = {"Authorization": f"Bearer {made.json()['token']}"}
    assert api.get("/api/problems", headers=second).status_code == 200
    with session_scope() as session:
        row = session.get_one(ApiToken, made.json()["id"])
        row.expires_at = utcnow() - timedelta(seconds=1)
    assert api.get("/api/problems", headers=second).status_code == 401
    assert api.delete(f"/api/tokens/{made.json()['id']}", headers=bearer).status_code == 204
    assert api.delete(f"/api/tokens/{made.json()['id']}", headers=bearer).status_code == 404
    bad = app_client.post(
        "/api/tokens", json={"expires_in_days": 0}, headers={"X-CSRF-Token": csrf}
    )
    assert bad.status_code == 422


def test_a_token_cannot_mint_a_token_that_outlives_it(app_client: TestClient) -> None:
    """Issue 37: a 1-day token made a token that never expired and outlived its
    revocation. A token makes no token at all; the person signs in for that."""
    csrf = sign_in(app_client, "ada", GOOD)
    one_day = app_client.post(
        "/api/tokens", json={"name": "1 day", "expires_in_days": 1}, headers={"X-CSRF-Token": csrf}
    ).json()
    api = TestClient(app_client.app)
    bearer = {"Authorization": f"Bearer {one_day['token']}"}
    refused = api.post("/api/tokens", json={"name": "forever"}, headers=bearer)
    assert refused.status_code == 403
    assert "/account" in refused.json()["detail"]
    # Even beside a signed-in browser's cookie, the token is what the request is made with.
    both = app_client.post(
        "/api/tokens", json={"name": "forever"}, headers={**bearer, "X-CSRF-Token": csrf}
    )
    assert both.status_code == 403
    assert api.delete(f"/api/tokens/{one_day['id']}", headers=bearer).status_code == 204
    with session_scope() as session:
        assert session.query(ApiToken).count() == 0  # nothing of it is left working


def test_token_use_is_recorded_at_most_once_a_minute(app_client: TestClient) -> None:
    with session_scope() as session:
        ada = accounts.user_by_name(session=session, name="ada")
        assert ada is not None
        token, row = api_tokens.create(session=session, user=ada)
        token_id = row.id
    api = TestClient(app_client.app)
    api.get("/api/problems", headers={"Authorization": f"Bearer {token}"})
    with session_scope() as session:
        first = session.get_one(ApiToken, token_id).last_used_at
    api.get("/api/problems", headers={"Authorization": f"Bearer {token}"})
    with session_scope() as session:
        assert session.get_one(ApiToken, token_id).last_used_at == first
