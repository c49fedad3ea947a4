"""`jaxjudge lti`: an operator's commands for LMS registrations (docs/lti.md), writing
the database directly: add, list and remove platforms, make a Dynamic Registration
link, rotate the tool's key, send the grade-book outbox now, sync a roster."""

from __future__ import annotations

import argparse
import json
from typing import Any

from app.commands.client import CommandError

EXIT_OK, EXIT_FAILED = 0, 1


def cmd_add_platform(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.errors import DomainError
    from app.lti.platforms import PlatformIn, add

    migrate()
    try:
        with session_scope() as session:
            platform = add(
                session=session,
                platform=PlatformIn(
                    issuer=args.issuer,
                    client_id=args.client_id,
                    auth_login_url=args.login_url,
                    token_url=args.token_url,
                    jwks_url=args.jwks_url,
                    deployment_ids=tuple(args.deployment_id or ()),
                    name=args.name or "",
                ),
            )
            print(f"platform {platform.id}: {platform.issuer} (client id {platform.client_id})")
    except DomainError as error:
        raise CommandError(str(error)) from None
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.lti.platforms import all_platforms, deployments_of

    migrate()
    with session_scope() as session:
        rows: list[dict[str, Any]] = [
            {
                "id": p.id,
                "name": p.name,
                "issuer": p.issuer,
                "client_id": p.client_id,
                "deployment_ids": deployments_of(session=session, platform=p),
                "login_url": p.auth_login_url,
                "token_url": p.token_url,
                "jwks_url": p.jwks_url,
            }
            for p in all_platforms(session=session)
        ]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print("no LMS registered: `jaxjudge lti add-platform` or a Dynamic Registration link")
    for row in [] if args.json else rows:
        deployments = ", ".join(row["deployment_ids"]) or "none"
        print(f"{row['id']}  {row['issuer']}  client {row['client_id']}  deployments {deployments}")
    return EXIT_OK


def cmd_remove(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.errors import DomainError
    from app.lti.platforms import remove

    migrate()
    try:
        with session_scope() as session:
            platform = remove(session=session, platform_id=args.id)
            print(f"removed {platform.issuer} (client id {platform.client_id})")
    except DomainError as error:
        raise CommandError(str(error)) from None
    return EXIT_OK


def cmd_registration_url(args: argparse.Namespace) -> int:
    from app.lti.registration import INVITATION_SECONDS, invitation

    base = args.base_url.rstrip("/")
    print(f"{base}/lti/register?invitation={invitation(args.note or '')}")
    print(f"(valid {INVITATION_SECONDS // 86400} days; paste it into the LMS's tool registration)")
    return EXIT_OK


def cmd_rotate_key(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.lti.keys import RETIRED_KEPT, rotate

    migrate()
    with session_scope() as session:
        key = rotate(session)
        print(f"new signing key {key.kid}; the old one stays published for {RETIRED_KEPT}")
    return EXIT_OK


def cmd_resend(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.lti import outbox, status
    from app.vocabulary import OutboxStatus

    migrate()
    with session_scope() as session:
        armed = outbox.resend(session, course_id=args.course, failed_only=not args.all)
    sent = outbox.deliver_due()
    with session_scope() as session:
        counts = status.counts(session)
    print(f"{armed} re-armed, {sent} sent now; outbox: {counts}")
    return EXIT_OK if counts.get(OutboxStatus.FAILED, 0) == 0 else EXIT_FAILED


def register(commands: Any) -> None:
    lti = commands.add_parser("lti", help="LMS registrations (LTI 1.3)").add_subparsers(
        dest="lti_command", required=True
    )
    add = lti.add_parser("add-platform", help="register an LMS by hand (docs/lti.md)")
    add.add_argument("--issuer", required=True)
    add.add_argument("--client-id", required=True)
    add.add_argument(
        "--deployment-id", action="append", help="a deployment id (repeat for several)"
    )
    add.add_argument("--login-url", required=True, help="the LMS's OIDC authorization endpoint")
    add.add_argument("--token-url", required=True, help="the LMS's OAuth 2 token endpoint")
    add.add_argument("--jwks-url", required=True, help="the LMS's public key set")
    add.add_argument("--name", help="how pages name this LMS")
    add.set_defaults(handler=cmd_add_platform)
    listing = lti.add_parser("list", help="registered LMSs")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=cmd_list)
    gone = lti.add_parser("remove", help="forget an LMS (its courses and accounts stay)")
    gone.add_argument("id", type=int)
    gone.set_defaults(handler=cmd_remove)
    url = lti.add_parser("registration-url", help="a Dynamic Registration link for an LMS admin")
    url.add_argument("--base-url", required=True, help="where the LMS reaches jaxjudge")
    url.add_argument("--note", help="who it is for (kept in the link)")
    url.set_defaults(handler=cmd_registration_url)
    rotate = lti.add_parser("rotate-key", help="a new signing key (the old stays published a day)")
    rotate.set_defaults(handler=cmd_rotate_key)
    resend = lti.add_parser("resend", help="send failed grades again (and everything due) now")
    resend.add_argument("--course", type=int, help="only this course's")
    resend.add_argument("--all", action="store_true", help="every grade, not only failed ones")
    resend.set_defaults(handler=cmd_resend)
