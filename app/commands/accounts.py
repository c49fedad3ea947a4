"""`jaxjudge users` and `jaxjudge tokens`: accounts and API tokens from the shell (an
operator's first admin, a script's token), writing the database directly."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.commands.client import CommandError
from app.vocabulary import Role

EXIT_OK = 0


def cmd_users_create(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.data import accounts
    from app.errors import DomainError

    if not args.password_stdin:
        raise CommandError("pass the password on standard input with --password-stdin")
    password = sys.stdin.readline().rstrip("\n")
    migrate()
    try:
        with session_scope() as session:
            user = accounts.create_user(
                session=session, name=args.name, password=password, role=args.role
            )
            print(f"created {user.role} {user.name!r}")
    except DomainError as error:
        raise CommandError(str(error)) from None
    return EXIT_OK


def _user(session: Any, name: str) -> Any:
    from app.data import accounts

    user = accounts.user_by_name(session=session, name=name)
    if user is None:
        raise CommandError(f"no user {name!r}; create one with `jaxjudge users create`")
    return user


def cmd_users_disable(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.data import accounts

    migrate()
    with session_scope() as session:
        user = _user(session, args.name)
        accounts.set_disabled(session=session, user=user, disabled=args.disable)
        state = "disabled: its sessions and tokens stop working now" if args.disable else "enabled"
        print(f"{user.name!r} {state}")
    return EXIT_OK


FALLBACK_URL = "http://localhost:8000"


def cmd_users_reset_password(args: argparse.Namespace) -> int:
    from app.core.config import settings
    from app.core.db import migrate, session_scope
    from app.data import account_mail, one_time_links
    from app.vocabulary import OneTimeLinkPurpose

    migrate()
    lifetime = one_time_links.LIFETIMES[OneTimeLinkPurpose.RESET_PASSWORD]
    with session_scope() as session:
        user = _user(session, args.name)
        link = account_mail.reset_link(
            session=session, user=user, base_url=settings.public_url or FALLBACK_URL
        )
        print(link)
    minutes = int(lifetime.total_seconds() // 60)
    note = f"works once, for {minutes} minutes; every browser signed in as {args.name!r} is signed out when it is used"
    if not settings.public_url:
        note += f"; JAXJUDGE_PUBLIC_URL is unset: replace {FALLBACK_URL} with the server's address"
    print(note, file=sys.stderr)
    return EXIT_OK


def cmd_tokens_create(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.data import api_tokens
    from app.errors import DomainError

    migrate()
    try:
        with session_scope() as session:
            token, _row = api_tokens.create(
                session=session,
                user=_user(session, args.name),
                name=args.label,
                expires_in_days=args.expires_days,
            )
            print(token)
    except DomainError as error:
        raise CommandError(str(error)) from None
    return EXIT_OK


def cmd_tokens_list(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.data import api_tokens

    migrate()
    with session_scope() as session:
        for row in api_tokens.of_user(session=session, user=_user(session, args.name)):
            expires = row.expires_at.isoformat(timespec="minutes") if row.expires_at else "never"
            used = row.last_used_at.isoformat(timespec="minutes") if row.last_used_at else "never"
            print(
                f"{row.id}\t{row.name or '-'}\tcreated {row.created_at:%Y-%m-%d}\tlast used {used}\texpires {expires}"
            )
    return EXIT_OK


def cmd_tokens_revoke(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.data import api_tokens

    migrate()
    with session_scope() as session:
        if not api_tokens.revoke(session=session, user=_user(session, args.name), token_id=args.id):
            raise CommandError(f"{args.name!r} has no token {args.id}; see `jaxjudge tokens list`")
        print(f"token {args.id} of {args.name!r} revoked")
    return EXIT_OK


def register(commands: Any) -> None:
    users = commands.add_parser("users", help="manage users").add_subparsers(
        dest="users_command", required=True
    )
    create = users.add_parser("create", help="create a user")
    create.add_argument("name")
    create.add_argument("--role", default="learner", choices=[role.value for role in Role])
    create.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    create.set_defaults(handler=cmd_users_create)
    for verb, disable in (("disable", True), ("enable", False)):
        toggle = users.add_parser(
            verb, help=f"{verb} a user (disabling ends every session and token at once)"
        )
        toggle.add_argument("name")
        toggle.set_defaults(handler=cmd_users_disable, disable=disable)

    reset = users.add_parser(
        "reset-password", help="print a one-time link that sets a user's password (30 minutes)"
    )
    reset.add_argument("name")
    reset.set_defaults(handler=cmd_users_reset_password)

    tokens = commands.add_parser("tokens", help="manage API tokens").add_subparsers(
        dest="tokens_command", required=True
    )
    token = tokens.add_parser("create", help="print a new API token for a user")
    token.add_argument("name")
    token.add_argument("--label", default="", help="what the token is for (shown in lists)")
    token.add_argument("--expires-days", type=int, default=None, help="default: never expires")
    token.set_defaults(handler=cmd_tokens_create)
    listing = tokens.add_parser("list", help="a user's tokens: id, label, last use, expiry")
    listing.add_argument("name")
    listing.set_defaults(handler=cmd_tokens_list)
    revoke = tokens.add_parser("revoke", help="revoke one of a user's tokens by id")
    revoke.add_argument("name")
    revoke.add_argument("id", type=int)
    revoke.set_defaults(handler=cmd_tokens_revoke)
