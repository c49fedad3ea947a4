"""Notifications by email (app/data/notifications.py, app/reports/deadline_digest.py):
a staff comment, a regrade that changed a verdict, an extension, the daily digest of
due assignments; each only to a verified address with its switch on, each with an
unsubscribe link that works without signing in. One goes through a real SMTP server
and its links are followed; the rest read the outbox rows."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from app.core.config import settings
from app.core.db import session_scope
from app.data import accounts, assignments, catalog, comments, courses, extensions, regrades
from app.models import (
    Assignment,
    Course,
    CourseMember,
    MailMessage,
    Regrade,
    RegradeItem,
    Submission,
    User,
    utcnow,
)
from app.reports import deadline_digest
from app.vocabulary import IdSource, MailKind, RegradeStatus
from tests.app.conftest import BANK_SLUG, in_process_client, sign_in
from tests.smtp_server import smtp_server

PASSWORD = "long test password"
BASE = "https://judge.example.edu"


@pytest.fixture
def world(sqlite_database: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """teacher's course assigning BANK_SLUG (due in 12 h) to ada (verified email), bob
    (SSO email) and eve (an unverified email), ada and bob in the group "A"."""
    monkeypatch.setattr(settings, "public_url", BASE + "/")
    with session_scope() as session:
        teacher = accounts.create_user(
            session=session, name="teacher", password=PASSWORD, role="instructor"
        )
        course = courses.create_course(session=session, name="JAX 101", instructor=teacher)
        assignments.assign(
            session=session, course=course, problem=BANK_SLUG, due_at=utcnow() + timedelta(hours=12)
        )
        ids = {"teacher": teacher.id, "course": course.id}
        for name, source in (
            ("ada", IdSource.VERIFIED),
            ("bob", IdSource.SSO),
            ("eve", IdSource.SELF_DECLARED),
        ):
            learner = accounts.create_user(session=session, name=name, password=PASSWORD)
            learner.email, learner.email_source = f"{name}@example.edu", source
            courses.join_course(
                session=session, code=course.join_code, user=learner, address="test"
            )
            ids[name] = learner.id
        session.flush()
        for name in ("ada", "bob"):
            session.execute(
                update(CourseMember)
                .where(CourseMember.course_id == course.id, CourseMember.user_id == ids[name])
                .values(group_name="A")
            )
    return ids


def outbox(kind: MailKind | None = None) -> list[MailMessage]:
    with session_scope() as session:
        query = select(MailMessage).order_by(MailMessage.id)
        if kind is not None:
            query = query.where(MailMessage.kind == kind)
        found = list(session.scalars(query))
        session.expunge_all()
        return found


def submit(user_id: int, verdict: str = "wrong_answer") -> int:
    with session_scope() as session:
        row = Submission(user_id=user_id, problem=BANK_SLUG, code="# x\n", mode="submit",
                         status="done", verdict=verdict, score=0.0, hidden_draw=1)  # fmt: skip
        session.add(row)
        session.flush()
        return row.id


def comment(world: dict[str, int], on: int, by: str = "teacher") -> None:
    with session_scope() as session:
        course = session.get_one(Course, world["course"])
        submission = session.get_one(Submission, on)
        author = session.get_one(User, world[by])
        comments.add(
            session=session, course=course, submission=submission, author=author, body="Nice <b>"
        )


def switch(user_id: int, **values: object) -> None:
    with session_scope() as session:
        user = session.get_one(User, user_id)
        for column, value in values.items():
            setattr(user, column, value)


def test_a_staff_comment_mails_the_learner_a_link_to_the_submission(world: dict[str, int]) -> None:
    submission = submit(world["ada"])
    comment(world, submission)
    [mail] = outbox()
    assert (mail.kind, mail.to_address, mail.user_id) == (
        MailKind.COMMENT,
        "ada@example.edu",
        world["ada"],
    )
    assert mail.subject == f"teacher commented on your submission #{submission} ({BANK_SLUG})"
    link = f"{BASE}/problems/{BANK_SLUG}#submission-{submission}"
    assert link in mail.text_body and f'href="{link}"' in mail.html_body
    assert "Nice <b>" in mail.text_body and "Nice &lt;b&gt;" in mail.html_body
    assert re.search(rf"{BASE}/notifications/unsubscribe/\S+", mail.text_body)
    assert "/notifications/unsubscribe/" in mail.html_body


def test_no_comment_mail_for_ones_own_comment_an_unverified_address_or_a_switch_off(
    world: dict[str, int],
) -> None:
    with session_scope() as session:  # a learner who is also staff elsewhere: own comment
        comments.add(
            session=session,
            course=session.get_one(Course, world["course"]),
            submission=session.get_one(Submission, submit(world["ada"])),
            author=session.get_one(User, world["ada"]),
            body="note to self",
        )
    comment(world, submit(world["eve"]))  # self-declared, unverified address
    switch(world["bob"], notify_comment=False)
    comment(world, submit(world["bob"]))
    assert outbox() == []
    switch(world["ada"], email_source=IdSource.NONE)  # an address never verified
    comment(world, submit(world["ada"]))
    assert outbox() == []


def test_an_extension_mails_each_learner_it_covers_once(world: dict[str, int]) -> None:
    due = utcnow().replace(microsecond=0) + timedelta(days=3)
    switch(world["bob"], notify_extension=False)
    with session_scope() as session:
        course = session.get_one(Course, world["course"])
        extensions.grant_all(
            session=session,
            course=course,
            grants=[
                extensions.Grant(BANK_SLUG, due, group="A"),
                extensions.Grant(BANK_SLUG, due, user="eve"),
            ],
            by=session.get_one(User, world["teacher"]),
        )
    [mail] = outbox(MailKind.EXTENSION)  # ada by her group; bob switched off; eve unverified
    assert mail.to_address == "ada@example.edu"
    assert mail.subject == "Extension granted in JAX 101"
    assert f"{BANK_SLUG}: now due {due:%Y-%m-%d %H:%M} UTC (for your group A)" in mail.text_body
    assert f"{BASE}/courses/{world['course']}" in mail.text_body


def ready_regrade(world: dict[str, int], items: dict[int, tuple[str, float]]) -> int:
    """A finished regrade of the course's submissions ``items`` (id: new verdict, score)."""
    with session_scope() as session:
        course = session.get_one(Course, world["course"])
        live = catalog.live_version(session=session, slug=BANK_SLUG)
        assert live is not None
        regrade = Regrade(course_id=course.id, problem=BANK_SLUG, version_id=live.id,
                          created_by=world["teacher"], status=RegradeStatus.READY)  # fmt: skip
        session.add(regrade)
        session.flush()
        for submission_id, (verdict, score) in items.items():
            session.add(RegradeItem(regrade_id=regrade.id, submission_id=submission_id,
                                    old_verdict="wrong_answer", old_score=0.0, status="done",
                                    new_verdict=verdict, new_score=score))  # fmt: skip
        return regrade.id


