"""Sustained grading through a real server, measured (not a test).

`jaxjudge serve` with its embedded workers on a throwaway database; learners
each keep ``--outstanding`` submissions in flight for ``--minutes`` (a correct
solution of a problem, round-robin over the bank), polling like the page does.
Reported: graded submissions per minute, and submit-to-verdict latency with
its two parts apart: queue wait (submitted to started) and grading (started to
finished), from the API's own timestamps.

    .venv/bin/python bench/sustained.py [--learners 3] [--outstanding 2] [--minutes 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bench.blocks import write_block
from bench.http_load import percentile
from grader.config import PROJECT_ROOT
from tests.app.server import Server, jaxjudge, server_env


@dataclass
class Finished:
    latency: float
    queue_wait: float
    grading: float
    verdict: str


@dataclass
class Tally:
    finished: list[Finished] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def api_time(text: str) -> datetime:
    """A timestamp as the API writes it (ISO 8601, maybe with Z)."""
    return datetime.fromisoformat(text.removesuffix("Z"))


def api(url: str, token: str, body: dict[str, str] | None = None) -> dict[str, object]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode() if body else None,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        result: dict[str, object] = json.loads(answer.read())
        return result


def learner(
    server: Server, token: str, sources: list[tuple[str, str]], end: float, tally: Tally
) -> None:
    index = 0
    while time.monotonic() < end:
        slug, code = sources[index % len(sources)]
        index += 1
        started = time.monotonic()
        made = api(f"{server.url}/api/submissions", token, {"problem": slug, "code": code})
        while True:
            state = api(f"{server.url}/api/submissions/{made['id']}", token)
            if state["status"] == "done":
                break
            time.sleep(0.2)
        submitted, began, done = (
            api_time(str(state[k])) for k in ("submitted_at", "started_at", "finished_at")
        )
        with tally.lock:
            tally.finished.append(
                Finished(
                    time.monotonic() - started,
                    (began - submitted).total_seconds(),
                    (done - began).total_seconds(),
                    str(state["verdict"]),
                )
            )


def measure(learners: int, outstanding: int, minutes: float) -> tuple[Tally, float]:
    workdir = Path(tempfile.mkdtemp(prefix="jaxjudge-sustained-"))
    env = server_env(workdir)
    prepared = jaxjudge(env, "prepare")
    assert prepared.returncode == 0, prepared.stderr
    tokens = []
    for number in range(learners):
        name = f"learner{number}"
        jaxjudge(env, "users", "create", name, "--password-stdin", stdin="long bench password\n")
        tokens.append(jaxjudge(env, "tokens", "create", name).stdout.strip())
    sources = sorted(
        (path.stem, path.read_text())
        for path in (PROJECT_ROOT / "reference_solutions").glob("*.py")
    )
    server = Server({**env, "JAXJUDGE_MAX_SUBMITS_PER_HOUR": "100000"}, 2)
    tally = Tally()
    try:
        time.sleep(5)  # the pool starts its children
        end = time.monotonic() + minutes * 60
        threads = [
            threading.Thread(
                target=learner, args=(server, token, sources[i:] + sources[:i], end, tally)
            )
            for i, token in enumerate(tokens)
            for _ in range(outstanding)
        ]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
    finally:
        server.stop()
    return tally, elapsed


def report(tally: Tally, elapsed: float, learners: int, outstanding: int) -> str:
    done = tally.finished
    latency = [f.latency for f in done]
    waits = [f.queue_wait for f in done]
    grading = [f.grading for f in done]
    per_minute = len(done) / elapsed * 60
    verdicts = {
        v: sum(1 for f in done if f.verdict == v) for v in sorted({f.verdict for f in done})
    }
    return (
        f"Sustained: {learners} learners x {outstanding} outstanding for {elapsed / 60:.1f} min:"
        f" {len(done)} graded, **{per_minute:.1f} per minute**; submit-to-verdict p50"
        f" {statistics.median(latency):.2f} s, p95 {percentile(latency, 0.95):.2f} s; queue wait p50"
        f" {statistics.median(waits):.2f} s, p95 {percentile(waits, 0.95):.2f} s; grading p50"
        f" {statistics.median(grading):.2f} s, p95 {percentile(grading, 0.95):.2f} s; verdicts {verdicts}."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=3)
    parser.add_argument("--outstanding", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--write", action="store_true", help="write docs/performance.md")
    args = parser.parse_args()
    tally, elapsed = measure(args.learners, args.outstanding, args.minutes)
    line = report(tally, elapsed, args.learners, args.outstanding)
    print(line, flush=True)
    if args.write:
        write_block(
            "sustained",
            [
                "Measured by `bench/sustained.py` through `jaxjudge serve` (2 embedded workers,"
                " a pool of 2), each learner submitting correct solutions round-robin over the"
                " bank and polling every 0.2 s; timestamps from the API.",
                "",
                line,
            ],
        )


if __name__ == "__main__":
    main()
