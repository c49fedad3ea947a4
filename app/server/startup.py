"""What a server process starts and stops around serving: migrations and the problem
sync, trusted runs ahead of learners, the usage recorder, the LMS grade outbox, the
mail outbox, the daily digest of due assignments and the embedded grading workers."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI

from app.core.config import settings
from app.core.db import migrate, session_scope
from app.data import catalog, usage
from app.grading.preparation import Preparer
from app.grading.worker import EmbeddedWorkers
from app.lti import outbox as lti_outbox
from app.mail import delivery as mail_delivery
from app.reports import deadline_digest


def _sync_problems() -> None:
    """Record changed problem folders as versions (the live ones stay live)."""
    with session_scope() as session:
        for line in catalog.sync(session=session).lines():
            logging.getLogger("jaxjudge.catalog").info("sync: %s", line)


def lifespan(
    *, workers: int, prepare: bool
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def serving(_app: FastAPI) -> AsyncIterator[None]:
        # As many request threads as the database pool has connections for them
        # (app/core/db.py): a request waits for a thread, never for a connection.
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.request_threads
        migrate()
        _sync_problems()
        # Trusted runs ahead of learners: expected outputs and stored samples.
        preparer = Preparer() if prepare else None
        if preparer:
            preparer.start()
        recorder = usage.Recorder()
        recorder.start()
        lms_outbox = lti_outbox.deliverer()
        lms_outbox.start()
        digests = deadline_digest.digest_job()
        digests.start()
        mail_outbox = mail_delivery.deliverer()
        mail_outbox.start()
        pool = EmbeddedWorkers(threads=workers) if workers > 0 else None
        if pool:
            pool.start()
        yield
        if pool:
            pool.stop()
        mail_outbox.stop()
        digests.stop()
        lms_outbox.stop()
        recorder.stop()
        if preparer:
            preparer.stop()

    return serving
