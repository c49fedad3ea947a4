"""Engine, sessions and migrations. Only portable SQL: SQLite and PostgreSQL alike."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from app.core import grade_revision
from app.core.config import PROJECT_ROOT, grader_settings, settings


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers never block the worker's writes
    cursor.execute(f"PRAGMA busy_timeout={int(settings.database_wait_seconds * 1000)}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def pool_size() -> int:
    """One connection per request thread, plus the grading workers and background
    threads (workers, lease keepers, the usage recorder, trusted-run preparation):
    a request waits for a connection only when something holds one too long."""
    return settings.request_threads + 2 * grader_settings.pool_size + 8


def make_engine(url: str) -> Engine:
    # A request that cannot get a connection (or, on SQLite, the write lock) within
    # database_wait_seconds fails with a TimeoutError/OperationalError that
    # app/server/error_handlers.py answers 503 with Retry-After: the client tries again, nothing is lost.
    sizing: dict[str, Any] = {
        "pool_size": pool_size(),
        "max_overflow": 8,
        "pool_timeout": settings.database_wait_seconds,
    }
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": settings.database_wait_seconds},
            **sizing,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
    else:
        engine = create_engine(url, pool_pre_ping=True, **sizing)
    grade_revision.watch(engine)
    return engine


@cache
def engine_for(url: str) -> Engine:
    # A plain database file gets its folder made; an SQLite URI (`file:...?uri=true`,
    # e.g. a read-only open) names an existing file and is left as it is.
    if url.startswith("sqlite:///") and not url.startswith("sqlite:///file:"):
        from pathlib import Path

        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    return make_engine(url)


def engine() -> Engine:
    return engine_for(settings.database)


@cache
def _session_factory(url: str) -> sessionmaker[Session]:
    return sessionmaker(engine_for(url), expire_on_commit=False)


@contextmanager
def session_scope() -> Iterator[Session]:
    """One unit of work: committed on success, rolled back on error."""
    session = new_session()
    try:
        yield session
    except BaseException:
        end_session(session, commit=False)
        raise
    end_session(session, commit=True)


def database_of(session: Session) -> str:
    """Which database ``session`` works on (its URL, password hidden): the key of what a
    process keeps in memory per database (tests open many, each with a course 1)."""
    return str(session.connection().engine.url)


def new_session() -> Session:
    """A session on the configured database; it takes a connection at its first query."""
    return _session_factory(settings.database)()


def end_session(session: Session, *, commit: bool) -> None:
    """Commit (rolled back if the commit fails) or roll back, then close."""
    try:
        if commit:
            session.commit()
        else:
            session.rollback()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


MIGRATION_LOCK = 0x6A786A64  # any constant shared by every jaxjudge process ("jxjd")


class MigrationError(RuntimeError):
    """A migration left rows that break a foreign key: the upgrade is rolled back."""


def migrate() -> None:
    """Bring the database to the newest schema (run at every start).

    On SQLite, altering a table recreates it, and dropping the old copy with
    foreign keys on would delete (ON DELETE CASCADE) every row that refers to
    it: a submission's regrade history, a user's submissions. So foreign keys
    are off while migrations run (the pragma only works outside a transaction),
    and checked before the work commits."""
    config = Config()
    config.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    with engine().connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            connection.commit()  # end SQLAlchemy's autobegun (empty) transaction
        try:
            with connection.begin():
                if connection.dialect.name == "postgresql":
                    # Web servers and workers all migrate at start: one at a time, and
                    # the later ones find the schema at head (released at commit).
                    connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
                if sqlite:
                    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise MigrationError(f"foreign keys broken by the migration: {broken[:5]}")
        finally:
            if sqlite:
                connection.exec_driver_sql("PRAGMA foreign_keys=ON")
                connection.commit()
