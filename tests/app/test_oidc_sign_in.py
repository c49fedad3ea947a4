"""OpenID Connect sign-in against a real provider on 127.0.0.1 (tests/oidc_provider.py):
the flow, linking, and every bad answer a provider or an attacker can give, each a clear
page that leaves no session, account or identity behind."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from app.core import throttle
from app.core.config import settings
from app.core.db import session_scope
from app.data import accounts
from app.models import ExternalIdentity, SignInRequest, User, utcnow
from app.sso import oidc_discovery, oidc_providers
from app.vocabulary import IdSource, Role
from tests.app.conftest import form_token, in_process_client, sign_in
from tests.oidc_provider import Person, Provider

CALLBACK = "http://testserver/sso/oidc/uni/callback"


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    started = Provider()
    started.redirect_uris.add(CALLBACK)
    yield started
    started.stop()


@pytest.fixture
def idp(provider: Provider, monkeypatch: pytest.MonkeyPatch) -> Iterator[Provider]:
    """The provider as each test finds it: well-behaved, configured, nothing cached."""
    provider.person, provider.deny, provider.next_token, provider.broken = Person(), False, {}, {}
    provider.token_auth = "client_secret_basic"
    monkeypatch.setattr(settings, "oidc_providers", json.dumps([provider.setting()]))
    oidc_discovery.forget()
    yield provider
    oidc_discovery.forget()


@pytest.fixture
def client(sqlite_database: str, idp: Provider) -> Iterator[TestClient]:
    with in_process_client() as test_client:
        yield test_client


def through_provider(client: TestClient, start: httpx.Response) -> httpx.Response:
    """Follow the start's redirect to the provider and its redirect back to us."""
    assert start.status_code == 303, start.text
    at_provider = httpx.get(start.headers["location"], follow_redirects=False)
    assert at_provider.status_code == 302, at_provider.text
    return client.get(at_provider.headers["location"], follow_redirects=False)


def sso(client: TestClient, next_path: str = "") -> httpx.Response:
    query = f"?next={next_path}" if next_path else ""
    return through_provider(
        client, client.get(f"/sso/oidc/uni/start{query}", follow_redirects=False)
    )


def signed_in_as(client: TestClient) -> str | None:
    answer = client.get("/account", follow_redirects=False)
    if answer.status_code != 200:
        return None
    found = re.search(r'class="who" href="/account">([^<]+)<', answer.text)
    return found[1] if found else None


def counts() -> tuple[int, int]:
    with session_scope() as session:
        users = session.scalar(select(func.count()).select_from(User)) or 0
        identities = session.scalar(select(func.count()).select_from(ExternalIdentity)) or 0
        return users, identities


def test_a_first_sign_in_makes_an_account_and_comes_back_to_next(
    client: TestClient, idp: Provider
) -> None:
    idp.person = Person(extra={"student_number": "s1234567"})
    oidc_providers_setting = idp.setting(student_id_claim="student_number")
    settings.oidc_providers = json.dumps([oidc_providers_setting])
    landed = sso(client, "/courses")
    assert landed.status_code == 303 and landed.headers["location"] == "/courses"
    name = signed_in_as(client)
    assert name
    with session_scope() as session:
        user = session.scalars(select(User).where(User.name == name)).one()
        assert (user.email, user.email_source) == ("ada@uni.example", IdSource.SSO)
        assert user.email_verified_at is not None
        assert (user.student_id, user.student_id_source) == ("s1234567", IdSource.SSO)
        assert user.display_name == "Ada Lovelace"
        assert not accounts.has_password(user)
    # PKCE: the token call carried the verifier; the secret went as HTTP Basic.
    assert idp.token_requests[-1]["code_verifier"] and "client_secret" not in idp.token_requests[-1]
    # The same person again: the same account, no new one.
    client.cookies.clear()
    assert sso(client).status_code == 303
    assert signed_in_as(client) == name
    assert counts() == (1, 1)


def test_an_unverified_email_is_not_taken_and_sign_in_still_works(
    client: TestClient, idp: Provider
) -> None:
    idp.person = Person(sub="u-2", email="claimed@uni.example", email_verified=False)
    assert sso(client).status_code == 303
    with session_scope() as session:
        user = session.scalars(select(User)).one()
        assert user.email == "" and user.email_verified_at is None


def test_client_secret_post_when_the_provider_takes_only_that(
    client: TestClient, idp: Provider
) -> None:
    idp.token_auth = "client_secret_post"
    assert sso(client).status_code == 303
    assert idp.token_requests[-1]["client_secret"]


