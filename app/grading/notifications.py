"""New work, announced across processes: PostgreSQL's LISTEN/NOTIFY.

``announce_new_work()`` (called by a route once a submission or a regrade is
committed) rings this process's doorbell (app/grading/doorbell.py) and, on
PostgreSQL, sends ``NOTIFY jaxjudge_work``; every grading process listens on
its own connection (``Listener``) and rings its doorbell when a notification
arrives, so an idle `jaxjudge worker` on another machine claims the work at
once. Polling stays the safety net: a notification lost while a listener
reconnects costs at most one poll interval. On SQLite there is nothing to
listen to: embedded workers share the web process's doorbell.
"""

from __future__ import annotations

import logging
import threading

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from app.core.config import settings
from app.core.db import engine
from app.grading.doorbell import new_work

log = logging.getLogger("jaxjudge.notifications")
CHANNEL = "jaxjudge_work"
RECONNECT_SECONDS = 2.0


def _on_postgresql() -> bool:
    return settings.database.startswith("postgresql")


def libpq_url(url: str) -> str:
    """The SQLAlchemy URL as psycopg takes it (no `+psycopg` driver suffix)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def announce_new_work() -> None:
    new_work.ring()
    if not _on_postgresql():
        return
    try:
        with engine().connect() as connection:
            connection.exec_driver_sql(f"NOTIFY {CHANNEL}")
            connection.commit()
    except Exception as error:  # the work is stored; workers find it at their next poll
        log.warning("could not notify the workers (%s); they will poll", error)


class Listener:
    """Rings this process's doorbell for every ``NOTIFY jaxjudge_work``; reconnects
    after a failure. Started only on PostgreSQL."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jaxjudge-listen", daemon=True)
        self.connected = threading.Event()

    def start(self) -> Listener:
        if _on_postgresql():
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with psycopg.connect(libpq_url(settings.database), autocommit=True) as connection:
                    connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
                    self.connected.set()
                    new_work.ring()  # anything stored while we were not listening
                    while not self._stop.is_set():
                        for _notification in connection.notifies(timeout=1.0):
                            new_work.ring()
            except Exception as error:
                self.connected.clear()
                if self._stop.is_set():
                    return
                log.warning("listening for new work failed (%s); polling until it is back", error)
                self._stop.wait(RECONNECT_SECONDS)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
