"""Mail delivery (app/mail/): the outbox sent to a real SMTP server on 127.0.0.1 (plain,
STARTTLS with login, implicit TLS), or to the data dir's folder; refusals and a server
that is down are retried with back-off then failed, shown on /admin/mail and resent."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import ipaddress
import re
import smtplib
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from fastapi.testclient import TestClient

from app.core.config import grader_settings, settings
from app.core.db import session_scope
from app.data import accounts, mail
from app.mail import delivery, transport
from app.models import MailMessage, utcnow
from app.vocabulary import MailKind, OutboxStatus, Role
from tests.app.conftest import in_process_client, sign_in
from tests.smtp_server import smtp_server


@pytest.fixture(autouse=True)
def no_background_rounds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The server's own deliverer waits an hour between rounds: each test sends when it
    says so; mail without a server goes to this test's folder."""
    monkeypatch.setattr(delivery, "INTERVAL", 3600.0)
    monkeypatch.setattr(grader_settings, "data_dir", tmp_path / "var")
    monkeypatch.setattr(settings, "mail_from", "jaxjudge <noreply@judge.example>")


def _queue(to_address: str = "ada@example.org") -> int:
    with session_scope() as session:
        row = mail.queue(
            session=session, kind=MailKind.TEST, to_address=to_address, template="test",
            address=to_address,
        )  # fmt: skip
        return row.id


def _row(row_id: int) -> MailMessage:
    with session_scope() as session:
        row = session.get(MailMessage, row_id)
        assert row is not None
        session.expunge(row)
        return row


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own CA): (cert, key)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return folder / "cert.pem", folder / "key.pem"


def _server_context(certificate: tuple[Path, Path]) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    return context


def _only(user: str, password: str) -> Any:
    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
        ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
            user.encode(),
            password.encode(),
        )
        return AuthResult(success=ok)

    return authenticate


