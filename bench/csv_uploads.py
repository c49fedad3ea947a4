"""An instructor's extensions CSV at the documented limit (5,000 rows) and a student-id
CSV of as many, uploaded through a real server (SQLite, default settings) while
another learner keeps writing (a submission after another), measured (not a test):
how long each upload takes, the longest the database's write lock stayed out of
reach meanwhile (a probe asking for it every 20 ms), and how the learner's writes
fared (how many, how many answered 503, the slowest). Each upload runs twice: the
first grants, the second replaces every row it granted.

``--lms``: the same extensions in a course linked to an LMS whose learners all have
a graded submit, so each recomputed grade is set to be sent again; measured in this
process (a server would also send them), from the hold on the course to the commit.

    .venv/bin/python -m bench.csv_uploads [--rows 500 5000] [--lms]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from sqlalchemy import Connection, create_engine, event, insert, select

from app.core import names
from app.models import Assignment, CourseMember, User
from bench.api_load import _wait_for_trusted_runs
from tests.app.server import Server, jaxjudge, server_env

SLUG = "scan-microbatched-grads"
PROBE_SECONDS = 0.02


def _call(
    url: str, token: str, method: str, body: bytes, kind: str = "application/json"
) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url,
        data=body,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": kind},
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read()


@dataclass
class LockProbe:
    """Asks for the write lock (BEGIN IMMEDIATE, given back at once) every 20 ms; the
    longest it waited is how long some transaction held the lock."""

    path: str
    longest: float = 0.0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        probe = sqlite3.connect(self.path, timeout=600, isolation_level=None)
        while not self.stop.is_set():
            started = time.monotonic()
            probe.execute("BEGIN IMMEDIATE")
            self.longest = max(self.longest, time.monotonic() - started)
            probe.execute("ROLLBACK")
            self.stop.wait(PROBE_SECONDS)
        probe.close()


@dataclass
class OtherLearner:
    """Stores a submission (a write), then another, until stopped: each answer's status
    and time."""

    url: str
    token: str
    answers: list[tuple[int, float]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        body = json.dumps({"problem": SLUG, "code": "x = 1", "mode": "run"}).encode()
        while not self.stop.is_set():
            started = time.monotonic()
            code, _ = _call(f"{self.url}/api/submissions", self.token, "POST", body)
            self.answers.append((code, time.monotonic() - started))
            self.stop.wait(0.2)

    def summary(self) -> str:
        slowest = max((seconds for _code, seconds in self.answers), default=0.0)
        refused = sum(code == 503 for code, _seconds in self.answers)
        others = sorted({code for code, _ in self.answers} - {202, 503})
        return f"{len(self.answers)} writes, {refused} answered 503, slowest {slowest:.2f} s" + (
            f" (also {others})" if others else ""
        )


def _course_of(server: Server, teacher: str, learners: int, database: str) -> int:
    """A course with ``learners`` learners (rows made directly: accounts by the
    thousand through the API would cost their password hashes) and an assignment."""
    code, body = _call(
        f"{server.url}/api/courses", teacher, "POST", json.dumps({"name": "Bench"}).encode()
    )
    assert code == 201, body
    course_id = int(json.loads(body)["id"])
    code, body = _call(
        f"{server.url}/api/courses/{course_id}/assignments",
        teacher,
        "PUT",
        json.dumps({"problem": SLUG, "due_at": "2031-01-01T00:00:00"}).encode(),
    )
    assert code == 200, body
    engine = create_engine(f"sqlite:///{database}")
    with engine.begin() as connection:
        _add_learners(connection, course_id, learners)
    engine.dispose()
    return course_id


def _add_learners(connection: Connection, course_id: int, learners: int) -> list[int]:
    password_hash = connection.scalar(select(User.password_hash).limit(1)) or "x"
    connection.execute(
        insert(User),
        [
            {
                "name": f"learner-{n:05}",
                "canonical_name": names.canonical(f"learner-{n:05}"),
                "password_hash": password_hash,
            }
            for n in range(learners)
        ],
    )
    ids = list(connection.scalars(select(User.id).where(User.name.like("learner-%"))))
    connection.execute(
        insert(CourseMember),
        [{"course_id": course_id, "user_id": i, "role": "learner"} for i in ids],
    )
    return ids


def _extensions_csv(rows: int, due: str) -> str:
    return "user,problem,due_at\n" + "".join(f"learner-{n:05},{SLUG},{due}\n" for n in range(rows))


def _upload(server: Server, teacher: str, path: str, text: str, database: str, learner: str) -> str:
    probe = LockProbe(database)
    other = OtherLearner(server.url, learner)
    threads = [threading.Thread(target=t.run, daemon=True) for t in (probe, other)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    started = time.monotonic()
    code, body = _call(f"{server.url}{path}", teacher, "POST", text.encode(), "text/csv")
    took = time.monotonic() - started
    time.sleep(1.0)
    probe.stop.set()
    other.stop.set()
    for thread in threads:
        thread.join()
    assert code in (200, 201), body[:300]
    return (
        f"{took:.2f} s (answered {code}); write lock out of reach at most"
        f" {probe.longest:.2f} s; the other learner: {other.summary()}"
    )


def measure(rows: int) -> list[str]:
    folder = Path(tempfile.mkdtemp(prefix="jaxjudge-csv-"))
    env = {**server_env(folder), "JAXJUDGE_MAX_QUEUED_PER_USER": "100000"}
    database = str(folder / "server.db")
    password = "long bench password\n"
    jaxjudge(env, "users", "create", "teacher", "--role", "instructor", "--password-stdin",
             stdin=password)  # fmt: skip
    jaxjudge(env, "users", "create", "grace", "--password-stdin", stdin=password)
    teacher = jaxjudge(env, "tokens", "create", "teacher").stdout.strip()
    learner = jaxjudge(env, "tokens", "create", "grace").stdout.strip()
    server = Server(env, 0)
    try:
        _wait_for_trusted_runs(server.url)
        course_id = _course_of(server, teacher, rows, database)
        extensions = _extensions_csv(rows, "2031-02-01T00:00")
        student_ids = "user,student_id\n" + "".join(
            f"learner-{n:05},S{n:07}\n" for n in range(rows)
        )
        lines = []
        for what, path, text in (
            ("extensions", f"/api/courses/{course_id}/extensions.csv", extensions),
            ("student ids", f"/api/courses/{course_id}/student-ids", student_ids),
        ):
            for attempt in ("first", "again"):
                line = f"{rows} rows of {what}, {attempt}: " + _upload(
                    server, teacher, path, text, database, learner
                )
                print(line, flush=True)
                lines.append(line)
        return lines
    finally:
        server.stop()


def measure_linked(rows: int) -> list[str]:
    """The extensions upload's transaction in a course linked to an LMS, in-process on
    a fresh SQLite database: the whole of it, and from the hold on the course on."""
    from app.core.config import settings
    from app.core.db import engine, migrate, session_scope
    from app.data import catalog, courses, extensions
    from app.models import Course, LtiContext, LtiPlatform, LtiResourceLink, Submission
    from app.reports import gradebook

    folder = Path(tempfile.mkdtemp(prefix="jaxjudge-csv-lms-"))
    settings.database_url = f"sqlite:///{folder / 'bench.db'}"
    migrate()
    with session_scope() as session:
        catalog.sync(session=session)
        teacher = User(name="teacher", canonical_name="teacher", password_hash="x",
                       role="instructor")  # fmt: skip
        session.add(teacher)
        session.flush()
        course = courses.create_course(session=session, name="Linked", instructor=teacher)
        session.add(Assignment(course_id=course.id, problem=SLUG, due_at=datetime(2031, 1, 1)))
        platform = LtiPlatform(issuer="https://lms.example", client_id="c", auth_login_url="a",
                               token_url="t", jwks_url="j")  # fmt: skip
        session.add(platform)
        session.flush()
        context = LtiContext(platform_id=platform.id, context_id="ctx", course_id=course.id,
                             deployment_id="d")  # fmt: skip
        session.add(context)
        session.flush()
        session.add(LtiResourceLink(context_id=context.id, resource_link_id="l", problem=SLUG))
        learners = _add_learners(session.connection(), course.id, rows)
        session.execute(insert(Submission), [
            {"user_id": u, "problem": SLUG, "code": "x", "mode": "submit", "status": "done",
             "verdict": "accepted", "score": 1.0, "created_at": datetime(2030, 12, 1)}
            for u in learners
        ])  # fmt: skip
        course_id, teacher_id = course.id, teacher.id
    held: list[float] = []

    def note(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        if statement.startswith("UPDATE courses SET id="):
            held.append(time.monotonic())

    event.listen(engine(), "before_cursor_execute", note)
    lines = []
    for attempt, due in (("first", "2031-02-01T00:00"), ("again", "2031-03-01T00:00")):
        started = time.monotonic()
        with session_scope() as session:
            course = session.get_one(Course, course_id)
            made = extensions.from_csv(session=session, course=course,
                                       text=_extensions_csv(rows, due),
                                       by=session.get_one(User, teacher_id))  # fmt: skip
            gradebook.extensions_changed(session=session, course=course, changed=made)
        done = time.monotonic()
        line = (
            f"{rows} rows of extensions in a course linked to an LMS, {attempt}:"
            f" {done - started:.2f} s in all, the course held (the write lock) for"
            f" {done - held[-1]:.2f} s of them"
        )
        print(line, flush=True)
        lines.append(line)
    event.remove(engine(), "before_cursor_execute", note)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--lms", action="store_true", help="in-process, a course linked to an LMS")
    args = parser.parse_args()
    for rows in args.rows:
        if args.lms:
            measure_linked(rows)
        else:
            measure(rows)


if __name__ == "__main__":
    main()
