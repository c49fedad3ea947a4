"""Password reset and email verification through a real SMTP server on 127.0.0.1: the
mails arrive (text and HTML), the tests follow their links; bad, used, expired and
stale links are refused and change nothing; the answer never says whether an account
exists; the admin's and the CLI's one-time links."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from app.core.config import settings
from app.core.db import session_scope
from app.data import account_mail, accounts, api_tokens
from app.mail import delivery
from app.models import MailMessage, OneTimeLink, User, utcnow
from app.vocabulary import IdSource, OutboxStatus, Role
from tests.app.conftest import form_token, in_process_client, sign_in
from tests.smtp_server import ReceivedMail, SmtpServer, smtp_server

OLD, NEW = "long test password", "a brand new passphrase"


@pytest.fixture(scope="module")
def server() -> Iterator[SmtpServer]:
    with smtp_server() as running:
        yield running


@pytest.fixture
def client(
    sqlite_database: str, server: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    monkeypatch.setattr(delivery, "INTERVAL", 3600.0)  # mail leaves when a test sends it
    monkeypatch.setattr(settings, "smtp_url", server.url)
    monkeypatch.setattr(settings, "public_url", None)
    server.inbox.mails.clear()
    with in_process_client() as test_client:
        yield test_client


def _account(name: str, email: str = "", source: IdSource = IdSource.VERIFIED) -> str:
    with session_scope() as session:
        user = accounts.create_user(session=session, name=name, password=OLD)
        user.email, user.email_source = email, source if email else IdSource.NONE
        return api_tokens.create(session=session, user=user)[0]


def _send(server: SmtpServer, count: int = 1) -> list[ReceivedMail]:
    delivery.deliver_due()
    return server.inbox.wait_for(count)


def _forgot(client: TestClient, name_or_email: str) -> str:
    token = form_token(client, "/password/forgot")
    answer = client.post(
        "/password/forgot", data={"name_or_email": name_or_email, "csrf_token": token}
    )
    assert answer.status_code == 200
    return answer.text


def _reset_form(client: TestClient, link: str) -> tuple[int, str]:
    """Follow ``link``; the status and the CSRF token of the form it shows."""
    shown = client.get(link.replace("http://testserver", ""))
    found = re.search(r'name="csrf_token" value="([^"]+)"', shown.text)
    return shown.status_code, found[1] if found else ""


def _mails() -> list[MailMessage]:
    with session_scope() as session:
        return list(session.scalars(select(MailMessage).order_by(MailMessage.id)))


def _signs_in(name: str, password: str) -> bool:
    with session_scope() as session:
        return accounts.authenticate(session=session, name=name, password=password).user is not None


def test_a_mailed_link_sets_the_password_and_signs_every_browser_out(
    client: TestClient, server: SmtpServer
) -> None:
    api_token = _account("ada", "ada@example.org")
    with in_process_client() as elsewhere:
        sign_in(elsewhere, "ada")
        answer = _forgot(client, "ADA")
        assert "If an account matches" in answer
        # The request only queued it: nothing reached the server before the deliverer ran.
        assert server.inbox.mails == [] and [m.status for m in _mails()] == ["pending"]
        (received,) = _send(server)
        assert received.recipients == ["ada@example.org"]
        assert "within 30 minutes" in received.text and "Choose a new password" in received.html
        (link,) = received.links()
        assert link in received.html

        first = client.get(link.replace("http://testserver", ""), follow_redirects=False)
        assert first.status_code == 303 and first.headers["location"] == "/password/reset"
        assert first.headers["referrer-policy"] == "no-referrer"
        form = client.get("/password/reset")
        assert form.headers["referrer-policy"] == "no-referrer" and "ada" in form.text
        token = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
        assert token
        done = client.post("/password/reset", data={"password": NEW, "csrf_token": token[1]})
        assert done.status_code == 200
        assert "1 signed-in browser(s) were signed out" in done.text
        assert "API tokens keep working" in done.text
        assert elsewhere.get("/account", follow_redirects=False).status_code == 303
    assert _signs_in("ada", NEW) and not _signs_in("ada", OLD)
    bearer = {"Authorization": f"Bearer {api_token}"}
    assert client.get("/api/tokens", headers=bearer).status_code == 200  # tokens kept, as said

    again, _ = _reset_form(client, link)
    assert again == 410
    assert "already used" in client.get(link.replace("http://testserver", "")).text


def test_an_expired_link_is_refused_and_changes_nothing(client: TestClient) -> None:
    _account("bea", "bea@example.org")
    with session_scope() as session:
        user = accounts.user_by_name(session=session, name="bea")
        assert user
        link = account_mail.reset_link(session=session, user=user, base_url="http://testserver")
    status, csrf = _reset_form(client, link)
    assert status == 200
    with session_scope() as session:
        session.execute(update(OneTimeLink).values(expires_at=utcnow() - timedelta(seconds=1)))
    refused = client.post("/password/reset", data={"password": NEW, "csrf_token": csrf})
    assert refused.status_code == 410 and "expired" in refused.text
    assert _signs_in("bea", OLD)


def test_bad_links_get_a_clear_page(client: TestClient) -> None:
    assert client.get("/password/reset/not-a-token").status_code == 400
    assert "not valid" in client.get("/password/reset/" + "x" * 500).text
    fresh = in_process_client()
    with fresh:
        token = form_token(fresh, "/password/forgot")
        posted = fresh.post("/password/reset", data={"password": NEW, "csrf_token": token})
        assert posted.status_code == 400 and "not valid" in posted.text


def test_the_same_answer_whether_or_not_an_account_matches(
    client: TestClient, server: SmtpServer
) -> None:
    _account("cy", "cy@example.org")
    _account("dee")  # no email
    _account("eve", "eve@example.org", IdSource.SELF_DECLARED)  # never verified
    answers = {
        name: _forgot(client, name)
        for name in ("cy", "nobody", "dee", "eve", "eve@example.org", "x@y.org")
    }
    strip = {k: re.sub(r'value="[^"]+"', "", v) for k, v in answers.items()}
    assert len(set(strip.values())) == 1
    assert [m.to_address for m in _mails()] == ["cy@example.org"]
    assert _forgot(client, "CY@example.org")  # by a verified address too
    assert [m.to_address for m in _mails()] == ["cy@example.org"] * 2


def test_a_new_link_voids_the_older_and_a_weak_password_keeps_the_link(client: TestClient) -> None:
    _account("fay", "fay@example.org")
    with session_scope() as session:
        user = accounts.user_by_name(session=session, name="fay")
        assert user
        older = account_mail.reset_link(session=session, user=user, base_url="http://testserver")
        newer = account_mail.reset_link(session=session, user=user, base_url="http://testserver")
    assert _reset_form(client, older)[0] == 410
    _status, csrf = _reset_form(client, newer)
    weak = client.post("/password/reset", data={"password": "password", "csrf_token": csrf})
    assert weak.status_code == 400 and "password" in weak.text
    ok = client.post("/password/reset", data={"password": NEW, "csrf_token": csrf})
    assert ok.status_code == 200 and _signs_in("fay", NEW)


def test_requests_are_throttled_per_account_and_per_address(client: TestClient) -> None:
    _account("gus", "gus@example.org")
    for _ in range(5):
        _forgot(client, "gus")
    assert len(_mails()) == 3  # per account
    for _ in range(5):
        _forgot(client, "nobody")
    _account("hal", "hal@example.org")
    _forgot(client, "hal")
    assert len(_mails()) == 3  # the address's ten are spent: silently nothing


def test_the_cli_and_the_admin_page_make_a_link_for_an_account_without_email(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.commands.cli import main

    with session_scope() as session:
        sso = accounts.new_account_without_password(session=session, name="ivy", role=Role.LEARNER)
        assert not accounts.has_password(sso)
        accounts.create_user(session=session, name="root", password=OLD, role=Role.ADMIN)
    assert main(["users", "reset-password", "ivy"]) == 0
    printed = capsys.readouterr()
    (link,) = re.findall(r"http://localhost:8000/password/reset/\S+", printed.out)
    assert "JAXJUDGE_PUBLIC_URL is unset" in printed.err
    status, csrf = _reset_form(client, link.replace("http://localhost:8000", ""))
    assert status == 200
    client.post("/password/reset", data={"password": NEW, "csrf_token": csrf})
    assert _signs_in("ivy", NEW)

    admin_csrf = sign_in(client, "root")
    with session_scope() as session:
        ivy = accounts.user_by_name(session=session, name="ivy")
        assert ivy
        ivy_id = ivy.id
    assert "Password link" in client.get("/admin/users").text
    shown = client.post("/admin/reset-links", data={"user_id": ivy_id, "csrf_token": admin_csrf})
    assert shown.status_code == 200 and shown.headers["referrer-policy"] == "no-referrer"
    (admin_link,) = re.findall(r"http://testserver/password/reset/[\w-]+", shown.text)
    with in_process_client() as learner:
        status, csrf = _reset_form(learner, admin_link)
        assert status == 200
        learner.post("/password/reset", data={"password": OLD + "!", "csrf_token": csrf})
    assert _signs_in("ivy", OLD + "!")
    sign_in(client, "ivy", OLD + "!")
    assert client.post("/admin/reset-links", data={"user_id": ivy_id}).status_code == 403


def test_a_reset_clears_the_sign_in_delay(client: TestClient) -> None:
    _account("jo", "jo@example.org")
    for _ in range(8):
        _signs_in("jo", "wrong guess")
    with session_scope() as session:
        user = accounts.user_by_name(session=session, name="jo")
        assert user and user.sign_in_blocked_until is not None
        link = account_mail.reset_link(session=session, user=user, base_url="")
    _status, csrf = _reset_form(client, link)
    client.post("/password/reset", data={"password": NEW, "csrf_token": csrf})
    assert _signs_in("jo", NEW)


# Email verification


def _change_email(client: TestClient, csrf: str, email: str) -> str:
    saved = client.post(
        "/account/profile", data={"email": email, "display_name": "", "csrf_token": csrf}
    )
    assert saved.status_code == 200
    return saved.text


def _user(name: str) -> User:
    with session_scope() as session:
        user = accounts.user_by_name(session=session, name=name)
        assert user
        session.expunge(user)
        return user


def test_a_changed_email_is_verified_by_its_link_and_a_post(
    client: TestClient, server: SmtpServer
) -> None:
    _account("kim", "kim@old.example.org")
    csrf = sign_in(client, "kim")
    assert "is on its way" in _change_email(client, csrf, "kim@new.example.org")
    kim = _user("kim")
    assert (kim.email_source, kim.email_verified_at) == (IdSource.SELF_DECLARED, None)
    assert "not verified" in client.get("/account").text
    (received,) = _send(server)
    assert received.recipients == ["kim@new.example.org"]
    assert "kim@new.example.org" in received.html
    (link,) = received.links()
    path = link.replace("http://testserver", "")
    with in_process_client() as scanner:  # a mail scanner's GET (no session) verifies nothing
        shown = scanner.get(path)
        assert shown.status_code == 200 and "Confirm" in shown.text
    assert _user("kim").email_source == IdSource.SELF_DECLARED
    confirm = form_token(client, path)
    done = client.post(path, data={"csrf_token": confirm})
    assert done.status_code == 200 and "is confirmed" in done.text
    kim = _user("kim")
    assert kim.email_source == IdSource.VERIFIED and kim.email_verified_at is not None
    assert "kim@new.example.org: verified" in client.get("/account").text
    assert client.post(path, data={"csrf_token": confirm}).status_code == 410


def test_a_link_for_an_address_no_longer_the_account_s_is_refused(
    client: TestClient, server: SmtpServer
) -> None:
    _account("lee")
    csrf = sign_in(client, "lee")
    _change_email(client, csrf, "lee@first.example.org")
    (first,) = _send(server)
    _change_email(client, csrf, "")  # no address: no new link either
    path = first.links()[0].replace("http://testserver", "")
    refused = client.get(path)
    assert refused.status_code == 409 and "is no longer this account" in refused.text
    assert client.post(path, data={"csrf_token": csrf}).status_code == 409
    assert _user("lee").email_verified_at is None
    _change_email(client, csrf, "lee@second.example.org")
    assert client.get(path).status_code == 410  # the new address's link voided it
    resent = client.post("/account/email/verify", data={"csrf_token": csrf})
    assert "lee@second.example.org is on its way" in resent.text
    assert [m.to_address for m in _mails()][-1] == "lee@second.example.org"


def test_required_verification_asks_an_email_at_sign_up_and_holds_submits(
    client: TestClient, server: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "require_verified_email", True)
    token = form_token(client, "/signup")
    assert 'name="email"' in client.get("/signup").text
    no_email = client.post("/signup", data={"name": "max", "password": OLD, "csrf_token": token})
    assert no_email.status_code == 400 and "email" in no_email.text
    assert not _signs_in("max", OLD)  # nothing was written
    client.post(
        "/signup",
        data={"name": "max", "password": OLD, "email": "max@example.org", "csrf_token": token},
    )
    with session_scope() as session:
        user = accounts.user_by_name(session=session, name="max")
        assert user and user.email_source == IdSource.SELF_DECLARED
        bearer = {"Authorization": f"Bearer {api_tokens.create(session=session, user=user)[0]}"}
    submit = {"problem": "scan-microbatched-grads", "code": "x = 1", "mode": "run"}
    held = client.post("/api/submissions", json=submit, headers=bearer)
    assert held.status_code == 403 and "Confirm your email" in held.text
    (received,) = _send(server)
    path = received.links()[0].replace("http://testserver", "")
    client.post(path, data={"csrf_token": form_token(client, path)})
    assert client.post("/api/submissions", json=submit, headers=bearer).status_code != 403
    assert {m.status for m in _mails()} == {OutboxStatus.SENT}
