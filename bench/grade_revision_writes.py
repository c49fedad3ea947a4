"""What the grade book's revision costs writers: commits that write a grade table, each
then also moving the one revision row on (app/core/grade_revision.py), from several
threads at once on a real PostgreSQL server (tests/postgres.py) and on SQLite, with the
revision kept and with the engine's watch removed, in the same run.

Each commit is what a grading worker's finish is: one submission's verdict and score
updated. The threads write different submissions, so without the revision they never
wait on each other's rows; with it, every commit takes the one row's lock for the
moment of its commit.

    .venv/bin/python -m bench.grade_revision_writes [--threads 8] [--commits 300] [--write]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

from sqlalchemy import Engine, event, update

from app.core import grade_revision
from app.core.config import settings
from app.core.db import engine, migrate, session_scope
from app.data import accounts
from app.models import Submission
from bench.blocks import write_block
from tests.postgres import PostgresServer


def _seed(submissions: int) -> list[int]:
    migrate()
    with session_scope() as session:
        user = accounts.create_user(session=session, name="writer", password="long password 1")
        rows = [
            Submission(user_id=user.id, problem="p", code="x\n", mode="submit", status="running")
            for _ in range(submissions)
        ]
        session.add_all(rows)
        session.flush()
        return [row.id for row in rows]


def _commits_per_second(ids: list[int], threads: int, commits: int) -> float:
    def work(mine: list[int]) -> None:
        for index in range(commits):
            with session_scope() as session:
                session.execute(
                    update(Submission)
                    .where(Submission.id == mine[index % len(mine)])
                    .values(status="done", verdict="accepted", score=index / commits)
                )

    shares = [ids[n::threads] for n in range(threads)]
    workers = [threading.Thread(target=work, args=(share,)) for share in shares]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return threads * commits / (time.perf_counter() - started)


def _unwatched(target: Engine) -> Callable[[], None]:
    """The engine's watch taken off; returns what puts it back."""
    hooks: list[tuple[str, Callable[..., None]]] = [
        ("before_cursor_execute", grade_revision._note_write),
        ("commit", grade_revision._move_on),
        ("rollback", grade_revision._forget),
    ]
    for name, hook in hooks:
        event.remove(target, name, hook)

    def put_back() -> None:
        for name, hook in hooks:
            event.listen(target, name, hook)

    return put_back


def measure(url: str, threads: int, commits: int) -> tuple[float, float, int]:
    """(commits/s with the revision, without it, revisions moved on), alternating twice."""
    settings.database_url = url
    ids = _seed(threads * 4)
    with session_scope() as session:
        first = grade_revision.current(session)
    kept, plain = [], []
    for _round in range(2):
        kept.append(_commits_per_second(ids, threads, commits))
        put_back = _unwatched(engine())
        try:
            plain.append(_commits_per_second(ids, threads, commits))
        finally:
            put_back()
    with session_scope() as session:
        moved = grade_revision.current(session) - first
    engine().dispose()
    return max(kept), max(plain), moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--commits", type=int, default=300, help="per thread and round")
    parser.add_argument("--write", action="store_true", help="write docs/performance.md")
    args = parser.parse_args()
    lines = []
    server = PostgresServer()
    try:
        server.execute("CREATE DATABASE writes")
        with tempfile.TemporaryDirectory() as folder:
            for name, url in (
                ("PostgreSQL", server.url("writes")),
                ("SQLite", f"sqlite:///{Path(folder) / 'writes.db'}"),
            ):
                kept, plain, moved = measure(url, args.threads, args.commits)
                line = (
                    f"{name}, {args.threads} threads: {kept:.0f} commits/s with the revision,"
                    f" {plain:.0f} without ({(kept / plain - 1) * 100:+.0f}%); the revision"
                    f" moved on {moved} times in the {2 * args.threads * args.commits} commits"
                    " made with it"
                )
                print(line, flush=True)
                lines.append(f"- {line}")
    finally:
        server.stop()
    if args.write:
        write_block(
            "grade_revision_writes",
            [
                f"Measured by `bench/grade_revision_writes.py` on {date.today().isoformat()},"
                " this 2-core machine (the best of two rounds each, alternating):",
                "",
                *lines,
            ],
        )


if __name__ == "__main__":
    main()