def test_a_rotated_key_is_fetched_again(
    client: TestClient, idp: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sso(client).status_code == 303
    monkeypatch.setattr(oidc_discovery, "REFRESH_SECONDS", 0.0)
    idp.rotate_key()
    client.cookies.clear()
    assert sso(client).status_code == 303 and signed_in_as(client)


def refused(answer: httpx.Response, code: int, words: str) -> None:
    assert answer.status_code == code, answer.text
    assert "Sign-in did not work" in answer.text and words in answer.text


@pytest.mark.parametrize(
    "wrong",
    [
        {"nonce": "not-the-nonce-we-sent"},
        {"key": "other"},
        {"alg": "none"},
        {"alg": "HS256"},
        {"aud": "someone-else"},
        {"aud": ["jaxjudge-oidc", "someone-else"]},  # several audiences, no azp
        {"iss": "https://evil.example"},
        {"age": 3600},  # expired an hour ago
        {"claims": {"sub": ""}},
    ],
    ids=lambda wrong: next(iter(wrong)) + "=" + str(next(iter(wrong.values())))[:20],
)
def test_an_id_token_we_cannot_trust_changes_nothing(
    client: TestClient, idp: Provider, wrong: dict[str, Any]
) -> None:
    idp.next_token = wrong
    refused(sso(client), 400, "cannot trust")
    assert signed_in_as(client) is None and counts() == (0, 0)


def test_a_forged_state_is_refused(client: TestClient) -> None:
    answer = client.get(f"{CALLBACK}?state=made-up&code=abc", follow_redirects=False)
    refused(answer, 400, "not started in this browser")
    refused(client.get(CALLBACK, follow_redirects=False), 400, "not started in this browser")
    refused(client.get(f"{CALLBACK}?state={'x' * 5000}&code=a"), 400, "not started in this browser")


def test_a_callback_sent_to_another_browser_signs_nobody_in_there(
    client: TestClient, idp: Provider
) -> None:
    """Login CSRF: an attacker signs in at the provider as themselves and sends the
    callback URL to a victim, whose browser would land in the attacker's account."""
    start = client.get("/sso/oidc/uni/start", follow_redirects=False)
    back = httpx.get(start.headers["location"], follow_redirects=False).headers["location"]
    with in_process_client() as victim:
        refused(victim.get(back, follow_redirects=False), 400, "not started in this browser")
        assert signed_in_as(victim) is None
    assert counts() == (0, 0)
    # Refused unspent: the browser that started it still finishes it.
    assert client.get(back, follow_redirects=False).status_code == 303
    assert signed_in_as(client)


def test_a_callback_used_twice_signs_in_once(client: TestClient, idp: Provider) -> None:
    start = client.get("/sso/oidc/uni/start", follow_redirects=False)
    back = httpx.get(start.headers["location"], follow_redirects=False).headers["location"]
    assert client.get(back, follow_redirects=False).status_code == 303
    client.cookies.clear()
    replayed = client.get("/sso/oidc/uni/start", follow_redirects=False)  # a state of its own
    assert replayed.status_code == 303
    refused(client.get(back, follow_redirects=False), 400, "not started in this browser")
    with in_process_client() as other_browser:  # an attacker who saw the URL
        refused(other_browser.get(back, follow_redirects=False), 400, "not started in this browser")
        assert signed_in_as(other_browser) is None


def test_an_expired_state_is_refused(client: TestClient) -> None:
    start = client.get("/sso/oidc/uni/start", follow_redirects=False)
    back = httpx.get(start.headers["location"], follow_redirects=False).headers["location"]
    with session_scope() as session:
        session.execute(update(SignInRequest).values(expires_at=utcnow() - timedelta(seconds=1)))
    refused(client.get(back, follow_redirects=False), 400, "not valid any more")
    assert counts() == (0, 0)


def test_a_state_from_another_provider_is_refused(client: TestClient, idp: Provider) -> None:
    settings.oidc_providers = json.dumps([idp.setting(), idp.setting(name="other")])
    start = client.get("/sso/oidc/other/start", follow_redirects=False)
    state = re.search(r"state=([^&]+)", start.headers["location"])
    assert state
    answer = client.get(f"{CALLBACK}?state={state[1]}&code=x", follow_redirects=False)
    refused(answer, 400, "not valid any more")


def test_the_provider_saying_access_denied(client: TestClient, idp: Provider) -> None:
    idp.deny = True
    refused(sso(client), 400, "You cancelled the sign-in")
    assert counts() == (0, 0)


def test_a_callback_without_a_code(client: TestClient) -> None:
    start = client.get("/sso/oidc/uni/start", follow_redirects=False)
    state = re.search(r"state=([^&]+)", start.headers["location"])
    assert state
    refused(client.get(f"{CALLBACK}?state={state[1]}"), 400, "without a sign-in code")


@pytest.mark.parametrize(
    ("path", "broken", "at"),
    [
        ("/.well-known/openid-configuration", 500, "start"),
        ("/.well-known/openid-configuration", "<html>not json</html>", "start"),
        ("/.well-known/openid-configuration", '{"issuer": "https://evil.example"}', "start"),
        ("/token", 500, "callback"),
        ("/token", "garbage", "callback"),
        ("/token", '{"access_token": "x"}', "callback"),  # no id_token
        ("/jwks", 503, "callback"),
        ("/jwks", '{"keys": "none"}', "callback"),
    ],
)
def test_a_provider_that_is_down_or_talks_garbage(
    client: TestClient, idp: Provider, path: str, broken: int | str, at: str
) -> None:
    if at == "start":
        idp.broken[path] = broken
        refused(client.get("/sso/oidc/uni/start"), 502, "is not answering properly")
        with session_scope() as session:  # nothing written for a sign-in never sent
            assert session.scalar(select(func.count()).select_from(SignInRequest)) == 0
    else:
        start = client.get("/sso/oidc/uni/start", follow_redirects=False)
        back = httpx.get(start.headers["location"], follow_redirects=False).headers["location"]
        idp.broken[path] = broken
        refused(client.get(back, follow_redirects=False), 502, "is not answering properly")
    assert signed_in_as(client) is None and counts() == (0, 0)


def test_a_provider_that_cannot_be_reached(client: TestClient, idp: Provider) -> None:
    settings.oidc_providers = json.dumps([idp.setting(issuer="http://127.0.0.1:9")])
    refused(client.get("/sso/oidc/uni/start"), 502, "is not answering properly")


def test_sign_ins_started_from_one_address_are_throttled(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(throttle, "sso_sign_ins", throttle.SlidingWindow(limit=2, seconds=300))
    for _ in range(2):
        assert client.get("/sso/oidc/uni/start", follow_redirects=False).status_code == 303
    refused(client.get("/sso/oidc/uni/start"), 429, "Too many sign-ins from here")
    with session_scope() as session:
        assert session.scalar(select(func.count()).select_from(SignInRequest)) == 2


def test_an_unknown_provider(client: TestClient) -> None:
    refused(client.get("/sso/oidc/nope/start"), 404, "no such sign-in provider")
    refused(client.get("/sso/oidc/nope/callback?state=x&code=y"), 404, "no such sign-in provider")


def test_a_disabled_account_is_refused(client: TestClient) -> None:
    assert sso(client).status_code == 303
    client.cookies.clear()
    with session_scope() as session:
        session.scalars(select(User)).one().disabled_at = utcnow()
    refused(sso(client), 403, "disabled")
    assert signed_in_as(client) is None


def test_allowed_domains_admit_only_verified_addresses_there(
    client: TestClient, idp: Provider
) -> None:
    settings.oidc_providers = json.dumps([idp.setting(allowed_domains=["uni.example"])])
    idp.person = Person(email="ada@gmail.example")
    refused(sso(client), 403, "uni.example")
    idp.person = Person(email="ada@uni.example", email_verified=False)
    refused(sso(client), 403, "uni.example")
    assert counts() == (0, 0)
    idp.person = Person(email="ada@UNI.example")
    assert sso(client).status_code == 303


def make_user(name: str, role: Role = Role.LEARNER) -> None:
    with session_scope() as session:
        accounts.create_user(session=session, name=name, password="long test password", role=role)


def link(client: TestClient) -> httpx.Response:
    token = form_token(client, "/account")
    start = client.post("/sso/oidc/uni/link", data={"csrf_token": token}, follow_redirects=False)
    return through_provider(client, start)


def test_linking_from_the_account_page_then_signing_in_with_it(client: TestClient) -> None:
    make_user("grace")
    sign_in(client, "grace")
    page = client.get("/account").text
    assert "Link University account" in page
    landed = link(client)
    assert landed.status_code == 303 and landed.headers["location"] == "/account"
    assert "uni" in client.get("/account").text and counts() == (1, 1)
    client.cookies.clear()
    assert sso(client).status_code == 303 and signed_in_as(client) == "grace"


def test_linking_needs_the_form_token(client: TestClient) -> None:
    make_user("grace")
    sign_in(client, "grace")
    answer = client.post("/sso/oidc/uni/link", data={"csrf_token": "x"}, follow_redirects=False)
    assert answer.status_code in (400, 403)
    assert client.post("/sso/oidc/uni/link", follow_redirects=False).status_code in (400, 403)


def test_an_identity_linked_elsewhere_stays_there(client: TestClient) -> None:
    assert sso(client).status_code == 303  # the identity makes its own account
    client.cookies.clear()
    make_user("grace")
    sign_in(client, "grace")
    refused(link(client), 409, "another jaxjudge account")
    assert counts() == (2, 1)


def test_linking_finished_in_another_browser_is_refused(client: TestClient) -> None:
    make_user("grace")
    sign_in(client, "grace")
    token = form_token(client, "/account")
    start = client.post("/sso/oidc/uni/link", data={"csrf_token": token}, follow_redirects=False)
    back = httpx.get(start.headers["location"], follow_redirects=False).headers["location"]
    with in_process_client() as other_browser:
        refused(other_browser.get(back, follow_redirects=False), 400, "not started in this browser")
        assert signed_in_as(other_browser) is None
    assert counts() == (1, 0)


def test_unlinking_never_removes_the_only_way_in(client: TestClient) -> None:
    assert sso(client).status_code == 303
    with session_scope() as session:
        identity = session.scalars(select(ExternalIdentity)).one().id
    token = form_token(client, "/account")
    answer = client.post(f"/account/identities/{identity}/unlink", data={"csrf_token": token})
    refused(answer, 409, "only way to sign in")
    assert counts() == (1, 1)


def test_unlinking_with_a_password_left(client: TestClient) -> None:
    make_user("grace")
    sign_in(client, "grace")
    link(client)
    with session_scope() as session:
        identity = session.scalars(select(ExternalIdentity)).one().id
    token = form_token(client, "/account")
    answer = client.post(
        f"/account/identities/{identity}/unlink", data={"csrf_token": token}, follow_redirects=False
    )
    assert answer.status_code == 303 and counts() == (1, 0)


def test_the_sign_in_page_shows_a_button_per_provider(client: TestClient) -> None:
    page = client.get("/login?next=/courses").text
    assert 'href="/sso/oidc/uni/start?next=/courses"' in page
    assert "Sign in with University account" in page and 'name="password"' in page


def test_passwords_turned_off(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    make_user("grace")
    make_user("root", Role.ADMIN)
    monkeypatch.setattr(settings, "password_sign_in", False)
    page = client.get("/login").text
    assert "Sign in with University account" in page and 'name="password"' not in page
    assert "/signup" not in page
    assert client.get("/signup").status_code == 403
    token = form_token(client, "/login?password=1")
    answer = client.post(
        "/login", data={"name": "grace", "password": "long test password", "csrf_token": token}
    )
    assert answer.status_code == 403 and "administrators only" in answer.text
    assert signed_in_as(client) is None
    assert (
        client.post("/signup", data={"name": "eve", "password": "long test password"}).status_code
        == 403
    )
    assert counts() == (2, 0)
    token = form_token(client, "/login?password=1")  # the way back in for an administrator
    client.post(
        "/login", data={"name": "root", "password": "long test password", "csrf_token": token}
    )
    assert signed_in_as(client) == "root"


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("{", "not a JSON list"),
        ('[{"name": "uni"}]', "[0.label]"),
        (
            '[{"name": "Uni Ver", "label": "x", "issuer": "https://a.example", "client_id": "c", "client_secret": "s"}]',
            "[0.name]",
        ),
        (
            '[{"name": "u", "label": "x", "issuer": "http://idp.example", "client_id": "c", "client_secret": "s"}]',
            "https://",
        ),
        (
            '[{"name": "u", "label": "x", "issuer": "https://a.example", "client_id": "c", "client_secret": "s", "scopes": "email"}]',
            "openid",
        ),
        (
            '[{"name": "u", "label": "x", "issuer": "https://a.example", "client_id": "c", "client_secret": "s", "secret": 1}]',
            "[0.secret]",
        ),
        ("/nonexistent/providers.json", "cannot read the file"),
    ],
)
def test_provider_settings_mistakes_name_the_field(raw: str, words: str) -> None:
    with pytest.raises(oidc_providers.ProviderSettingsError) as raised:
        oidc_providers.parse(raw)
    assert words in str(raised.value)


def test_provider_settings_from_a_file_and_no_duplicates(
    tmp_path: Path, provider: Provider
) -> None:
    path = tmp_path / "providers.json"
    path.write_text(json.dumps([provider.setting()]))
    assert [p.name for p in oidc_providers.parse(str(path))] == ["uni"]
    twice = json.dumps([provider.setting(), provider.setting()])
    with pytest.raises(oidc_providers.ProviderSettingsError, match="twice"):
        oidc_providers.parse(twice)