def test_an_applied_regrade_mails_only_learners_whose_result_changed(
    world: dict[str, int],
) -> None:
    first, second, unchanged = submit(world["ada"]), submit(world["ada"]), submit(world["bob"])
    regrade_id = ready_regrade(
        world,
        {first: ("accepted", 1.0), second: ("wrong_answer", 0.5), unchanged: ("wrong_answer", 0.0)},
    )
    with session_scope() as session:
        regrades.apply(session=session, regrade=session.get_one(Regrade, regrade_id))
    [mail] = outbox(MailKind.REGRADE)
    assert mail.to_address == "ada@example.edu"
    assert mail.subject == f"A regrade changed your result on {BANK_SLUG} (JAX 101)"
    assert f"submission #{first}: wrong_answer (0) -> accepted (1)" in mail.text_body
    assert f"submission #{second}: wrong_answer (0) -> wrong_answer (0.5)" in mail.text_body


def test_the_digest_lists_unsolved_assignments_due_within_a_day_once_a_day(
    world: dict[str, int],
) -> None:
    now = utcnow()
    with session_scope() as session:
        course = session.get_one(Course, world["course"])
        # Due in 30 h: not yet; closed an hour ago: not any more.
        for slug, due in (
            ("later-one", now + timedelta(hours=30)),
            ("closed-one", now - timedelta(hours=1)),
        ):
            session.add(Assignment(course_id=course.id, problem=slug, due_at=due,
                                               opens_at=now - timedelta(days=2)))  # fmt: skip
    submit(world["bob"], verdict="accepted")  # bob solved the one due soon
    with session_scope() as session:
        assert deadline_digest.send_due(session=session, now=now) == 1
    [mail] = outbox(MailKind.DEADLINE_DIGEST)
    assert mail.to_address == "ada@example.edu"
    assert mail.subject == "Due within 24 hours: 1 assignment you have not solved"
    assert f"- {BANK_SLUG} (JAX 101): due" in mail.text_body
    assert "later-one" not in mail.text_body and "closed-one" not in mail.text_body
    assert f"{BASE}/problems/{BANK_SLUG}" in mail.text_body
    with session_scope() as session:  # an hour later: ada had hers today; bob has nothing due
        assert deadline_digest.send_due(session=session, now=now + timedelta(hours=1)) == 0
        assert session.get_one(User, world["bob"]).deadline_digest_at is None
    with session_scope() as session:  # a day later, a new digest (the due date still ahead)
        later = now + timedelta(hours=24, minutes=1)
        assignments_due = session.get_one(Course, world["course"])
        assert assignments_due is not None
        for row in assignments.assignments_of(session=session, course=assignments_due):
            if row.problem == BANK_SLUG:
                row.due_at = now + timedelta(hours=36)
        # ada: both due within the day now; bob: later-one, which he has not solved
        assert deadline_digest.send_due(session=session, now=later) == 2
    switch(world["ada"], notify_deadline=False, deadline_digest_at=None)
    with session_scope() as session:
        assert deadline_digest.send_due(session=session, now=now) == 0


