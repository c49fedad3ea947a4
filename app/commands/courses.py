"""`jaxjudge courses list`, `jaxjudge grades export` and `jaxjudge extensions`: an
instructor's scripts against a running server, through the JSON API with a personal
API token (app/api/routes/courses.py, app/api/routes/course_people.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from jaxjudge_client.connection import DEFAULT_SERVER

from app.commands.client import ApiClient, CommandError

EXIT_OK = 0


def _client(args: argparse.Namespace) -> ApiClient:
    token = args.token or os.environ.get("JAXJUDGE_TOKEN")
    if not token:
        raise CommandError(
            "give an API token with --token or JAXJUDGE_TOKEN (`jaxjudge tokens create NAME`)"
        )
    return ApiClient(args.server or os.environ.get("JAXJUDGE_SERVER") or DEFAULT_SERVER, token)


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
    elif args.csv or args.layout != "generic":
        body = client.request("GET", f"{base}/grades.csv?layout={args.layout}", text=True)
    else:
        body = json.dumps(client.request("GET", f"{base}/grades"), indent=2) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as out:
            out.write(body)
    else:
        sys.stdout.write(body)
    return EXIT_OK


def cmd_extensions_list(args: argparse.Namespace) -> int:
    found = _client(args).request("GET", f"/api/courses/{args.course}/extensions")
    if args.json:
        print(json.dumps(found))
        return EXIT_OK
    for e in found["data"]:
        who = f"learner {e['user_id']}" if e["user_id"] else f"group {e['group_name']}"
        print(f"{e['id']}  {e['problem']}  {who}  due {e['due_at']} UTC")
    return EXIT_OK


def cmd_extensions_grant(args: argparse.Namespace) -> int:
    if bool(args.user) == bool(args.group):
        raise CommandError("give --user NAME or --group NAME")
    item = {"problem": args.problem, "due_at": args.due, "user": args.user or "",
            "group": args.group or ""}  # fmt: skip
    made = _client(args).request("POST", f"/api/courses/{args.course}/extensions", {"data": [item]})
    print(f"granted: {args.problem} due {made['data'][0]['due_at']} UTC")
    return EXIT_OK


def cmd_extensions_upload(args: argparse.Namespace) -> int:
    try:
        with open(args.file, encoding="utf-8-sig") as source:
            text = source.read()
    except OSError as error:
        raise CommandError(f"cannot read {args.file}: {error.strerror}") from None
    made = _client(args).request(
        "POST", f"/api/courses/{args.course}/extensions.csv", csv_body=text
    )
    print(f"granted {made['count']} extension(s)")
    return EXIT_OK


def cmd_extensions_remove(args: argparse.Namespace) -> int:
    _client(args).request("DELETE", f"/api/courses/{args.course}/extensions/{args.extension}")
    print(f"removed extension {args.extension}")
    return EXIT_OK


def _server_options(parser: Any) -> None:
    parser.add_argument(
        "--server", default=None, help=f"default: $JAXJUDGE_SERVER, else {DEFAULT_SERVER}"
    )
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
    export.add_argument(
        "--layout",
        choices=("generic", "canvas", "moodle"),
        default="generic",
        help="with a CSV: generic (points, raw and final, a total), or an LMS's import layout",
    )
    export.add_argument("--output", "-o", default=None, help="write to this file, not stdout")
    export.set_defaults(handler=cmd_grades_export)

    extensions = commands.add_parser(
        "extensions", help="a course's extended due dates"
    ).add_subparsers(dest="extensions_command", required=True)
    listing = extensions.add_parser("list", help="every extension of a course")
    listing.add_argument("course", type=int)
    listing.add_argument("--json", action="store_true")
    _server_options(listing)
    listing.set_defaults(handler=cmd_extensions_list)
    grant = extensions.add_parser("grant", help="a later due date for a learner or a group")
    grant.add_argument("course", type=int)
    grant.add_argument("--problem", required=True)
    grant.add_argument("--due", required=True, help="ISO 8601; UTC without an offset")
    grant.add_argument("--user", default=None, help="a learner's user name")
    grant.add_argument("--group", default=None, help="a group of the course's learners")
    _server_options(grant)
    grant.set_defaults(handler=cmd_extensions_grant)
    upload = extensions.add_parser(
        "upload", help="a CSV (user or group, problem, due_at): every row granted, or none"
    )
    upload.add_argument("course", type=int)
    upload.add_argument("file")
    _server_options(upload)
    upload.set_defaults(handler=cmd_extensions_upload)
    remove = extensions.add_parser("remove", help="take an extension back")
    remove.add_argument("course", type=int)
    remove.add_argument("extension", type=int, help="its id (`jaxjudge extensions list`)")
    _server_options(remove)
    remove.set_defaults(handler=cmd_extensions_remove)
