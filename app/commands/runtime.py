"""`jaxjudge runtime`: the grading runtime an operator runs, and moving it.

``show`` prints the serving runtime; ``diff`` grades stored submissions again with a
candidate interpreter in a staging folder and reports which verdicts would change
(app/grading/runtime_diff.py); ``apply`` makes a report's verdicts current once the
candidate serves. docs/operations.md has the whole procedure."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from app.commands.client import CommandError

EXIT_OK = 0
EXIT_CHANGED = 1


def cmd_runtime_show(args: argparse.Namespace) -> int:
    from grader.versions import runtime_record

    record = runtime_record("cpu")
    if args.json:
        print(json.dumps(record, sort_keys=True))
    else:
        for name, value in record.items():
            print(f"{name}: {value}")
    return EXIT_OK


def _candidate_python(path: str) -> Path:
    python = Path(path).absolute()  # a virtualenv's python is a link: keep its own path
    if not python.is_file():
        raise CommandError(f"{path}: no such interpreter (give the candidate venv's bin/python)")
    return python


def cmd_runtime_diff(args: argparse.Namespace) -> int:
    from app.core.config import settings as app_settings
    from app.core.db import session_scope
    from app.grading import runtime_diff
    from grader import calibration
    from grader.child.verdicts import Mode
    from grader.config import settings as grader_settings
    from grader.grade import grade, measure_reference
    from grader.judging.report import GradeReport
    from grader.problems.problem import Problem
    from grader.running import warmup_cache
    from grader.running.devices import device_for
    from grader.versions import RuntimeProbeError, runtime_record

    python = _candidate_python(args.python)
    staging = Path(args.staging).resolve()
    serving = runtime_record("cpu")
    # From here on, children run on the candidate and write only under the staging folder;
    # the database stays the serving one (read, never written).
    app_settings.database_url = app_settings.database
    grader_settings.child_python = python
    grader_settings.data_dir = staging
    try:
        candidate = runtime_record("cpu")
    except RuntimeProbeError as error:
        raise CommandError(str(error)) from None
    if "missing" in candidate.values():
        raise CommandError(f"{python} lacks part of the runtime: {candidate}")
    warmup_cache.ensure("cpu")

    def grade_stored(problem: Problem, item: runtime_diff.StoredVerdict) -> GradeReport:
        device = device_for(problem.config.device)
        limits = calibration.ensure(problem, device, lambda p, d: measure_reference(p, d))
        return grade(
            problem, item.code, mode=Mode.SUBMIT, device=device, variant=item.hidden_draw,
            limits=limits,
        )  # fmt: skip

    def progress(line: str) -> None:
        if not args.json:
            print(line, flush=True)

    with session_scope() as session:
        stored = runtime_diff.stored_verdicts(
            session, per_problem=None if args.all else args.per_problem, slugs=args.problem
        )
        progress(f"grading {len(stored)} stored submission(s) on {python} in {staging}")
        report = runtime_diff.diff(
            session, stored, grade_stored, serving=serving, candidate=candidate, progress=progress
        )
    if args.report:
        Path(args.report).write_text(json.dumps(report.to_json(), indent=1) + "\n")
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print("\n".join(report.lines()))
        if args.report:
            print(f"report written to {args.report}: `jaxjudge runtime apply {args.report}`")
    return EXIT_CHANGED if report.changes or report.failures else EXIT_OK


def cmd_runtime_apply(args: argparse.Namespace) -> int:
    from app.core.db import session_scope
    from app.errors import DomainError
    from app.grading import runtime_diff
    from grader.versions import runtime_record

    try:
        report = runtime_diff.RuntimeDiff.from_json(json.loads(Path(args.report).read_text()))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CommandError(
            f"{args.report}: not a `jaxjudge runtime diff` report ({error})"
        ) from None
    try:
        with session_scope() as session:
            applied = runtime_diff.apply(session, report, serving=runtime_record("cpu"))
    except DomainError as error:
        raise CommandError(str(error)) from None
    print(f"{applied} verdict(s) changed; the replaced ones are kept as past verdicts")
    return EXIT_OK


def register(commands: Any) -> None:
    runtime = commands.add_parser(
        "runtime", help="the grading runtime: show it, diff a candidate, apply the diff"
    ).add_subparsers(dest="runtime_command", required=True)
    show = runtime.add_parser("show", help="the serving runtime: versions and XLA flags")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=cmd_runtime_show)

    diff = runtime.add_parser(
        "diff", help="grade stored submissions on a candidate runtime; report what would change"
    )
    diff.add_argument("--python", required=True, help="the candidate virtualenv's bin/python")
    diff.add_argument(
        "--staging",
        default="var/runtime-staging",
        help="data folder for the candidate's caches and calibration (default: %(default)s)",
    )
    diff.add_argument(
        "--per-problem",
        type=int,
        default=10,
        help="newest accepted and newest rejected submits per problem (default: %(default)s each)",
    )
    diff.add_argument("--all", action="store_true", help="every graded submit")
    diff.add_argument(
        "--problem", action="append", default=[], metavar="SLUG", help="only these (repeatable)"
    )
    diff.add_argument("--report", help="also write the report, for `jaxjudge runtime apply`")
    diff.add_argument("--json", action="store_true", help="print exactly one JSON object")
    diff.set_defaults(handler=cmd_runtime_diff)

    apply = runtime.add_parser(
        "apply", help="make a diff report's verdicts current (after switching to its candidate)"
    )
    apply.add_argument("report", help="a file written by `jaxjudge runtime diff --report`")
    apply.set_defaults(handler=cmd_runtime_apply)
