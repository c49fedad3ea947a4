"""`jaxjudge notify digest`: one round of the daily digest of due assignments
(app/reports/deadline_digest.py), which the server also runs every few minutes."""

from __future__ import annotations

import argparse
from typing import Any

EXIT_OK = 0


def cmd_notify_digest(_args: argparse.Namespace) -> int:
    from app.core.db import migrate
    from app.reports import deadline_digest

    migrate()
    sent = deadline_digest.run_once()
    print(f"queued {sent} deadline digest(s)")
    return EXIT_OK


def register(commands: Any) -> None:
    notify = commands.add_parser("notify", help="notifications by email").add_subparsers(
        dest="notify_command", required=True
    )
    digest = notify.add_parser(
        "digest",
        help="queue today's digest of due assignments for every account that wants one"
        " (at most one per account per 24 hours)",
    )
    digest.set_defaults(handler=cmd_notify_digest)
