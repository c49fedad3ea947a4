"""Bulk extensions and student ids (app/data/extensions.py, app/data/members.py) hold
the database briefly whatever their size: a 5,000-row CSV is read and checked in a
few queries before anything is locked, then written in a few statements; another
learner's write meanwhile goes through; a learner removed between the check and the
write is refused with nothing written. Counted in statements, never timed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import delete, event, func, insert, select

from app.core import names
from app.core.config import settings
from app.core.db import engine, session_scope
from app.data import accounts, courses, extensions, members
from app.data import submissions as submission_data
from app.errors import InvalidInputError
from app.models import (
    Assignment,
    Course,
    CourseMember,
    Extension,
    LtiContext,
    LtiPlatform,
    LtiResourceLink,
    LtiScore,
    Submission,
    User,
)
from app.reports import gradebook
from tests.app.conftest import BANK_SLUG

ROWS = 5_000


def big_course(learners: int) -> int:
    """A course with ``learners`` learners (rows made directly: no password hashes)
    and an assignment due 2031-01-01."""
    with session_scope() as session:
        teacher = accounts.create_user(
            session=session, name="teacher", password="long test password", role="instructor"
        )
        course = courses.create_course(session=session, name="Big", instructor=teacher)
        session.add(Assignment(course_id=course.id, problem=BANK_SLUG, due_at=datetime(2031, 1, 1)))
        session.execute(
            insert(User),
            [
                {
                    "name": f"learner-{n:05}",
                    "canonical_name": names.canonical(f"learner-{n:05}"),
                    "password_hash": "x",
                }
                for n in range(learners)
            ],
        )
        ids = session.scalars(select(User.id).where(User.name.like("learner-%"))).all()
        session.execute(
            insert(CourseMember),
            [{"course_id": course.id, "user_id": i, "role": "learner"} for i in ids],
        )
        return course.id


def extensions_csv(learners: int, due: str = "2031-02-01T00:00") -> str:
    return "user,problem,due_at\n" + "".join(
        f"learner-{n:05},{BANK_SLUG},{due}\n" for n in range(learners)
    )


@contextmanager
def statements() -> Iterator[list[str]]:
    """Every statement sent to the database meanwhile (an executemany counts once)."""
    seen: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(" ".join(statement.split()))

    event.listen(engine(), "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(engine(), "before_cursor_execute", note)


def upload(course_id: int, text: str) -> list[Extension]:
    """The API route's work: the grant, the grades it changes, one commit."""
    with session_scope() as session:
        course = session.get_one(Course, course_id)
        teacher = session.scalars(select(User).where(User.name == "teacher")).one()
        made = extensions.from_csv(session=session, course=course, text=text, by=teacher)
        gradebook.extensions_changed(session=session, course=course, changed=made)
        return made


def held(seen: list[str]) -> list[str]:
    """The statements from the course's hold (the write lock, on SQLite) on."""
    starts = [n for n, s in enumerate(seen) if s.startswith("UPDATE courses SET id=")]
    assert len(starts) == 1, seen[:20]
    return seen[starts[0] :]


def test_a_big_upload_is_a_few_statements_and_a_few_under_the_hold(database: str) -> None:
    course_id = big_course(ROWS)
    with statements() as small:
        assert len(upload(course_id, extensions_csv(50))) == 50
    with statements() as big:
        made = upload(course_id, extensions_csv(ROWS))
    assert len(made) == ROWS and {e.due_at for e in made} == {datetime(2031, 2, 1)}
    # The same statements for 5,000 rows as for 50 but the INSERT's pages of rows.
    assert len(big) <= len(small) + 10 and len(held(big)) <= 20, held(big)
    with statements() as again:  # granting again replaces: one DELETE per problem
        upload(course_id, extensions_csv(ROWS, "2031-03-01T00:00"))
    assert len(held(again)) <= 20
    with session_scope() as session:
        dates = session.execute(select(Extension.due_at, func.count()).group_by(Extension.due_at))
        assert dates.all() == [(datetime(2031, 3, 1), ROWS)]


def test_a_big_upload_in_a_course_linked_to_an_lms_arms_every_grade_in_a_few_statements(
    database: str,
) -> None:
    """Each learner's recomputed grade is set to be sent again (app/data/lti_scores.py):
    one UPDATE and one INSERT for the link, not a statement per learner."""
    course_id = big_course(ROWS)
    with session_scope() as session:
        platform = LtiPlatform(issuer="https://lms.example", client_id="c",
                               auth_login_url="https://lms.example/a",
                               token_url="https://lms.example/t", jwks_url="https://lms.example/k")  # fmt: skip
        session.add(platform)
        session.flush()
        context = LtiContext(platform_id=platform.id, context_id="ctx", course_id=course_id,
                             deployment_id="d")  # fmt: skip
        session.add(context)
        session.flush()
        link = LtiResourceLink(context_id=context.id, resource_link_id="l", problem=BANK_SLUG)
        session.add(link)
        session.flush()
        learners = session.scalars(select(User.id).where(User.name.like("learner-%"))).all()
        session.execute(insert(Submission), [
            {"user_id": u, "problem": BANK_SLUG, "code": "x", "mode": "submit", "status": "done",
             "verdict": "accepted", "score": 1.0, "created_at": datetime(2030, 12, 1)}
            for u in learners
        ])  # fmt: skip
        session.add(LtiScore(link_id=link.id, user_id=learners[0], status="sent"))
    with statements() as seen:
        upload(course_id, extensions_csv(ROWS))
    assert len(held(seen)) <= 30, held(seen)
    with session_scope() as session:
        statuses = session.execute(select(LtiScore.status, func.count()).group_by(LtiScore.status))
        assert statuses.all() == [("pending", ROWS)]


