"""How a mail leaves: by SMTP (``JAXJUDGE_SMTP_URL``) or, with no server set, as an
``.eml`` file in the data directory's ``mail/`` folder.

``smtp://`` starts in plain text and upgrades with STARTTLS when the server offers
it (``?starttls=required``: a server that does not is an error); ``smtps://`` is TLS
from the first byte. Credentials are never sent over a connection that is not
encrypted. Certificates are checked against the system's CAs (``?cafile=PATH`` adds a
private one). Addresses are checked before anything is built: a CR or LF (a header
injection) or a malformed address never reaches smtplib.
"""

from __future__ import annotations

import re
import smtplib
import ssl
from dataclasses import dataclass
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from app.core.config import grader_settings, settings

ADDRESS = re.compile(r"^[^@\s\"<>()\[\],;:\\]{1,64}@[A-Za-z0-9.-]{1,190}$")


class MailNotSentError(Exception):
    """A mail that did not leave; ``permanent``: trying again cannot help."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


@dataclass(frozen=True)
class Outgoing:
    """One mail as the outbox holds it."""

    id: int
    to_address: str
    subject: str
    text_body: str
    html_body: str


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    implicit_tls: bool
    starttls_required: bool
    username: str
    password: str
    cafile: str | None

    def describe(self) -> str:
        security = "TLS" if self.implicit_tls else "STARTTLS"
        if not self.implicit_tls and not self.starttls_required:
            security += " when offered"
        login = f" as {self.username}" if self.username else ""
        return f"SMTP {self.host}:{self.port} ({security}){login}"


def parse_smtp_url(url: str) -> SmtpServer:
    """The server ``JAXJUDGE_SMTP_URL`` names; a ValueError says what is wrong with it."""
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError("JAXJUDGE_SMTP_URL must look like smtp://HOST:587 or smtps://HOST:465")
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    starttls = query.get("starttls", "")
    if starttls not in ("", "required"):
        raise ValueError("JAXJUDGE_SMTP_URL's starttls= may only be 'required'")
    implicit = parts.scheme == "smtps"
    return SmtpServer(
        host=parts.hostname,
        port=parts.port or (465 if implicit else 25),
        implicit_tls=implicit,
        starttls_required=starttls == "required",
        username=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        cafile=query.get("cafile") or None,
    )


def folder() -> Path:
    return grader_settings.data_dir / "mail"


def describe() -> str:
    """Where mail goes now, for the admin page."""
    if not settings.smtp_url:
        return f"no SMTP server set (JAXJUDGE_SMTP_URL): mails are written to {folder()}"
    try:
        return parse_smtp_url(settings.smtp_url).describe()
    except ValueError as error:
        return f"JAXJUDGE_SMTP_URL is unusable: {error}"


def checked_address(address: str, role: str) -> str:
    """``address`` if it is one plain address (no display name, no CR/LF, no second
    address); else a permanent MailNotSentError naming ``role``."""
    if not ADDRESS.match(address):
        raise MailNotSentError(f"the {role} address {address!r} is not usable", permanent=True)
    return address


def build(mail: Outgoing, *, from_header: str) -> EmailMessage:
    """The message: plain text and HTML as multipart/alternative, with Message-ID, Date,
    From, To and Subject."""
    name, from_address = parseaddr(from_header)
    checked_address(from_address, "From (JAXJUDGE_MAIL_FROM)")
    if any(char in name for char in "\r\n"):
        raise MailNotSentError("JAXJUDGE_MAIL_FROM holds a line break", permanent=True)
    message = EmailMessage()
    message["From"] = Address(display_name=name, addr_spec=from_address)
    message["To"] = checked_address(mail.to_address, "recipient")
    message["Subject"] = " ".join(mail.subject.split())
    message["Date"] = formatdate(localtime=False, usegmt=True)
    message["Message-ID"] = make_msgid(domain=from_address.rsplit("@", 1)[1])
    message.set_content(mail.text_body)
    message.add_alternative(mail.html_body, subtype="html")
    return message


def _tls_context(server: SmtpServer) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=server.cafile)


def _send_smtp(server: SmtpServer, message: EmailMessage, timeout: float) -> None:
    context = _tls_context(server)
    client: smtplib.SMTP
    if server.implicit_tls:
        client = smtplib.SMTP_SSL(server.host, server.port, timeout=timeout, context=context)
    else:
        client = smtplib.SMTP(server.host, server.port, timeout=timeout)
    with client:
        client.ehlo()
        encrypted = server.implicit_tls
        if not encrypted and client.has_extn("starttls"):
            client.starttls(context=context)
            client.ehlo()
            encrypted = True
        if not encrypted and server.starttls_required:
            raise MailNotSentError(f"{server.host} does not offer STARTTLS (starttls=required)")
        if server.username:
            if not encrypted:
                raise MailNotSentError(
                    f"{server.host} offers no STARTTLS: the SMTP password is not sent in clear"
                )
            client.login(server.username, server.password)
        client.send_message(message)


def _write_file(message: EmailMessage, mail_id: int) -> None:
    target = folder()
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{mail_id:08d}.eml"
    partial = path.with_suffix(".part")
    partial.write_bytes(message.as_bytes())
    partial.replace(path)  # a reader never sees half a mail


def send(mail: Outgoing) -> None:
    """Send ``mail`` now (called by app/mail/delivery.py, outside any transaction)."""
    message = build(mail, from_header=settings.mail_from)
    if not settings.smtp_url:
        _write_file(message, mail.id)
        return
    try:
        server = parse_smtp_url(settings.smtp_url)
    except ValueError as error:
        raise MailNotSentError(str(error)) from None
    try:
        _send_smtp(server, message, settings.smtp_timeout)
    except smtplib.SMTPRecipientsRefused as error:
        code, reply = next(iter(error.recipients.values()))
        raise MailNotSentError(_reply(code, reply), permanent=500 <= code < 600) from None
    except smtplib.SMTPResponseException as error:
        permanent = 500 <= error.smtp_code < 600
        raise MailNotSentError(
            _reply(error.smtp_code, error.smtp_error), permanent=permanent
        ) from None
    except (OSError, smtplib.SMTPException) as error:  # refused, timed out, TLS failed
        raise MailNotSentError(f"{server.host}:{server.port}: {error}") from None


def _reply(code: int, reply: bytes | str) -> str:
    text = reply.decode(errors="replace") if isinstance(reply, bytes) else reply
    return f"the SMTP server answered {code} {text}"
