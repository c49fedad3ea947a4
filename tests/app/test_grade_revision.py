"""The grade book's revision (app/core/grade_revision.py): every commit that wrote a table
grades are computed from moves it on by one, whatever wrote it (an ORM flush, a bulk
statement, plain SQL); reads, rollbacks and other tables leave it; and the grade book
reads no table outside the list, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from sqlalchemy import event, text, update
from sqlalchemy.orm import Session

from app.api.routes.courses import _grade_matrix
from app.core import grade_revision
from app.core.db import end_session, engine, new_session, session_scope
from app.data import extensions, overrides, rubrics
from app.models import ServiceCheck, Submission
from app.vocabulary import RubricMode
from tests.app.conftest import BANK_SLUG
from tests.app.test_gradebook import DUE, late_course


def revision() -> int:
    with session_scope() as session:
        return grade_revision.current(session)


@pytest.mark.parametrize(
    ("statement", "writes"),
    [
        ("INSERT INTO submissions (user_id) VALUES (?)", True),
        ('UPDATE "users" SET name=%(name)s WHERE users.id = %(id)s', True),
        ("DELETE FROM courses WHERE courses.id = ?", True),
        ("INSERT OR REPLACE INTO score_overrides (id) VALUES (1)", True),
        (
            "INSERT INTO service_checks (name) VALUES (?) ON CONFLICT (name) DO UPDATE SET x=1",
            False,
        ),
        ("SELECT submissions.id FROM submissions FOR UPDATE", False),
        ("UPDATE workers SET updated_at=? WHERE workers.name = ?", False),
        ("  select * from submissions", False),
    ],
)
def test_the_statements_that_write_what_grades_are_computed_from(
    statement: str, writes: bool
) -> None:
    assert grade_revision.writes_grade_tables(statement) is writes


def test_each_commit_that_writes_a_grade_table_moves_the_revision_on_once(database: str) -> None:
    with session_scope() as session:
        _course, _assignment, _teacher, ada, submission = late_course(session)
        ids = (ada.id, submission.id)
    after_seeding = revision()
    assert after_seeding >= 1

    with session_scope() as session:  # an ORM change
        found = session.get(Submission, ids[1])
        assert found is not None
        found.score = 0.9
    assert revision() == after_seeding + 1

    with session_scope() as session:  # a bulk statement, then plain SQL, in one commit
        session.execute(update(Submission).where(Submission.id == ids[1]).values(score=0.8))
        session.execute(text("UPDATE users SET name = 'ada2' WHERE id = :id"), {"id": ids[0]})
    assert revision() == after_seeding + 2

    with session_scope() as session:  # reads, and another table's write
        session.get(Submission, ids[1])
        session.add(ServiceCheck(name="grade-revision-test"))
    assert revision() == after_seeding + 2

    session = new_session()  # rolled back
    session.execute(update(Submission).values(score=0.1))
    end_session(session, commit=False)
    assert revision() == after_seeding + 2
    with session_scope() as session:
        assert session.get(Submission, ids[1]).score == 0.8  # type: ignore[union-attr]


_READS = re.compile(r'\b(?:FROM|JOIN)\s+"?(\w+)', re.I)


def _tables_read(session: Session, read: object) -> set[str]:
    seen: set[str] = set()

    def note(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        seen.update(name.lower() for name in _READS.findall(statement))

    event.listen(engine(), "before_cursor_execute", note)
    try:
        assert callable(read)
        read()
    finally:
        event.remove(engine(), "before_cursor_execute", note)
    return seen


def test_the_grade_book_reads_no_table_outside_the_list(database: str) -> None:
    """Every branch of the grade book taken (a rubric graded by hand, an extension, an
    override, a late submit): a table it reads that the list lacks would let a write to it
    leave a stale copy served."""
    with session_scope() as session:
        course, assignment, teacher, ada, submission = late_course(session)
        assignment.rubric_mode = RubricMode.REPLACING
        item = rubrics.add_item(session=session, course=course, assignment=assignment,
                                points=9, description="a clean scan", by=teacher)  # fmt: skip
        rubrics.mark_graded(session=session, course=course, submission=submission, by=teacher)
        rubrics.apply(session=session, course=course, submission=submission, item_id=item.id, by=teacher)  # fmt: skip
        extensions.from_csv(session=session, course=course, by=teacher,
                            text=f"user,problem,due_at\nada,{BANK_SLUG},{(DUE + timedelta(days=2)).isoformat()}\n")  # fmt: skip
        overrides.record(session=session, course=course, problem=BANK_SLUG, learner_id=ada.id,
                         score=0.7, old_score=0.45, reason="oral exam", by=teacher)  # fmt: skip
        session.add(Submission(user_id=ada.id, problem=BANK_SLUG, code="y\n", mode="submit",
                               status="done", verdict="accepted", score=1.0,
                               created_at=datetime(2030, 1, 20)))  # fmt: skip
        session.flush()
        matrix = _grade_matrix(session, course)
        assert matrix.learners[0].cells[0].attempts == 2
        read = _tables_read(session, lambda: _grade_matrix(session, course))
    assert read, "no statement seen"
    assert read <= grade_revision.GRADE_BOOK_TABLES, read - grade_revision.GRADE_BOOK_TABLES