def test_student_ids_are_read_in_one_query_and_written_in_one_statement(database: str) -> None:
    course_id = big_course(ROWS)
    text = "user,student_id\n" + "".join(f"learner-{n:05},S{n}\n" for n in range(ROWS))
    with statements() as seen, session_scope() as session:
        course = session.get_one(Course, course_id)
        assert members.student_ids_from_csv(session=session, course=course, text=text) == ROWS
    assert len(seen) <= 10, seen
    with session_scope() as session:
        mapped = members.student_ids_of(session=session, course=session.get_one(Course, course_id))
        assert sorted(v for v in mapped.values() if v.startswith("S")) == sorted(
            f"S{n}" for n in range(ROWS)
        )


def when_first(*parts: str, action: Callable[[], None]) -> Callable[..., None]:
    """A listener that runs ``action`` (once) just before the first statement that
    begins with ``parts[0]`` and holds every other part."""
    done: list[bool] = []

    def listener(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        flat = " ".join(statement.split())
        if not done and flat.startswith(parts[0]) and all(p in flat for p in parts[1:]):
            done.append(True)
            action()

    return listener


def test_another_learners_write_goes_through_while_an_upload_is_checked(
    sqlite_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written while the upload reads its 5,000 learners: had the upload taken the write
    lock first, this write (same thread, so it cannot wait it out) would fail."""
    monkeypatch.setattr(settings, "database_wait_seconds", 0.2)
    course_id = big_course(ROWS)
    with session_scope() as session:
        grace = accounts.create_user(session=session, name="grace", password="long test password")

    def write_meanwhile() -> None:
        with session_scope() as session:
            submission_data.create_submission(
                session=session, user=grace, problem=BANK_SLUG, code="x", mode="run", max_queued=9
            )

    # The query that finds the rows' learners, whichever way it is written.
    listener = when_first("SELECT users.", "JOIN course_members", action=write_meanwhile)
    event.listen(engine(), "before_cursor_execute", listener)
    try:
        assert len(upload(course_id, extensions_csv(ROWS))) == ROWS
    finally:
        event.remove(engine(), "before_cursor_execute", listener)
    with session_scope() as session:
        assert submission_data.queued_count(session=session, user_id=grace.id) == 1


def test_a_learner_removed_between_the_check_and_the_write_is_refused(database: str) -> None:
    course_id = big_course(20)

    def remove_one() -> None:
        with session_scope() as session:
            gone = session.scalars(select(User.id).where(User.name == "learner-00007")).one()
            session.execute(delete(CourseMember).where(CourseMember.user_id == gone))

    listener = when_first("UPDATE courses SET id=", action=remove_one)
    event.listen(engine(), "before_cursor_execute", listener)
    try:
        with pytest.raises(InvalidInputError, match="row 9: 'learner-00007' is not a learner"):
            upload(course_id, extensions_csv(20))
    finally:
        event.remove(engine(), "before_cursor_execute", listener)
    with session_scope() as session:
        assert session.scalar(select(func.count()).select_from(Extension)) == 0


def test_a_learner_named_twice_gets_the_later_date(database: str) -> None:
    course_id = big_course(2)
    text = (
        "user,problem,due_at\n"
        f"learner-00000,{BANK_SLUG},2031-02-01T00:00\n"
        f"learner-00001,{BANK_SLUG},2031-02-01T00:00\n"
        f"learner-00000,{BANK_SLUG},2031-04-01T00:00\n"
    )
    upload(course_id, text)
    with session_scope() as session:
        rows = session.execute(
            select(User.name, Extension.due_at).join(User, User.id == Extension.user_id)
        )
        assert sorted(rows.all()) == [
            ("learner-00000", datetime(2031, 4, 1)),
            ("learner-00001", datetime(2031, 2, 1)),
        ]


def test_an_empty_list_grants_nothing(database: str) -> None:
    course_id = big_course(1)
    with session_scope() as session:
        course = session.get_one(Course, course_id)
        teacher = session.scalars(select(User).where(User.name == "teacher")).one()
        assert extensions.grant_all(session=session, course=course, grants=[], by=teacher) == []
    with session_scope() as session:
        assert session.scalar(select(func.count()).select_from(Extension)) == 0


def test_a_member_removed_while_student_ids_are_mapped_is_left_out(database: str) -> None:
    course_id = big_course(3)

    def remove_one() -> None:
        with session_scope() as session:
            gone = session.scalars(select(User.id).where(User.name == "learner-00001")).one()
            session.execute(delete(CourseMember).where(CourseMember.user_id == gone))

    listener = when_first("UPDATE course_members SET student_id", action=remove_one)
    text = "user,student_id\n" + "".join(f"learner-{n:05},S{n}\n" for n in range(3))
    event.listen(engine(), "before_cursor_execute", listener)
    try:
        with session_scope() as session:
            course = session.get_one(Course, course_id)
            members.student_ids_from_csv(session=session, course=course, text=text)
    finally:
        event.remove(engine(), "before_cursor_execute", listener)
    with session_scope() as session:
        mapped = session.scalars(
            select(CourseMember.student_id).where(CourseMember.role == "learner")
        )
        assert sorted(mapped) == ["S0", "S2"]
