"""A real SMTP server for the tests (aiosmtpd on 127.0.0.1): it keeps every message it
receives, parsed, so a test can read a mail and follow the links in it."""

from __future__ import annotations

import email
import email.policy
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller

LINK = re.compile(r"https?://[^\s<>\"']+")


@dataclass
class ReceivedMail:
    sender: str
    recipients: list[str]
    message: EmailMessage

    @property
    def subject(self) -> str:
        return str(self.message["Subject"])

    def part(self, subtype: str) -> str:
        body = self.message.get_body(preferencelist=(subtype,))
        assert body is not None, f"no text/{subtype} part"
        return str(body.get_content())

    @property
    def text(self) -> str:
        return self.part("plain")

    @property
    def html(self) -> str:
        return self.part("html")

    def links(self) -> list[str]:
        return LINK.findall(self.text)


@dataclass
class Inbox:
    """What the server received, in order; ``wait_for`` blocks until a mail arrives."""

    mails: list[ReceivedMail] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd calls it by this name)
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self.arrived:
            self.mails.append(ReceivedMail(envelope.mail_from, list(envelope.rcpt_tos), message))
            self.arrived.notify_all()
        return "250 Message accepted for delivery"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[ReceivedMail]:
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.mails) >= count, timeout):
                raise AssertionError(f"{len(self.mails)} mail(s) arrived, {count} awaited")
            return list(self.mails)

    def to(self, address: str) -> list[ReceivedMail]:
        return [mail for mail in self.mails if address in mail.recipients]


@dataclass
class SmtpServer:
    host: str
    port: int
    inbox: Inbox

    @property
    def url(self) -> str:
        return f"smtp://{self.host}:{self.port}"


@contextmanager
def smtp_server(**smtp_options: Any) -> Iterator[SmtpServer]:
    """A running SMTP server on a free port of 127.0.0.1; ``smtp_options`` go to
    aiosmtpd's SMTP (``tls_context``, ``require_starttls``, ``auth_required``, ...)."""
    inbox = Inbox()
    with socket.socket() as probe:  # aiosmtpd cannot take port 0: a free one, found now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port, **smtp_options)
    controller.start()
    try:
        yield SmtpServer("127.0.0.1", controller.port, inbox)
    finally:
        controller.stop()
