"""`jaxjudge courses list` and `jaxjudge grades export`: an instructor's scripts against a
running server, through the JSON API with a personal API token (app/api/routes/courses.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from app.client import ApiClient, CommandError

EXIT_OK = 0


def _client(args: argparse.Namespace) -> ApiClient:
    token = args.token or os.environ.get("JAXJUDGE_TOKEN")
    if not token:
        raise CommandError(
            "give an API token with --token or JAXJUDGE_TOKEN (`jaxjudge tokens create NAME`)"
        )
    return ApiClient(args.server, token)


def cmd_courses_list(args: argparse.Namespace) -> int:
    found = _client(args).request("GET", "/api/courses")
    if args.json:
        print(json.dumps(found))
        return EXIT_OK
    for course in found["data"]:
        code = f"  join code {course['join_code']}" if course["join_code"] else ""
        problems = ", ".join(a["problem"] for a in course["assignments"]) or "nothing assigned"
        print(f"{course['id']}  {course['name']}  ({course['role']}){code}  {problems}")
    return EXIT_OK


def cmd_grades_export(args: argparse.Namespace) -> int:
    client = _client(args)
    base = f"/api/courses/{args.course}"
    if args.submissions:
        body = client.request("GET", f"{base}/submissions.csv", text=True)
    elif args.csv:
        body = client.request("GET", f"{base}/grades.csv", text=True)
    else:
        body = json.dumps(client.request("GET", f"{base}/grades"), indent=2) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as out:
            out.write(body)
    else:
        sys.stdout.write(body)
    return EXIT_OK


def _server_options(parser: Any) -> None:
    parser.add_argument("--server", default="http://127.0.0.1:8000")
    parser.add_argument("--token", default=None, help="API token (default: $JAXJUDGE_TOKEN)")


def register(commands: Any) -> None:
    courses = commands.add_parser("courses", help="your courses on a server").add_subparsers(
        dest="courses_command", required=True
    )
    listing = courses.add_parser("list", help="the courses you teach or take")
    _server_options(listing)
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=cmd_courses_list)

    grades = commands.add_parser("grades", help="a course's grades").add_subparsers(
        dest="grades_command", required=True
    )
    export = grades.add_parser("export", help="the grade matrix (JSON), or a CSV")
    export.add_argument("course", type=int, help="the course's id (`jaxjudge courses list`)")
    _server_options(export)
    kind = export.add_mutually_exclusive_group()
    kind.add_argument(
        "--csv", action="store_true", help="grades.csv: a score and late flag per problem"
    )
    kind.add_argument("--submissions", action="store_true", help="submissions.csv: every submit")
    export.add_argument("--output", "-o", default=None, help="write to this file, not stdout")
    export.set_defaults(handler=cmd_grades_export)