def test_the_digest_command_runs_one_round(world: dict[str, int]) -> None:
    from app.commands.cli import main

    assert main(["notify", "digest"]) == 0
    assert [m.to_address for m in outbox(MailKind.DEADLINE_DIGEST)] == [
        "ada@example.edu",
        "bob@example.edu",
    ]
    assert main(["notify", "digest"]) == 0
    assert len(outbox(MailKind.DEADLINE_DIGEST)) == 2


@pytest.fixture
def browser(world: dict[str, int]) -> Iterator[TestClient]:
    with in_process_client() as client:
        yield client


def unsubscribe_link(mail_text: str) -> str:
    found = re.search(rf"{BASE}(/notifications/unsubscribe/\S+)", mail_text)
    assert found
    return found.group(1)


def test_the_unsubscribe_link_works_without_signing_in_and_a_forged_one_is_refused(
    world: dict[str, int], browser: TestClient
) -> None:
    comment(world, submit(world["ada"]))
    path = unsubscribe_link(outbox()[0].text_body)
    shown = browser.get(path)
    assert shown.status_code == 200
    assert "Stop mails to ada about a staff comment on one of your submissions?" in shown.text
    for forged in (
        path[:-2] + ("AA" if not path.endswith("AA") else "BB"),
        "/notifications/unsubscribe/x.y",
    ):
        refused = browser.get(forged)
        assert refused.status_code == 400
        assert "This unsubscribe link is not valid" in refused.text
        assert browser.post(forged).status_code == 400
    with session_scope() as session:
        assert session.get_one(User, world["ada"]).notify_comment is True
    done = browser.post(path)
    assert done.status_code == 200
    assert "ada gets no more mails about a staff comment" in done.text
    with session_scope() as session:
        ada = session.get_one(User, world["ada"])
        assert (ada.notify_comment, ada.notify_regrade, ada.notify_deadline) == (False, True, True)
    comment(world, submit(world["ada"]))
    assert len(outbox()) == 1


def test_the_account_page_turns_switches_on_and_off(
    world: dict[str, int], browser: TestClient
) -> None:
    csrf = sign_in(browser, "ada")
    page = browser.get("/account")
    assert 'name="on" value="comment" checked' in page.text
    answer = browser.post(
        "/account/notifications", data={"on": ["regrade", "deadline"], "csrf_token": csrf}
    )
    assert answer.status_code == 200
    with session_scope() as session:
        ada = session.get_one(User, world["ada"])
        switches = (
            ada.notify_comment,
            ada.notify_regrade,
            ada.notify_extension,
            ada.notify_deadline,
        )
    assert switches == (False, True, False, True)
    bad = browser.post("/account/notifications", data={"on": ["spam"], "csrf_token": csrf})
    assert bad.status_code == 400
    assert "There is no notification called &#39;spam&#39;." in bad.text
    assert browser.post("/account/notifications", data={"on": ["comment"]}).status_code == 403
    with session_scope() as session:
        assert session.get_one(User, world["ada"]).notify_regrade is True


def test_a_comment_mail_arrives_over_smtp_and_its_links_work(
    world: dict[str, int], browser: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    delivery = pytest.importorskip("app.mail.delivery")  # the mail helper's sender (issue 39)
    submission = submit(world["ada"])
    comment(world, submission)
    with smtp_server() as server:
        monkeypatch.setattr(settings, "smtp_url", server.url)
        delivery.deliver_due()
        [mail] = server.inbox.wait_for(1)
    assert mail.subject.startswith("teacher commented on your submission")
    links = mail.links()
    assert f"{BASE}/problems/{BANK_SLUG}#submission-{submission}" in links
    unsubscribe = next(link for link in links if "/notifications/unsubscribe/" in link)
    assert browser.post(unsubscribe.removeprefix(BASE)).status_code == 200
    sign_in(browser, "ada")
    assert "Nice" in browser.get(f"/problems/{BANK_SLUG}").text
