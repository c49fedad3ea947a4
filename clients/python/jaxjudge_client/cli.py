"""`jaxjudge-client`: submit code to a jaxjudge server (or run its samples), look at
a submission, list the problems. Exit status: 0 accepted (or done), 1 not accepted,
2 an error, said in one line."""

from __future__ import annotations

import argparse
import json
import os
import sys

from jaxjudge_client import connection, render, sources, verdicts
from jaxjudge_client.errors import CommandError

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


def _code(args: argparse.Namespace) -> str:
    if args.code is not None and args.source is not None:
        raise CommandError("give the code as a file (or -) or with --code, not both")
    if args.code is not None:
        return str(args.code)
    if args.source is None:
        raise CommandError("give a file of code, - for standard input, or --code '...'")
    return sources.read_code(args.source)


def _progress(answer: verdicts.Answer, waited: float) -> None:
    if sys.stderr.isatty():
        print(f"\r{verdicts.stage(answer, waited):<40}", end="", file=sys.stderr, flush=True)


def _notebook(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as error:
        raise CommandError(f"cannot read the notebook {path!r}: {error.strerror}") from None


def cmd_course_notebook(args: argparse.Namespace) -> int:
    if (
        args.slug or args.source or args.code or args.command != "submit"
        or not args.notebook or not args.notebook_assignment or args.course is None
    ):  # fmt: skip
        raise CommandError(
            "a notebook assignment is sent with: submit --course ID --notebook-assignment NAME"
            " --notebook PATH (no slug, no code)"
        )
    content = _notebook(args.notebook)
    link = connection.resolve(args.server, args.token)
    results = verdicts.submit_course_notebook(
        link.client(timeout=args.http_timeout), args.course, args.notebook_assignment,
        content, os.path.basename(args.notebook), timeout=args.timeout,
    )  # fmt: skip
    if args.json:
        print(json.dumps([{"submitted": made, "answer": answer} for made, answer in results]))
    for made, answer in [] if args.json else results:
        print(f"{made.get('title') or made.get('problem')}:")
        if answer is None:
            print(f"  not submitted: {made.get('reason')}")
            continue
        print("\n".join([*verdicts.notebook_lines(made), render.text(answer)]))
    accepted = all(a is not None and a.get("verdict") == "accepted" for _m, a in results)
    return EXIT_OK if accepted else EXIT_FAILED


def cmd_send(args: argparse.Namespace) -> int:
    if args.course is not None or args.notebook_assignment is not None:
        return cmd_course_notebook(args)
    if not args.slug:
        raise CommandError("name the problem, e.g. submit nnx-grad-accumulation FILE")
    if args.notebook is not None:
        if args.source is not None or args.code is not None:
            raise CommandError("give a notebook (--notebook) or code, not both")
        content = _notebook(args.notebook)
        link = connection.resolve(args.server, args.token)
        answer, made = verdicts.submit_notebook(
            link.client(timeout=args.http_timeout), args.slug, content,
            os.path.basename(args.notebook), mode=args.command, timeout=args.timeout,
            progress=None if args.json else _progress,
        )  # fmt: skip
        if sys.stderr.isatty() and not args.json:
            print("\r" + " " * 40 + "\r", end="", file=sys.stderr)
        if args.json:
            print(json.dumps({**answer, "notebook": made}))
        else:
            print("\n".join([*verdicts.notebook_lines(made), render.text(answer)]))
        return EXIT_OK if answer.get("verdict") == "accepted" else EXIT_FAILED
    code = _code(args)
    link = connection.resolve(args.server, args.token)
    answer = verdicts.submit(
        link.client(timeout=args.http_timeout),
        args.slug,
        code,
        mode=args.command,
        timeout=args.timeout,
        progress=None if args.json else _progress,
    )
    if sys.stderr.isatty() and not args.json:
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr)
    print(json.dumps(answer) if args.json else render.text(answer))
    return EXIT_OK if answer.get("verdict") == "accepted" else EXIT_FAILED


def cmd_status(args: argparse.Namespace) -> int:
    link = connection.resolve(args.server, args.token)
    answer = link.client(timeout=args.http_timeout).request(
        "GET", f"/api/submissions/{args.submission}"
    )
    if args.json:
        print(json.dumps(answer))
    elif answer.get("status") == "done":
        print(render.text(answer))
    else:
        print(f"submission {args.submission}: {verdicts.stage(answer, 0.0).split(',')[0]}")
    return EXIT_OK


def cmd_problems(args: argparse.Namespace) -> int:
    link = connection.resolve(args.server, args.token)
    found = link.client(timeout=args.http_timeout).request("GET", "/api/problems")
    rows = found.get("data", found) if isinstance(found, dict) else found
    if args.json:
        print(json.dumps(rows))
        return EXIT_OK
    for problem in rows:
        slug, status = problem.get("slug", "?"), problem.get("status", "")
        print(f"{slug:<32} {status:<12} {problem.get('title', '')}")
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="jaxjudge-client",
        description="Submit JAX code to a jaxjudge server. The server and token come from"
        " --server/--token, JAXJUDGE_SERVER/JAXJUDGE_TOKEN, or ~/.config/jaxjudge/client.json.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--server", default=None, help="e.g. https://judge.example.org")
    common.add_argument("--token", default=None, help="an API token (from the account page)")
    common.add_argument("--json", action="store_true", help="print the answer as JSON")
    common.add_argument("--http-timeout", type=float, default=30.0, help=argparse.SUPPRESS)
    commands = top.add_subparsers(dest="command", required=True)
    for name, summary in (
        ("submit", "submit code and print the verdict"),
        ("run", "run the samples only and print what they gave"),
    ):
        send = commands.add_parser(name, parents=[common], help=summary)
        send.add_argument("slug", nargs="?", help="the problem, e.g. nnx-grad-accumulation")
        send.add_argument("source", nargs="?", help="a file of code, or - for standard input")
        send.add_argument("--code", default=None, help="the code itself, as a string")
        send.add_argument("--timeout", type=float, default=300.0, help="seconds to wait")
        send.add_argument(
            "--notebook", default=None, help="a saved .ipynb: the server takes the code from it"
        )
        send.add_argument("--course", type=int, default=None, help="with --notebook-assignment")
        send.add_argument(
            "--notebook-assignment",
            default=None,
            help="a course's notebook assignment: one .ipynb for its problems",
        )
        send.set_defaults(handler=cmd_send)
    status = commands.add_parser("status", parents=[common], help="a submission's state")
    status.add_argument("submission", type=int)
    status.set_defaults(handler=cmd_status)
    problems = commands.add_parser("problems", parents=[common], help="list the problems")
    problems.set_defaults(handler=cmd_problems)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except CommandError as error:
        print(f"jaxjudge-client: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
