"""The server's repeated rounds (app/core/periodic.py): a failed round is logged and the
next comes at its time; stopping does not wait out an interval."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from app.core.periodic import Periodic


def test_a_failed_round_is_logged_and_the_next_one_still_comes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[int] = []
    third = threading.Event()

    def work() -> None:
        calls.append(len(calls))
        if len(calls) >= 3:
            third.set()
        if len(calls) == 1:
            raise RuntimeError("the database went away")

    job = Periodic(
        name="test-round", interval=0.01, work=work, log=logging.getLogger("test.periodic")
    )
    with caplog.at_level(logging.ERROR, logger="test.periodic"):
        job.start()
        assert third.wait(5)
        job.stop()
    assert "test-round round failed" in caplog.text
    assert "the database went away" in caplog.text


def test_stopping_does_not_wait_for_the_next_round() -> None:
    job = Periodic(
        name="slow-round", interval=3600, work=lambda: None, log=logging.getLogger("test")
    )
    job.start()
    started = time.monotonic()
    job.stop()
    assert time.monotonic() - started < 5
