"""Idle workers wake when a submission is stored, not at their next poll."""

from __future__ import annotations

import asyncio
import threading
import time

from fastapi.testclient import TestClient

from app.grading.doorbell import Changes, Doorbell
from app.grading.runs import FunctionGrader
from app.grading.worker import EmbeddedWorkers
from tests.app.conftest import token_for
from tests.app.test_api import stub_grader


def test_a_ring_ends_the_wait_and_a_ring_before_the_wait_is_not_lost() -> None:
    bell = Doorbell()
    seen = bell.rings()
    bell.ring()  # between looking for work and starting to wait
    started = time.monotonic()
    assert bell.wait(seen, timeout=5)
    assert time.monotonic() - started < 0.5
    assert not bell.wait(bell.rings(), timeout=0.05)  # nothing new: the timeout


def test_a_waiting_thread_wakes_at_once() -> None:
    bell = Doorbell()
    seen = bell.rings()
    woke: list[float] = []
    waiter = threading.Thread(target=lambda: woke.append(float(bell.wait(seen, timeout=10))))
    waiter.start()
    time.sleep(0.1)
    rang = time.monotonic()
    bell.ring()
    waiter.join(timeout=5)
    assert woke == [1.0] and time.monotonic() - rang < 1


def test_a_change_rung_from_a_worker_thread_wakes_the_stream_watching_it() -> None:
    changes = Changes()

    async def watch() -> tuple[bool, bool]:
        mine, other = changes.watch(5), changes.watch(6)
        threading.Timer(0.1, changes.changed, args=(5,)).start()
        started = time.monotonic()
        await asyncio.wait_for(mine.wait(), timeout=5)
        woke_at_once = time.monotonic() - started < 1
        changes.unwatch(5, mine)
        changes.unwatch(6, other)
        changes.changed(5)  # nobody watches any more: nothing to wake, nothing fails
        return woke_at_once, other.is_set()

    woke, other_woke = asyncio.run(watch())
    assert woke and not other_woke


def test_an_idle_worker_grades_a_new_submission_long_before_its_next_poll(
    client: TestClient,
) -> None:
    workers = EmbeddedWorkers(threads=1, grader=FunctionGrader(stub_grader), poll_seconds=30)
    workers.start()
    try:
        time.sleep(0.3)  # the worker found nothing and sleeps until its next poll
        headers = token_for("ada")
        submitted = time.monotonic()
        created = client.post(
            "/api/submissions",
            json={"problem": "scan-microbatched-grads", "code": "# correct"},
            headers=headers,
        ).json()
        state: dict[str, object] = {}
        while time.monotonic() - submitted < 10:
            state = client.get(f"/api/submissions/{created['id']}", headers=headers).json()
            if state["status"] == "done":
                break
            time.sleep(0.05)
        assert state["status"] == "done"
        assert time.monotonic() - submitted < 5  # not the 30 s poll
    finally:
        workers.stop()
