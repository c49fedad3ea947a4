"""The hot API reads under fifty token clients, measured through a real server (not a
test): the problem list, the tracks, and a submission's state (as fifty learners
running `jaxjudge submit` poll it), each read by 50 concurrent clients with their own
tokens, first each on its own keep-alive connection, then with a new connection for
every request. The server has finished its trusted runs first (a steady state: a
first start's runs are measured in the README).

    .venv/bin/python -m bench.api_load [--clients 50] [--seconds 15] [--write]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from bench.blocks import write_block
from bench.http_load import Client, LoadResult, run
from tests.app.server import Server, jaxjudge, server_env

TARGET_P99_SECONDS = 0.5


def _ready(url: str) -> dict[str, object]:
    try:
        with urllib.request.urlopen(f"{url}/readyz", timeout=30) as answer:
            body: dict[str, object] = json.loads(answer.read())
    except urllib.error.HTTPError as error:  # 503: no worker in this server; still an answer
        body = json.loads(error.read())
    return body


def _wait_for_trusted_runs(url: str) -> None:
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        runs = _ready(url)["trusted_runs"]
        assert isinstance(runs, dict)
        if runs["total"] and not runs["running"]:
            return
        time.sleep(1)
    raise SystemExit("the server's trusted runs did not finish in 15 minutes")


def measure(clients: int, seconds: float) -> list[tuple[str, LoadResult]]:
    env = server_env(Path(tempfile.mkdtemp(prefix="jaxjudge-load-")))
    jaxjudge(env, "users", "create", "ada", "--password-stdin", stdin="long bench password\n")
    tokens = [jaxjudge(env, "tokens", "create", "ada").stdout.strip() for _ in range(clients)]
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
        _wait_for_trusted_runs(server.url)
        results = []
        for reconnect in (False, True):
            for path in ("/api/problems", "/api/tracks", f"/api/submissions/{submission}"):
                load = [
                    Client(path, {"Authorization": f"Bearer {token}"}, reconnect=reconnect)
                    for token in tokens
                ]
                run(server.url, load[:5], 1.0)  # this path's first answers, not measured
                how = "a new connection per request" if reconnect else "keep-alive"
                result = run(server.url, load, seconds)
                results.append((f"`GET {path}`, {how}", result))
                print(f"{results[-1][0]}: {result.summary()}", flush=True)
        return results
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50, help="concurrent clients per read")
    parser.add_argument("--seconds", type=float, default=15.0, help="per read and mode")
    parser.add_argument("--write", action="store_true", help="write docs/performance.md")
    args = parser.parse_args()
    results = measure(args.clients, args.seconds)
    worst = max(result.percentile(0.99) for _name, result in results)
    verdict = "met" if worst < TARGET_P99_SECONDS else "NOT met"
    print(f"worst p99 {worst * 1000:.0f} ms: target p99 < 500 ms {verdict}", flush=True)
    if args.write:
        write_block(
            "api_load",
            [
                f"Measured by `bench/api_load.py`: {args.clients} concurrent token clients on"
                f" each hot read, {args.seconds:g} s each, against `jaxjudge serve` (SQLite,"
                " default settings) after its trusted runs, load generator on the same 2"
                f" cores. Target p99 under 500 ms: {verdict} (worst {worst * 1000:.0f} ms).",
                "",
                *(f"- {name}: {result.summary()}" for name, result in results),
            ],
        )


if __name__ == "__main__":
    main()
