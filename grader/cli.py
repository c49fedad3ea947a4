"""The grader's commands: grade, check, prepare, doctor, new (app/commands/cli.py is the `jaxjudge`
entry point and adds the platform's: serve, worker, users, tokens, submit, ...).

Exit status: 0 success (accepted / all problems pass), 1 failure (a verdict
other than accepted / a problem failed its check), 2 misuse (unknown problem,
unreadable file), always with a one-line error.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.child.verdicts import Mode
from grader.config import settings
from grader.errors import ProblemError, UsageError

if TYPE_CHECKING:
    from grader.check import CheckResult
    from grader.problems.problem import Problem

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _problem_folder(slug: str) -> Path:
    from grader.problems.problem import find_problem, problem_folders

    folder = find_problem(slug)
    if folder is None:
        known = ", ".join(path.name for path in problem_folders())
        raise UsageError(f"unknown problem {slug!r}; known problems: {known}")
    return folder


def read_submission(path: str) -> str:
    """A submission file's text: a regular file, at most the source limit, UTF-8
    (a byte-order mark is allowed, as Python allows it). Never blocks on a FIFO,
    never reads a device without end."""
    limit = settings.max_source_bytes
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except PermissionError:
        raise UsageError(f"{path}: permission denied") from None
    except OSError as error:
        raise UsageError(f"{path}: cannot be opened ({error.strerror})") from None
    try:
        kind = os.fstat(fd).st_mode
        if stat.S_ISDIR(kind):
            raise UsageError(f"{path}: is a directory, not a Python file")
        if not stat.S_ISREG(kind):
            raise UsageError(f"{path}: not a regular file (a device, a FIFO or a socket)")
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UsageError(f"{path}: larger than the {limit // 1024} KiB limit for a submission")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None


def cmd_grade(args: argparse.Namespace) -> int:
    from grader import calibration
    from grader.expected import ReferenceRunError
    from grader.grade import grade, measure_reference
    from grader.judging.feedback import learner_view
    from grader.judging.report import render_text
    from grader.problems.problem import load_problem
    from grader.running.devices import NoDeviceError, device_for

    folder = _problem_folder(args.slug)
    source = read_submission(args.file)
    problem = load_problem(folder)
    try:
        device = device_for(problem.config.device)
    except NoDeviceError as error:
        raise UsageError(f"{args.slug}: {error}") from None
    mode = Mode.RUN if args.samples_only else Mode.SUBMIT
    try:
        # This machine's limits before the first grading on it, as a worker has them
        # (grader/calibration.py): provisional ones are a guess, and on a GPU a poor one.
        limits = calibration.ensure(problem, device, lambda p, d: measure_reference(p, d))
        report = grade(
            problem, source, mode=mode, device=device, variant=args.variant, limits=limits
        )
    except ReferenceRunError as error:
        raise UsageError(f"{args.slug}: the trusted reference run failed: {error}") from None
    shown = report if args.details else learner_view(report)
    if args.json:
        print(json.dumps(shown.to_json(), allow_nan=False))
    else:
        print(render_text(shown))
    return EXIT_OK if report.accepted else EXIT_FAILED


CHECK_CHILDREN_MAX = 4


def cmd_check(
    args: argparse.Namespace, on_result: Callable[[Path, CheckResult], str | None] | None = None
) -> int:
    """Check each problem; ``on_result`` (the platform's: it records the result on the
    version with the same content, app/commands/cli.py) may answer a line to print."""
    from grader.check import check_problem, render
    from grader.problems.problem import problem_folders
    from grader.problems.source import PROBLEMS

    folders = [_problem_folder(slug) for slug in args.slugs] if args.slugs else problem_folders()
    if not folders:
        raise UsageError(f"no problems found in {settings.content_dir / PROBLEMS}")
    device = _device(args.device)
    failed = 0
    # One problem at a time, its trusted run shared by a child per core this process may
    # use (at most CHECK_CHILDREN_MAX: each child may hold the problem's memory limit).
    children = min(len(os.sched_getaffinity(0)), CHECK_CHILDREN_MAX)
    for folder in folders:
        result = check_problem(folder, device=device, trusted=not args.untrusted, children=children)
        print(render(result, verbose=args.verbose), flush=True)
        said = on_result(folder, result) if on_result else None
        if said:
            print(f"  {said}", flush=True)
        failed += not result.ok
    print(f"{len(folders) - failed} of {len(folders)} problem(s) pass")
    return EXIT_FAILED if failed else EXIT_OK


def _device(asked: str) -> str:
    """``--device``: the CPU, or the GPU where this machine has one (else a clear error)."""
    from grader.running.devices import NoDeviceError, device_for

    try:
        return device_for(asked)
    except NoDeviceError as error:
        raise UsageError(str(error)) from None


def cmd_prepare(args: argparse.Namespace) -> int:
    from grader import expected
    from grader.problems.problem import load_problem, problem_folders
    from grader.running import warmup_cache

    device = _device(args.device)
    if warmup_cache.ensure(device) is not None:
        print(
            f"warm-up compilation cache ready for the {device} (problem-independent; sandboxes"
            " read it)",
            flush=True,
        )
    folders = [_problem_folder(slug) for slug in args.slugs] if args.slugs else problem_folders()
    failed = 0
    problems = [load_problem(folder) for folder in folders]
    for problem, result in expected.prepare_all(expected.longest_first(problems), device):
        if isinstance(result, Exception):
            failed += 1
            print(f"{problem.slug}: FAILED: {result}", flush=True)
            continue
        how = "cached" if result.from_cache else f"computed in {result.seconds:.1f} s"
        print(f"{problem.slug}: expected outputs ready ({how})", flush=True)
    if args.calibrate:
        failed += _calibrate(problems, device)
    return EXIT_FAILED if failed else EXIT_OK


def _calibrate(problems: list[Problem], device: str) -> int:
    """Each problem's time limits on this machine (grader/calibration.py); failures."""
    from grader import calibration
    from grader.grade import measure_reference

    failed = 0
    for problem in problems:
        limits = calibration.ensure(problem, device, lambda p, d: measure_reference(p, d))
        if calibration.load(problem, device) is None:
            failed += 1
            print(f"{problem.slug}: calibration FAILED (the reference was not accepted)")
            continue
        print(
            f"{problem.slug}: limits {limits.cpu_seconds:g} s of CPU, {limits.wall_seconds:g} s"
            " of wall clock",
            flush=True,
        )
    return failed


