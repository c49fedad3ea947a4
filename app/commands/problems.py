"""`jaxjudge problems import PATH --course ID` and `jaxjudge problems export SLUG --out
FILE`: a course's problems as folders, on the server's machine (its database), as the
course's "problems as folders" page does (app/data/problem_folders.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands.client import CommandError

EXIT_OK = 0
EXIT_INVALID = 1


def cmd_problems_import(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.data import problem_folders
    from app.models import Course
    from grader.problems import folders
    from grader.problems.folders import FolderError

    path = Path(args.path)
    if not path.exists():
        raise CommandError(f"{path}: no such file or folder")
    migrate()
    try:
        upload = folders.read_upload(path if path.is_dir() else path.read_bytes())
        with session_scope() as session:
            if session.get(Course, args.course) is None:
                raise CommandError(f"no course {args.course} (`jaxjudge courses list`)")
            imported = problem_folders.import_problems(
                session=session, course_id=args.course, problems=upload, author=None
            )
    except FolderError as error:
        print(f"{path}: nothing imported:", file=sys.stderr)
        for line in error.errors:
            print(f"  {line}", file=sys.stderr)
        return EXIT_INVALID
    for item in imported:
        print(item.line())
    print("Each new version needs a passing check before it can be published.")
    return EXIT_OK


def cmd_problems_export(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.data import catalog, problem_folders

    migrate()
    with session_scope() as session:
        version = catalog.version_or_newest(session=session, slug=args.slug, number=args.version)
        if version is None:
            raise CommandError(f"no such version of {args.slug!r}")
        name, data = problem_folders.export_version(version)
    out = Path(args.out or name)
    out.write_bytes(data)
    print(f"wrote {out} ({args.slug} v{version.number}, {len(data)} bytes)")
    return EXIT_OK


def register(commands: Any) -> None:
    problems = commands.add_parser(
        "problems", help="a course's problems as folders: import, export"
    ).add_subparsers(dest="problems_command", required=True)
    imports = problems.add_parser(
        "import", help="import problem folders (a folder or a zip) into a course, all or nothing"
    )
    imports.add_argument(
        "path", help="a zip, a root holding problems/ and reference_solutions/, or problems/NAME"
    )
    imports.add_argument("--course", type=int, required=True, help="the course's id")
    imports.set_defaults(handler=cmd_problems_import)
    export = problems.add_parser("export", help="write a problem version as a zip")
    export.add_argument("slug", help="the problem's slug (a course problem's is c<id>-<name>)")
    export.add_argument("--version", type=int, default=None, help="default: the newest")
    export.add_argument("--out", default=None, help="default: <name>-v<number>.zip here")
    export.set_defaults(handler=cmd_problems_export)