def test_a_mail_arrives_with_text_and_html_and_its_headers(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with smtp_server() as server:
        monkeypatch.setattr(settings, "smtp_url", server.url)
        row_id = _queue()
        assert delivery.deliver_due() == 1
        (received,) = server.inbox.wait_for(1)
    assert received.recipients == ["ada@example.org"]
    assert received.message.get_content_type() == "multipart/alternative"
    assert "mail from jaxjudge reaches ada@example.org" in received.text
    assert "<code>jaxjudge mail test</code>" in received.html
    assert received.subject == "A test mail from jaxjudge"
    assert received.message["From"] == "jaxjudge <noreply@judge.example>"
    assert received.message["To"] == "ada@example.org"
    assert re.fullmatch(r"<.+@judge\.example>", str(received.message["Message-ID"]))
    assert received.message["Date"]
    row = _row(row_id)
    assert (row.status, row.attempts, row.last_error) == (OutboxStatus.SENT, 1, None)
    assert row.sent_at is not None
    assert delivery.deliver_due() == 0  # sent once


def test_starttls_and_login_with_a_private_ca(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch, certificate: tuple[Path, Path]
) -> None:
    password = "p@ss:w/rd"
    with smtp_server(
        tls_context=_server_context(certificate),
        require_starttls=True,
        auth_require_tls=True,
        auth_required=True,
        authenticator=_only("mailer", password),
    ) as server:
        url = f"smtp://mailer:{quote(password, safe='')}@127.0.0.1:{server.port}"
        monkeypatch.setattr(
            settings, "smtp_url", f"{url}?starttls=required&cafile={certificate[0]}"
        )
        row_id = _queue()
        assert delivery.deliver_due() == 1
        server.inbox.wait_for(1)
    assert _row(row_id).status == OutboxStatus.SENT


def test_an_unknown_certificate_is_refused(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch, certificate: tuple[Path, Path]
) -> None:
    with smtp_server(tls_context=_server_context(certificate), require_starttls=True) as server:
        monkeypatch.setattr(settings, "smtp_url", server.url)  # no cafile: not trusted
        row_id = _queue()
        delivery.deliver_due()
        assert server.inbox.mails == []
    row = _row(row_id)
    assert row.status == OutboxStatus.PENDING and row.attempts == 1
    assert "CERTIFICATE_VERIFY_FAILED" in (row.last_error or "")


def test_implicit_tls(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch, certificate: tuple[Path, Path]
) -> None:
    with smtp_server(ssl_context=_server_context(certificate)) as server:
        monkeypatch.setattr(
            settings, "smtp_url", f"smtps://127.0.0.1:{server.port}?cafile={certificate[0]}"
        )
        _queue()
        assert delivery.deliver_due() == 1
        server.inbox.wait_for(1)


def test_no_password_over_a_plain_connection(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with smtp_server(auth_require_tls=False) as server:  # would take a password in clear
        monkeypatch.setattr(settings, "smtp_url", f"smtp://u:secret@127.0.0.1:{server.port}")
        in_clear = _queue()
        delivery.deliver_due()
        monkeypatch.setattr(settings, "smtp_url", server.url + "?starttls=required")
        unencrypted = _queue()
        delivery.deliver_due()
        assert server.inbox.mails == []
    assert "not sent in clear" in (_row(in_clear).last_error or "")
    assert "does not offer STARTTLS" in (_row(unencrypted).last_error or "")


class _Refusing:
    async def handle_RCPT(  # noqa: N802 (aiosmtpd calls it by this name)
        self, server: Any, session: Any, envelope: Any, address: str, options: Any
    ) -> str:
        return "550 5.1.1 No such mailbox here"


@contextmanager
def _refusing_server() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(_Refusing(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield f"smtp://127.0.0.1:{port}"
    finally:
        controller.stop()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_refusal_fails_at_once_shows_on_the_admin_page_and_is_resent(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _refusing_server() as url:
        monkeypatch.setattr(settings, "smtp_url", url)
        row_id = _queue("nobody@example.org")
        assert delivery.deliver_due() == 0
    row = _row(row_id)
    assert (row.status, row.attempts) == (OutboxStatus.FAILED, 1)
    assert "550 5.1.1 No such mailbox here" in (row.last_error or "")

    with session_scope() as session:
        accounts.create_user(
            session=session, name="root", password="long test password", role=Role.ADMIN
        )
    with in_process_client() as client:
        csrf = sign_in(client, "root")
        listing = client.get("/admin/mail")
        assert listing.status_code == 200
        assert "nobody@example.org" in listing.text and "No such mailbox here" in listing.text
        assert f"SMTP 127.0.0.1:{url.rsplit(':', 1)[1]}" in listing.text
        assert client.post(f"/admin/mail/{row_id}/resend", data={}).status_code == 403  # CSRF
        resent = client.post(f"/admin/mail/{row_id}/resend", data={"csrf_token": csrf})
        assert resent.status_code == 200  # back on the list
        assert (
            client.post(f"/admin/mail/{row_id}/resend", data={"csrf_token": csrf}).status_code
            == 404
        )
    row = _row(row_id)
    assert (row.status, row.attempts) == (OutboxStatus.PENDING, 0)
    with smtp_server() as server:
        monkeypatch.setattr(settings, "smtp_url", server.url)
        assert delivery.deliver_due() == 1


def test_a_server_that_is_down_is_retried_with_back_off_then_failed(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "smtp_url", f"smtp://127.0.0.1:{_free_port()}")
    row_id = _queue()
    before = utcnow()
    delivery.deliver_due()
    row = _row(row_id)
    assert (row.status, row.attempts) == (OutboxStatus.PENDING, 1)
    assert "Connection refused" in (row.last_error or "")
    assert row.next_attempt_at >= before + delivery.backoff(1)
    assert delivery.deliver_due() == 0 and _row(row_id).attempts == 1  # not due yet
    for attempt in range(2, delivery.MAX_ATTEMPTS + 1):
        with session_scope() as session:
            due = session.get(MailMessage, row_id)
            assert due is not None
            due.next_attempt_at = utcnow()
        delivery.deliver_due()
        assert _row(row_id).attempts == attempt
    assert _row(row_id).status == OutboxStatus.FAILED
    assert delivery.backoff(2) == 2 * delivery.backoff(1)
    assert delivery.backoff(40) == dt.timedelta(hours=6)


def test_without_smtp_mail_is_a_readable_eml_file(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "smtp_url", None)
    row_id = _queue()
    assert delivery.deliver_due() == 1
    written = transport.folder() / f"{row_id:08d}.eml"
    message = email.message_from_bytes(written.read_bytes(), policy=email.policy.default)
    assert message["To"] == "ada@example.org"
    assert message.get_body(("plain",)) is not None and message.get_body(("html",)) is not None
    assert str(transport.folder()) in transport.describe()
    assert [p.name for p in transport.folder().iterdir()] == [written.name]  # no .part left


@pytest.mark.parametrize(
    "address",
    ["ada@example.org\r\nBcc: all@example.org", "Ada <ada@example.org>", "a@b@c", "a,b@c.org"],
)
def test_an_address_that_could_inject_headers_never_reaches_smtp(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch, address: str
) -> None:
    sent: list[object] = []
    monkeypatch.setattr(smtplib.SMTP, "__init__", lambda *a, **k: sent.append(a))
    monkeypatch.setattr(settings, "smtp_url", "smtp://127.0.0.1:1")
    row_id = _queue(address)
    delivery.deliver_due()
    row = _row(row_id)
    assert (row.status, sent) == (OutboxStatus.FAILED, [])
    assert "is not usable" in (row.last_error or "")


def test_the_server_s_deliverer_sends_in_the_background(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with smtp_server() as server:
        monkeypatch.setattr(settings, "smtp_url", server.url)
        monkeypatch.setattr(delivery, "INTERVAL", 0.05)
        row_id = _queue()
        with in_process_client():  # its lifespan starts the deliverer
            server.inbox.wait_for(1)
    assert _row(row_id).status == OutboxStatus.SENT


def test_a_bad_smtp_url_is_said_plainly() -> None:
    with pytest.raises(ValueError, match="smtp://HOST:587"):
        transport.parse_smtp_url("http://mail.example.org")
    with pytest.raises(ValueError, match="starttls"):
        transport.parse_smtp_url("smtp://mail.example.org?starttls=maybe")
    server = transport.parse_smtp_url("smtps://a%40b:p%2Fw@mail.example.org")
    assert (server.username, server.password, server.port) == ("a@b", "p/w", 465)


def test_the_mail_test_command_queues_a_mail(
    sqlite_database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.commands.cli import main

    assert main(["mail", "test", "ops@example.org"]) == 0
    assert "queued for ops@example.org" in capsys.readouterr().out
    with session_scope() as session:
        rows = list(session.query(MailMessage).filter_by(to_address="ops@example.org"))
    assert [r.kind for r in rows] == [MailKind.TEST]


def test_the_admin_page_says_where_mail_goes_without_smtp(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "smtp_url", None)
    with session_scope() as session:
        accounts.create_user(
            session=session, name="root", password="long test password", role=Role.ADMIN
        )
        accounts.create_user(session=session, name="ada", password="long test password")
    client: TestClient
    with in_process_client() as client:
        sign_in(client, "root")
        listing = client.get("/admin/mail").text
        assert "no SMTP server set" in listing and str(transport.folder()) in listing
        assert 'href="/admin/mail"' in listing
        sign_in(client, "ada")
        assert client.get("/admin/mail").status_code == 403
