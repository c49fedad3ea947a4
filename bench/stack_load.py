"""The whole stack under a class, on loopback (not a test): a real PostgreSQL server
(tests/postgres.py), `jaxjudge serve --workers 0` and two `jaxjudge worker`
processes, and ``--learners`` simulated learners arriving over ``--arrival``
seconds. Each signs in (a server-side session, as the browser has), then browses
pages (the problem list, a problem page, their history), runs the samples once,
and one in ``--submit-every`` also submits; each waits for its verdicts, polling as
the page does. Everything, the load generator included, shares this machine.

Reported: page and API latency p50/p95/p99, the API's error rate, and for the
gradings the queue wait (the server's timestamps) and submit-to-verdict (the
client's clock).

    .venv/bin/python -m bench.stack_load [--learners 200] [--arrival 60] [--write]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from jaxjudge_client.verdicts import poll_delay

from bench.blocks import write_block
from bench.http_load import percentile
from bench.sustained import api_time
from grader.config import PROJECT_ROOT
from grader.config import settings as grader_settings
from tests.app.server import Server, jaxjudge
from tests.postgres import PostgresServer

SECRET = "stack-load-bench-secret-key-0123456789"
PROBLEMS = ("scan-microbatched-grads", "nnx-grad-accumulation")


@dataclass
class Tally:
    pages: list[float] = field(default_factory=list)
    page_errors: int = 0
    api: list[float] = field(default_factory=list)
    api_errors: int = 0
    error_statuses: dict[int, int] = field(default_factory=dict)  # 0: no answer
    api_calls: int = 0
    queue_wait: list[float] = field(default_factory=list)
    verdict: list[float] = field(default_factory=list)
    verdicts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Learner:
    def __init__(self, url: str, token: str, cookie: str, csrf: str, tally: Tally) -> None:
        parsed = urlparse(url)
        self.connection = http.client.HTTPConnection(
            parsed.hostname or "127.0.0.1", parsed.port, timeout=120
        )
        self.token, self.cookie, self.csrf, self.tally = token, cookie, csrf, tally

    def page(self, path: str) -> None:
        started = time.monotonic()
        status = 0
        for _attempt in range(2):
            try:
                self.connection.request(
                    "GET", path, headers={"Cookie": f"jaxjudge_session={self.cookie}"}
                )
                answer = self.connection.getresponse()
                answer.read()
                status = answer.status
                break
            except (OSError, http.client.HTTPException):
                self.connection.close()
        with self.tally.lock:
            self.tally.pages.append(time.monotonic() - started)
            self.tally.page_errors += not 0 < status < 400

    def api(self, method: str, path: str, body: dict[str, str] | None = None) -> dict[str, object]:
        started = time.monotonic()
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        status, raw = 0, b"{}"
        for _attempt in range(2):  # an idle keep-alive connection the server closed: reconnect
            try:
                self.connection.request(
                    method, path, body=json.dumps(body) if body else None, headers=headers
                )
                answer = self.connection.getresponse()
                status, raw = answer.status, answer.read()
                break
            except (OSError, http.client.HTTPException):
                self.connection.close()
        ok = 0 < status < 400
        with self.tally.lock:
            self.tally.api.append(time.monotonic() - started)
            self.tally.api_calls += 1
            self.tally.api_errors += not ok
            if not ok:
                self.tally.error_statuses[status] = self.tally.error_statuses.get(status, 0) + 1
        return json.loads(raw) if ok else {}

    def grade(self, slug: str, code: str, mode: str) -> None:
        started = time.monotonic()
        made = self.api("POST", "/api/submissions", {"problem": slug, "code": code, "mode": mode})
        if "id" not in made:
            return
        while True:
            state = self.api("GET", f"/api/submissions/{made['id']}")
            if state.get("status") == "done":
                break
            time.sleep(poll_delay(time.monotonic() - started))
        submitted, claimed = (api_time(str(state[k])) for k in ("submitted_at", "started_at"))
        with self.tally.lock:
            self.tally.verdict.append(time.monotonic() - started)
            self.tally.queue_wait.append((claimed - submitted).total_seconds())
            verdict = str(state["verdict"])
            self.tally.verdicts[verdict] = self.tally.verdicts.get(verdict, 0) + 1


def _accounts(url: str, learners: int) -> list[tuple[str, str, str]]:
    """(token, cookie, csrf) per learner, made in this process against the database."""
    from base64 import b64encode

    import itsdangerous

    from app.core.config import settings
    from app.core.db import session_scope
    from app.data import accounts, api_tokens, web_sessions

    settings.database_url = url
    made = []
    with session_scope() as session:
        for number in range(learners):
            user = accounts.create_user(
                session=session, name=f"learner{number}", password="long bench password"
            )
            token = api_tokens.create(session=session, user=user)[0]
            csrf = f"csrf{number}"
            sid = web_sessions.start(session=session, user=user)
            data = b64encode(json.dumps({"sid": sid, "csrf": csrf}).encode())
            cookie = itsdangerous.TimestampSigner(SECRET).sign(data).decode()
            made.append((token, cookie, csrf))
    return made


def _stats(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"p50 {statistics.median(values) * 1000:.0f} ms, p95 {percentile(values, 0.95) * 1000:.0f} ms,"
        f" p99 {percentile(values, 0.99) * 1000:.0f} ms"
    )


def _seconds(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"p50 {statistics.median(values):.2f} s, p95 {percentile(values, 0.95):.2f} s,"
        f" max {max(values):.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--arrival", type=float, default=60.0)
    parser.add_argument("--submit-every", type=int, default=4)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    postgres = PostgresServer()
    postgres.execute("CREATE DATABASE jaxjudge")
    url = postgres.url("jaxjudge")
    home = Path(tempfile.mkdtemp(prefix="jaxjudge-stack-"))
    env = {
        **os.environ,
        "JAXJUDGE_DATABASE_URL": url,
        "JAXJUDGE_SECRET_KEY": SECRET,
        "JAXJUDGE_DATA_DIR": str(grader_settings.data_dir),
        "JAXJUDGE_MAX_SUBMITS_PER_HOUR": "100000",
    }
    assert jaxjudge(env, "prepare").returncode == 0
    server = Server(env, 0, log=home / "web.log")
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "app.commands.cli", "worker", "--threads", "1"],
            env=env,
            stdout=(home / f"worker{n}.log").open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        for n in range(2)
    ]
    tally = Tally()
    try:
        made = _accounts(url, args.learners)
        codes = {
            s: (PROJECT_ROOT / "reference_solutions" / f"{s}.py").read_text() for s in PROBLEMS
        }
        time.sleep(15)  # the workers' pools warm up, as on a running service

        def one(number: int) -> None:
            rng = random.Random(number)
            time.sleep(rng.uniform(0, args.arrival))
            learner = Learner(server.url, *made[number], tally)
            slug = PROBLEMS[number % len(PROBLEMS)]
            learner.page("/")
            time.sleep(rng.uniform(1, 4))
            learner.page(f"/problems/{slug}")
            learner.api("GET", "/api/problems")
            time.sleep(rng.uniform(2, 6))
            learner.grade(slug, codes[slug], "run")
            learner.page(f"/problems/{slug}/history")
            if number % args.submit_every == 0:
                time.sleep(rng.uniform(1, 4))
                learner.grade(slug, codes[slug], "submit")
            learner.page(f"/problems/{slug}")

        started = time.monotonic()
        threads = [threading.Thread(target=one, args=(n,)) for n in range(args.learners)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
    finally:
        server.stop()
        for worker in workers:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=60)
        postgres.stop()
    error_rate = tally.api_errors / max(1, tally.api_calls)
    lines = [
        f"Measured by `bench/stack_load.py`: PostgreSQL {postgres_version()} (a real server on loopback),"
        " `jaxjudge serve --workers 0` and two `jaxjudge worker` processes (one grading thread each),"
        f" {args.learners} simulated learners arriving over {args.arrival:.0f} s, on this 2-core"
        " machine (the load generator included). Each signs in, opens the problem list and a"
        f" problem, lists the problems through the API, runs the samples, opens its history; one"
        f" in {args.submit_every} also submits. Problems: {', '.join(PROBLEMS)}.",
        "",
        f"- Pages ({len(tally.pages)}): {_stats(tally.pages)}; errors {tally.page_errors}.",
        f"- API ({tally.api_calls} requests, polls included): {_stats(tally.api)};"
        f" errors {tally.api_errors} ({error_rate:.1%}; by status, 0 for no answer:"
        f" {dict(sorted(tally.error_statuses.items()))}).",
        f"- Gradings ({len(tally.verdict)}): queue wait {_seconds(tally.queue_wait)};"
        f" submit-to-verdict {_seconds(tally.verdict)}.",
        f"- Verdicts: {dict(sorted(tally.verdicts.items()))}; everything done {elapsed:.0f} s after"
        " the first arrival.",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_block("stack_load", lines)


def postgres_version() -> str:
    done = subprocess.run(["psql", "--version"], capture_output=True, text=True, check=False)
    found = re.search(r"\d+\.\d+", done.stdout)
    return found.group() if found else "15"


if __name__ == "__main__":
    main()
