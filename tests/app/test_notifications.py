"""Cross-process wake-ups on PostgreSQL: a NOTIFY from any process (another web
server, another machine) rings the doorbell of every listening grading process."""

from __future__ import annotations

import time

import psycopg

from app.grading.doorbell import new_work
from app.grading.notifications import CHANNEL, Listener, announce_new_work, libpq_url


def test_a_notify_from_another_process_wakes_this_ones_workers(postgres_database: str) -> None:
    listener = Listener().start()
    try:
        assert listener.connected.wait(10), "the listener did not connect"
        time.sleep(0.2)
        seen = new_work.rings()
        # As another process would: its own connection, nothing shared with ours.
        with psycopg.connect(libpq_url(postgres_database), autocommit=True) as other:
            other.execute(f"NOTIFY {CHANNEL}")
        assert new_work.wait(seen, timeout=5), "the notification did not ring the doorbell"
    finally:
        listener.stop()


def test_announcing_notifies_other_listeners(postgres_database: str) -> None:
    with psycopg.connect(libpq_url(postgres_database), autocommit=True) as other:
        other.execute(f"LISTEN {CHANNEL}")
        announce_new_work()
        received = list(other.notifies(timeout=5, stop_after=1))
    assert [n.channel for n in received] == [CHANNEL]


def test_on_sqlite_nothing_listens(sqlite_database: str) -> None:
    listener = Listener().start()
    assert not listener.connected.wait(0.5)
    listener.stop()
    announce_new_work()  # rings in process only, and does not fail
