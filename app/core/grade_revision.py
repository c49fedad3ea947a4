"""The grade book's revision: one number, moved on by every commit that wrote a table a
course's grades are computed from, in that commit's own transaction.

A grade book for 300 learners takes about half a second of Python to compute; an
instructor's dashboard, a script or an LMS export polling it must not pay that for
every read. A reader that finds the revision it cached the answer under serves the
copy (app/api/grade_book_answers.py); anything written since, by this process or
another one on the same database, has moved the revision on.

Written here, below every data function, because a grade book is only as fresh as the
least careful writer: each engine watches the statements it runs (ORM flushes, bulk
statements and plain SQL alike) and, when a transaction that wrote one of
``GRADE_BOOK_TABLES`` commits, adds one to the revision just before the commit, so
the row is locked for the commit alone (not from the first write on, as a trigger
would hold it on PostgreSQL). A cascade from a deleted course or user starts with a
DELETE on a table listed here. tests/app/test_grade_revision.py checks that the
grade book reads no table outside the list."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import Connection, Engine, event, text
from sqlalchemy.orm import Session

TABLE = "grade_book_revision"
GRADE_BOOK_TABLES = frozenset(
    {
        "users",
        "courses",
        "course_members",
        "course_enrolments",
        "assignments",
        "extensions",
        "score_overrides",
        "submissions",
        "course_verdicts",
        "rubric_items",
        "rubric_applications",
        "manual_gradings",
        "rubric_events",
    }
)

_WRITES = re.compile(r'\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(\w+)', re.I)
_WROTE = "jaxjudge.grade_tables_written"  # in the DBAPI connection's info
_HAS_TABLE = "jaxjudge.grade_revision_table"


def watch(engine: Engine) -> None:
    """Keep the revision on every connection of ``engine`` (app/core/db.py calls it)."""
    event.listen(engine, "before_cursor_execute", _note_write)
    event.listen(engine, "commit", _move_on)
    event.listen(engine, "rollback", _forget)


_CURRENT = text(f"SELECT revision FROM {TABLE}")  # built once: every grades read asks it


def current(session: Session) -> int:
    """The revision as this session's transaction sees it."""
    return int(session.execute(_CURRENT).scalar_one())


def writes_grade_tables(statement: str) -> bool:
    if statement.lstrip()[:6].upper() == "SELECT":
        return False
    return any(table.lower() in GRADE_BOOK_TABLES for table in _WRITES.findall(statement))


def _note_write(conn: Connection, _cursor: Any, statement: str, *_args: Any) -> None:
    if writes_grade_tables(statement):
        conn.info[_WROTE] = True


def _forget(conn: Connection) -> None:
    conn.info.pop(_WROTE, None)


def _move_on(conn: Connection) -> None:
    """Just before the commit: on the DBAPI connection itself, inside the transaction
    being committed (a statement through ``conn`` would come back to these events)."""
    if not conn.info.pop(_WROTE, False):
        return
    raw = conn.connection.dbapi_connection
    assert raw is not None
    cursor = raw.cursor()
    try:
        if not conn.info.get(_HAS_TABLE):
            # Before migration 0020 (a migration's own writes, an old database's test)
            # there is no revision to keep; once seen, the table stays.
            cursor.execute(_HAS_TABLE_SQL[conn.dialect.name])
            found = cursor.fetchone()
            if found is None or not found[0]:
                return
            conn.info[_HAS_TABLE] = True
        cursor.execute(f"UPDATE {TABLE} SET revision = revision + 1")
    finally:
        cursor.close()


_HAS_TABLE_SQL = {
    "sqlite": f"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '{TABLE}'",
    "postgresql": f"SELECT to_regclass('{TABLE}') IS NOT NULL",
}
