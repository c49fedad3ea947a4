"""The API under many token clients, measured through a real server (not a test).

Fifty clients poll one submission's state (`GET /api/submissions/{id}`, as fifty
learners running `jaxjudge submit` would) and fifty list the problems, each on
its own keep-alive connection with its own token, for ``--seconds``.

    .venv/bin/python bench/api_load.py [--clients 50] [--seconds 20] [--write]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import urllib.request
from pathlib import Path

from bench.blocks import write_block
from bench.http_load import Client, LoadResult, run
from tests.app.server import Server, jaxjudge, server_env


def measure(clients: int, seconds: float) -> LoadResult:
    env = server_env(Path(tempfile.mkdtemp(prefix="jaxjudge-load-")))
    jaxjudge(env, "users", "create", "ada", "--password-stdin", stdin="long bench password\n")
    tokens = [jaxjudge(env, "tokens", "create", "ada").stdout.strip() for _ in range(2 * clients)]
    server = Server(env, 0)
    try:
        request = urllib.request.Request(
            f"{server.url}/api/submissions",
            data=json.dumps(
                {"problem": "scan-microbatched-grads", "code": "x", "mode": "run"}
            ).encode(),
            headers={"Authorization": f"Bearer {tokens[0]}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            submission = json.loads(answer.read())["id"]
        polling = [
            Client(f"/api/submissions/{submission}", {"Authorization": f"Bearer {tokens[i]}"})
            for i in range(clients)
        ]
        listing = [
            Client("/api/problems", {"Authorization": f"Bearer {tokens[clients + i]}"})
            for i in range(clients)
        ]
        return run(server.url, polling + listing, seconds)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50, help="per endpoint")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--write", action="store_true", help="write docs/performance.md")
    args = parser.parse_args()
    result = measure(args.clients, args.seconds)
    print(result.summary(), flush=True)
    if args.write:
        write_block(
            "api_load",
            [
                f"Measured by `bench/api_load.py`: {args.clients} token clients polling"
                f" `GET /api/submissions/{{id}}` and {args.clients} listing `GET /api/problems`,"
                f" each on its own keep-alive connection and token, for {args.seconds:g} s against"
                " `jaxjudge serve` (SQLite, default settings), load generator on the same 2 cores:",
                "",
                result.summary(),
            ],
        )


if __name__ == "__main__":
    main()
