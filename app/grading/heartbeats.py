"""Grading processes report themselves to the database every few seconds: host, pid,
device, pool, the jobs in hand. Readiness (`/readyz`) and operators read it.

A grading process is named ``host:pid-starttime`` (grader/running/cgroups.py
``process_tag``), which is also the prefix of its lease owners (app/grading/queue.py).
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.models import ServiceCheck, WorkerHeartbeat, utcnow
from grader.running.cgroups import process_tag

log = logging.getLogger("jaxjudge.heartbeat")
EVERY_SECONDS = 5.0
STALE_AFTER = timedelta(seconds=3 * EVERY_SECONDS)
VERSION = "0.2.0"


def host() -> str:
    return socket.gethostname()[:40]


def process_name(pid: int | None = None) -> str:
    import os

    pid = pid or os.getpid()
    return f"{host()}:{process_tag(pid) or pid}"


@dataclass
class Snapshot:
    threads: int
    idle_children: int
    pool_size: int
    warm: bool
    current_jobs: list[int]


class Heartbeat:
    """Writes this process's row every ``EVERY_SECONDS`` until stopped; removes it then."""

    def __init__(self, *, device: str, snapshot: Callable[[], Snapshot]) -> None:
        import os

        self.name = process_name()
        self.device = device
        self.snapshot = snapshot
        self.pid = os.getpid()
        self.started_at = utcnow()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jaxjudge-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def beat(self) -> None:
        now = self.snapshot()
        with session_scope() as session:
            row = session.get(WorkerHeartbeat, self.name)
            if row is None:
                row = WorkerHeartbeat(name=self.name, started_at=self.started_at)
                session.add(row)
            row.host, row.pid, row.device = host(), self.pid, self.device
            row.threads, row.pool_size = now.threads, now.pool_size
            row.idle_children, row.warm = now.idle_children, now.warm
            row.current_jobs = ",".join(map(str, now.current_jobs))[:200]
            row.version, row.heartbeat_at = VERSION, utcnow()

    def _run(self) -> None:
        failing = False
        while not self._stop.is_set():
            try:
                self.beat()
                if failing:
                    log.info("heartbeat: the database takes writes again")
                failing = False
            except SQLAlchemyError as error:
                if not failing:
                    log.warning(
                        "heartbeat: cannot write (%s); will keep trying", type(error).__name__
                    )
                failing = True
            self._stop.wait(EVERY_SECONDS)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        try:
            with session_scope() as session:
                session.execute(delete(WorkerHeartbeat).where(WorkerHeartbeat.name == self.name))
        except SQLAlchemyError:
            pass  # the row goes stale and readers ignore it


def live(session: Session) -> list[WorkerHeartbeat]:
    """Grading processes that reported recently."""
    since = utcnow() - STALE_AFTER
    return list(
        session.scalars(select(WorkerHeartbeat).where(WorkerHeartbeat.heartbeat_at >= since))
    )


def database_writable(session: Session) -> None:
    """Write a row (raises what the database raises); the caller's commit of it is what
    readiness means by writable (app/server/health.py)."""
    row = session.get(ServiceCheck, "readyz")
    if row is None:
        session.add(ServiceCheck(name="readyz", checked_at=utcnow()))
    else:
        row.checked_at = utcnow()
    session.flush()
