"""The `jaxjudge` entry point: the grader's commands (grader/cli.py), the platform's
(serve, worker, sync, publish, submit), and accounts (app/commands/accounts.py)."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.commands.client import CommandError
from grader.child.verdicts import Mode, Verdict
from grader.running import log_context

if TYPE_CHECKING:
    from grader.check import CheckResult

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    import uvicorn

    from app.core.config import InsecureSettingsError, grader_settings, settings
    from app.server.main import create_app

    try:
        settings.check_for_production()
    except InsecureSettingsError as error:
        raise CommandError(str(error)) from None
    log_context.configure(logging.INFO)
    workers = grader_settings.pool_size if args.workers is None else args.workers
    if workers > 0:
        _refuse_unbounded_gpu()
    trusted = args.forwarded_allow_ips or settings.forwarded_allow_ips
    for warning in serving_warnings(args.host, trusted):
        print(f"jaxjudge: WARNING: {warning}", file=sys.stderr, flush=True)
    print(
        f"jaxjudge: serving on http://{args.host}:{args.port} with {workers} grading worker(s)",
        flush=True,
    )
    # Client addresses (sign-in and sign-up throttles) come from X-Forwarded-For
    # only when the direct peer is a proxy named here; by default never.
    uvicorn.run(
        create_app(workers=workers),
        host=args.host,
        port=args.port,
        log_level="warning",
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or "",
        server_header=False,
    )
    return EXIT_OK


def serving_warnings(host: str, trusted_proxies: str | None) -> list[str]:
    from app.core.config import settings

    warnings = []
    if host not in ("127.0.0.1", "::1", "localhost") and not settings.secure_cookies:
        warnings.append(
            f"serving on {host} with JAXJUDGE_SECURE_COOKIES off: session cookies travel in"
            " clear text unless a TLS proxy is in front; set it to true behind TLS"
        )
    if trusted_proxies and trusted_proxies.strip() == "*":
        warnings.append(
            "--forwarded-allow-ips '*' trusts X-Forwarded-For from anyone: clients can choose"
            " the address the throttles see"
        )
    return warnings


def _refuse_unbounded_gpu() -> None:
    """A grading process on a GPU host with nothing to bound its GPU sandboxes' memory
    stops here, in one line, before it serves or claims anything."""
    from grader.running.limits import UnboundedGpuError, refuse_unbounded_gpu_host

    try:
        refuse_unbounded_gpu_host()
    except UnboundedGpuError as error:
        raise CommandError(str(error)) from None


def cmd_worker(args: argparse.Namespace) -> int:
    import logging

    from app.core.db import migrate
    from app.grading.worker import EmbeddedWorkers

    log_context.configure(logging.INFO)
    _refuse_unbounded_gpu()
    migrate()
    workers = EmbeddedWorkers(threads=args.threads)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    workers.start()
    print(f"jaxjudge: {args.threads} worker thread(s) grading; Ctrl-C to stop", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
    workers.stop()
    return EXIT_OK


def cmd_sync(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.data import catalog

    migrate()
    with session_scope() as session:
        report = catalog.sync(session=session, publish=args.publish)
        for line in report.lines():
            print(line)
    return EXIT_FAILED if report.invalid else EXIT_OK


def cmd_publish(args: argparse.Namespace) -> int:
    from app.core.db import migrate, session_scope
    from app.data import catalog

    migrate()
    with session_scope() as session:
        version = catalog.version_or_newest(session=session, slug=args.slug, number=args.version)
        if version is None:
            raise CommandError(f"no such version of {args.slug!r}; run `jaxjudge sync` first")
        catalog.publish(session=session, version=version)
        print(f"published {version.slug} v{version.number} ({version.content_hash[:12]})")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """`jaxjudge check`, its results kept with the synced versions of the same content."""
    from grader import cli as grader_cli

    return grader_cli.cmd_check(args, on_result=record_check)


def record_check(folder: Path, result: CheckResult) -> str | None:
    """Keep a check's result on the version whose files are exactly the folder's (the
    preview then shows it); a line saying why not when it cannot."""
    from sqlalchemy.exc import SQLAlchemyError

    from app.core.config import settings
    from app.core.db import session_scope
    from app.data import catalog
    from app.grading import author_checks
    from grader.problems.source import ProblemSource

    url = settings.database
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        return "not recorded: no database here yet (`jaxjudge sync` makes one)"
    source = ProblemSource.of(folder)
    try:
        with session_scope() as session:
            version = catalog.version_with_hash(
                session=session, slug=source.slug, content_hash=source.content_hash()
            )
            if version is None:
                return "not recorded: no synced version has these files; run `jaxjudge sync`"
            author_checks.record(version, author_checks.report_of(result))
            said = f"recorded on {version.slug} v{version.number}"
            if catalog.publish_when_proven(session=session, version=version):
                said += "; published (the problem's first version, now proven)"
            return said
    except SQLAlchemyError as error:
        return f"not recorded: the database cannot be reached ({type(error).__name__})"


def cmd_submit(args: argparse.Namespace) -> int:
    from jaxjudge_client import connection, render, sources, verdicts

    from grader.cli import read_submission

    code = sources.read_code("-") if args.file == "-" else read_submission(args.file)
    link = connection.resolve(args.server, args.token)
    answer = verdicts.submit(
        link.client(timeout=args.http_timeout),
        args.slug,
        code,
        mode=args.mode,
        timeout=args.timeout,
    )
    print(json.dumps(answer) if args.json else render.text(answer))
    return EXIT_OK if answer["verdict"] == Verdict.ACCEPTED else EXIT_FAILED


def register(commands: Any) -> None:
    serve = commands.add_parser("serve", help="run the web app with embedded grading workers")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--workers", type=int, default=None, help="grading threads (default: pool size; 0: none)"
    )
    serve.add_argument(
        "--forwarded-allow-ips",
        default=None,
        help="comma-separated addresses of reverse proxies whose X-Forwarded-For is trusted"
        " (default: none; JAXJUDGE_FORWARDED_ALLOW_IPS)",
    )
    serve.set_defaults(handler=cmd_serve)

    worker = commands.add_parser(
        "worker", help="run grading workers alone (they share the database)"
    )
    worker.add_argument("--threads", type=int, default=2)
    worker.set_defaults(handler=cmd_worker)

    sync = commands.add_parser(
        "sync", help="record changed problem folders as new versions in the database"
    )
    sync.add_argument(
        "--publish", action="store_true", help="also make each folder's current version live"
    )
    sync.set_defaults(handler=cmd_sync)

    publish = commands.add_parser("publish", help="make a problem version the one learners get")
    publish.add_argument("slug")
    publish.add_argument(
        "--version", type=int, default=None, help="version number (default: newest)"
    )
    publish.set_defaults(handler=cmd_publish)

    submit = commands.add_parser(
        "submit", help="submit a file to a jaxjudge server and print the verdict"
    )
    submit.add_argument("slug")
    submit.add_argument("file", help="a file of code, or - to read standard input")
    submit.add_argument(
        "--server", default=None, help="default: $JAXJUDGE_SERVER, else http://127.0.0.1:8000"
    )
    submit.add_argument("--token", default=None, help="API token (default: $JAXJUDGE_TOKEN)")
    submit.add_argument("--mode", choices=list(Mode), default=Mode.SUBMIT)
    submit.add_argument("--json", action="store_true")
    submit.add_argument(
        "--timeout", type=float, default=300.0, help="seconds to wait for the verdict"
    )
    submit.add_argument(
        "--http-timeout", type=float, default=30.0, help="seconds to wait for each answer"
    )
    submit.set_defaults(handler=cmd_submit)


def parser() -> argparse.ArgumentParser:
    """The `jaxjudge` command's arguments: the grader's commands and the platform's."""
    from app.commands import accounts, courses, lti, mail, notify, problems, runtime
    from grader import cli as grader_cli

    top = argparse.ArgumentParser(prog="jaxjudge", description="Graded JAX/Flax/Optax exercises.")
    commands = top.add_subparsers(dest="command", required=True)
    grader_cli.register(commands)
    register(commands)
    commands.choices["check"].set_defaults(handler=cmd_check)  # and record each result
    accounts.register(commands)
    courses.register(commands)
    lti.register(commands)
    mail.register(commands)
    notify.register(commands)
    problems.register(commands)
    runtime.register(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """The `jaxjudge` command."""
    from grader import cli as grader_cli

    return grader_cli.run(parser(), argv, CommandError)


if __name__ == "__main__":
    sys.exit(main())
