"""The hot reads at their target, measured with a C client: wrk (Debian's package) sends
50 concurrent keep-alive clients at one `jaxjudge serve` process for each read:

- the problem list and the tracks, as a learner's token reads them;
- one submission's state, as `jaxjudge submit` polls it;
- a course's grades for 300 learners, as an instructor's token (or an LMS export) reads
  them: once as clients read it (browsers, httpx and requests all send
  `Accept-Encoding: gzip`), once as a client that takes no compression (2.8 MB a read).

The server runs on this machine beside wrk (one load thread, so the server keeps a core
of the two); its database is a throwaway SQLite file seeded like bench/dashboard_pages.py
(300 learners, every bank problem assigned, graded submissions inserted). Each figure is
printed beside the issue's target: 500 requests/s or more, p99 under 200 ms. Before the
reads, the bare stack's floor in the same run: an `async` route that returns a constant
through the same uvicorn (uvloop, httptools), no middleware, no database.

    .venv/bin/python -m bench.hot_reads [--seconds 15] [--connections 50] [--write]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from bench.api_load import _wait_for_trusted_runs
from bench.blocks import write_block
from tests.app.server import Server, free_port, server_env

TARGET_RATE = 500.0
TARGET_P99_MS = 200.0

FLOOR_APP = """
import sys, uvicorn
from fastapi import FastAPI
app = FastAPI()
@app.get("/floor")
async def floor() -> dict[str, int]:
    return {"ok": 1}
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


@dataclass(frozen=True)
class WrkResult:
    name: str
    rate: float
    p50_ms: float
    p99_ms: float
    requests: int
    bad: int  # answers other than 2xx/3xx, and socket errors

    def meets(self) -> bool:
        return self.bad == 0 and self.rate >= TARGET_RATE and self.p99_ms < TARGET_P99_MS

    def line(self, *, with_target: bool = True) -> str:
        bad = f", {self.bad} failed" if self.bad else ""
        measured = (
            f"{self.name}: {self.rate:.0f} requests/s, p50 {self.p50_ms:.1f} ms,"
            f" p99 {self.p99_ms:.1f} ms ({self.requests} requests{bad})"
        )
        if not with_target:
            return measured
        verdict = "met" if self.meets() else "NOT met"
        return f"{measured}: target {TARGET_RATE:.0f}/s and p99 < {TARGET_P99_MS:.0f} ms {verdict}"


def _milliseconds(value: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[unit]


def parse_wrk(name: str, output: str) -> WrkResult:
    """wrk's `--latency` report: its rate, 50% and 99% lines, and its error lines."""
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output)[1])  # type: ignore[index]
    p50 = _milliseconds(re.search(r"^\s+50%\s+(\S+)", output, re.M)[1])  # type: ignore[index]
    p99 = _milliseconds(re.search(r"^\s+99%\s+(\S+)", output, re.M)[1])  # type: ignore[index]
    requests = int(re.search(r"(\d+) requests in", output)[1])  # type: ignore[index]
    bad = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses:\s+(\d+)", output))
    if errors := re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    ):
        bad += sum(int(n) for n in errors.groups())
    return WrkResult(name, rate, p50, p99, requests, bad)


def wrk(
    name: str,
    url: str,
    token: str | None,
    seconds: float,
    connections: int,
    headers: tuple[str, ...] = (),
) -> WrkResult:
    header = ["-H", f"Authorization: Bearer {token}"] if token else []
    for extra in headers:
        header += ["-H", extra]
    # A first short pass: the path's first answers (imports, caches) are not measured.
    subprocess.run(["wrk", "-t1", "-c5", "-d1s", *header, url], capture_output=True, check=True)
    # A slow answer is measured, not dropped: wrk's own time-out (2 s) would leave it out
    # of the latencies and count it only as a socket error.
    done = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{seconds:g}s",
            "--timeout",
            "60s",
            "--latency",
            *header,
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return parse_wrk(name, done.stdout)