def cmd_doctor(args: argparse.Namespace) -> int:
    from grader.doctor import Status, examine, summary

    device = args.device
    print(f"jaxjudge doctor: can this host grade on the {device}? (data in {settings.data_dir})")
    findings = examine(device, lambda finding: print(finding.render(), flush=True))
    print(summary(findings))
    return EXIT_FAILED if any(f.status is Status.FAIL for f in findings) else EXIT_OK


def cmd_new(args: argparse.Namespace) -> int:
    from grader.problems.scaffold import scaffold

    created = scaffold(args.slug, settings.content_dir)
    for path in created:
        print(f"created {path}")
    print(
        f"It passes `jaxjudge check {args.slug}` as it stands: make it yours at each TODO,"
        " then run the check again (it lists the TODOs left)."
    )
    return EXIT_OK


def register(commands: Any) -> None:
    """The grader's commands, into an argparse subparsers object (app/commands/cli.py adds the
    platform's beside them for the `jaxjudge` entry point)."""
    grade = commands.add_parser("grade", help="grade a solution file against a problem")
    grade.add_argument("slug", help="problem slug, e.g. nnx-grad-accumulation")
    grade.add_argument("file", help="Python file defining the entry point")
    grade.add_argument("--json", action="store_true", help="print exactly one JSON object")
    grade.add_argument(
        "--samples-only", action="store_true", help="grade the sample cases only (like Run)"
    )
    grade.add_argument(
        "--details",
        action="store_true",
        help="show hidden cases in full, as staff see them (default: what a learner sees)",
    )
    grade.add_argument(
        "--variant",
        type=int,
        default=None,
        help="grade on this draw of the hidden inputs (default: a random one)",
    )
    grade.set_defaults(handler=cmd_grade)

    check = commands.add_parser(
        "check", help="validate problem folders (all when no slug is given)"
    )
    check.add_argument("slugs", nargs="*", metavar="SLUG")
    check.add_argument("-v", "--verbose", action="store_true", help="also print what passed")
    check.add_argument(
        "--device", choices=("cpu", "gpu"), default="cpu", help="run and grade on this device"
    )
    check.add_argument(
        "--untrusted",
        action="store_true",
        help="an author you do not trust (a course's): run every piece of its code in sandboxes",
    )
    check.set_defaults(handler=cmd_check)

    prepare = commands.add_parser(
        "prepare", help="trusted runs of the references and mistakes: expected outputs"
    )
    prepare.add_argument("slugs", nargs="*", metavar="SLUG")
    prepare.add_argument(
        "--device",
        choices=("cpu", "gpu"),
        default="cpu",
        help="expected outputs for this device's workers (each device has its own)",
    )
    prepare.add_argument(
        "--calibrate",
        action="store_true",
        help=(
            "also measure each reference's CPU time graded as a submission here, which sets"
            " the problems' time limits on this machine (the server does this in the background)"
        ),
    )
    prepare.set_defaults(handler=cmd_prepare)

    doctor = commands.add_parser(
        "doctor",
        help="check this host can grade: sandbox, seccomp, cgroups, GPU, a real grading",
    )
    doctor.add_argument(
        "--device", choices=("cpu", "gpu"), default="cpu", help="the device to check grading on"
    )
    doctor.set_defaults(handler=cmd_doctor)

    new = commands.add_parser("new", help="scaffold a new problem folder")
    new.add_argument("slug")
    new.set_defaults(handler=cmd_new)


def run(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None, *errors: type[Exception]
) -> int:
    """Parse, run the command, and turn a person's error into one line and exit 2."""
    logging.basicConfig(level=logging.WARNING, format="jaxjudge: %(message)s")
    args = parser.parse_args(argv)
    caught: tuple[type[Exception], ...] = (UsageError, ProblemError, *errors)
    try:
        code: int = args.handler(args)
    except caught as error:
        print(f"jaxjudge: error: {error}", file=sys.stderr)
        if getattr(args, "json", False):  # `--json` promises one JSON object, errors too
            print(json.dumps({"error": str(error)}))
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader left (`jaxjudge grade ... | head`): stop quietly, and let the
        # interpreter's last flush write nowhere rather than fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """The grader alone (`python -m grader.cli`): grade, check, prepare, new."""
    parser = argparse.ArgumentParser(
        prog="jaxjudge", description="Graded JAX/Flax/Optax exercises."
    )
    register(parser.add_subparsers(dest="command", required=True))
    return run(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
