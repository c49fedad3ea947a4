"""`jaxjudge mail`: check that mail leaves (a test mail through the outbox)."""

from __future__ import annotations

import argparse
from typing import Any

from app.commands.client import CommandError

EXIT_OK = 0


def cmd_mail_test(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.data import mail
    from app.mail import transport
    from app.vocabulary import MailKind

    if not transport.ADDRESS.match(args.address):
        raise CommandError(f"{args.address!r} is not one plain email address")
    migrate()
    with session_scope() as session:
        row = mail.queue(
            session=session,
            kind=MailKind.TEST,
            to_address=args.address,
            template="test",
            address=args.address,
        )
        row_id = row.id
    print(f"mail {row_id} queued for {args.address}: {transport.describe()}")
    print("a running server sends it within seconds; /admin/mail shows how it went")
    return EXIT_OK


def register(commands: Any) -> None:
    mail = commands.add_parser("mail", help="the mail outbox").add_subparsers(
        dest="mail_command", required=True
    )
    test = mail.add_parser("test", help="queue a test mail to ADDRESS")
    test.add_argument("address")
    test.set_defaults(handler=cmd_mail_test)