def _floor(seconds: float, connections: int) -> WrkResult:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", FLOOR_APP, str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/floor", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        floor = wrk(
            "the floor (a bare `async` route)",
            f"http://127.0.0.1:{port}/floor",
            None,
            seconds,
            connections,
        )
        print(floor.line(with_target=False), flush=True)
        return floor
    finally:
        process.terminate()
        process.wait(timeout=30)


@dataclass(frozen=True)
class Read:
    name: str
    path: str
    token: str
    headers: tuple[str, ...] = ()


def _seeded(folder: Path) -> tuple[dict[str, str], list[Read]]:
    """The server's environment and the paths to read, with the token each needs."""
    env = server_env(folder)
    seeder = f"""
import json
from app.core.config import settings
settings.database_url = {env["JAXJUDGE_DATABASE_URL"]!r}
from app.core.db import migrate, session_scope
from app.data import api_tokens
from app.models import Submission, User
from sqlalchemy import select
from bench.dashboard_pages import seed
migrate()
course, _count = seed(300, 4)
with session_scope() as session:
    teacher = session.scalars(select(User).where(User.name == "teacher")).one()
    learner = session.scalars(select(User).where(User.name == "learner0000")).one()
    submission = session.scalars(select(Submission.id).where(Submission.user_id == learner.id)).first()
    print(json.dumps({{
        "course": course,
        "submission": submission,
        "teacher": api_tokens.create(session=session, user=teacher)[0],
        "learner": api_tokens.create(session=session, user=learner)[0],
    }}))
"""
    done = subprocess.run(
        [sys.executable, "-c", seeder], env=env, capture_output=True, text=True, check=True
    )
    seeded = json.loads(done.stdout.strip().splitlines()[-1])
    grades = f"/api/courses/{seeded['course']}/grades"
    reads = [
        Read("`GET /api/problems`", "/api/problems", seeded["learner"]),
        Read("`GET /api/tracks`", "/api/tracks", seeded["learner"]),
        Read(
            f"`GET /api/submissions/{seeded['submission']}`",
            f"/api/submissions/{seeded['submission']}",
            seeded["learner"],
        ),
        Read(f"`GET {grades}` (gzip)", grades, seeded["teacher"], ("Accept-Encoding: gzip",)),
        Read(f"`GET {grades}` (uncompressed)", grades, seeded["teacher"]),
    ]
    return env, reads


def measure(seconds: float, connections: int) -> list[WrkResult]:
    if shutil.which("wrk") is None:
        raise SystemExit(
            "bench/hot_reads.py needs wrk: `make bench` installs it (apt-get install wrk)"
        )
    results = [_floor(seconds, connections)]
    with tempfile.TemporaryDirectory(prefix="jaxjudge-hot-reads-") as folder:
        env, reads = _seeded(Path(folder))
        server = Server(env, 0)
        try:
            _wait_for_trusted_runs(server.url)
            for read in reads:
                url = server.url + read.path
                results.append(wrk(read.name, url, read.token, seconds, connections, read.headers))
                print(results[-1].line(), flush=True)
        finally:
            server.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="per read")
    parser.add_argument("--connections", type=int, default=50, help="concurrent clients")
    parser.add_argument("--write", action="store_true", help="write docs/performance.md")
    args = parser.parse_args()
    floor, *reads = measure(args.seconds, args.connections)
    met = sum(result.meets() for result in reads)
    print(f"{met} of {len(reads)} hot reads at their target", flush=True)
    if args.write:
        write_block(
            "hot_reads",
            [
                f"Measured by `bench/hot_reads.py` on {date.today().isoformat()}, this 2-core"
                f" machine: wrk (one thread, {args.connections} keep-alive connections,"
                f" {args.seconds:g} s per read) against one `jaxjudge serve` process (SQLite,"
                " 300 learners seeded) on the same cores. Target: 500 requests/s or more with"
                f" p99 under 200 ms; {met} of {len(reads)} reads meet it.",
                "",
                f"- {floor.line(with_target=False)}",
                *(f"- {result.line()}" for result in reads),
            ],
        )


if __name__ == "__main__":
    main()
