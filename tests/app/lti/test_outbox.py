"""Grade passback (AGS) through the outbox, against the platform server: a graded submit
sends the learner's final score to the link's line item with a client-credentials
token; a late policy or an override changed afterwards sends it again; an LMS that is down gets the grade later, exactly once; a refusal for good is
shown as failed with the platform's answer and sent again on ``resend``."""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.core.db import engine, session_scope
from app.data import assignments, submissions
from app.data.assignments import AssignmentSettings
from app.grading import queue
from app.grading.runs import FunctionGrader
from app.grading.worker import EmbeddedWorkers
from app.lti import outbox
from app.models import Course, LtiAccount, LtiResourceLink, LtiScore, Submission, User, utcnow
from app.reports import gradebook, hand_grading
from app.vocabulary import LatePolicy
from grader.child.verdicts import Mode, Verdict
from grader.judging.report import GradeReport
from grader.problems.problem import Problem
from tests.app.conftest import in_process_client
from tests.app.lti.conftest import ADA, GRACE, SLUG, launch
from tests.lti_platform import CLIENT_ID, Platform

LINEITEM = "/contexts/course-101/lineitems/7"


def graded_submit(sub: str, score: float, verdict: str = "wrong_answer") -> int:
    """A submit by the LMS user ``sub``, graded by a worker as the queue records it."""
    with session_scope() as session:
        account = session.scalar(select(LtiAccount).where(LtiAccount.sub == sub))
        assert account is not None
        user = session.get(User, account.user_id)
        assert user is not None
        submission = submissions.create_submission(
            session=session, user=user, problem=SLUG, code="x = 1", mode="submit", max_queued=5
        )
        submission_id = submission.id
    with session_scope() as session:
        claimed = queue.claim(session, worker="test-worker", lease_seconds=30)
        assert claimed is not None and claimed.id == submission_id
        assert queue.complete(
            session,
            submission_id=submission_id,
            worker="test-worker",
            verdict=verdict,
            score=score,
            result_json="{}",
        )
    return submission_id


def course_with_learner(client: TestClient, platform: Platform) -> None:
    lineitem = platform.url + LINEITEM
    launch(client, platform, ADA, custom={"problem": SLUG}, lineitem=lineitem)
    with in_process_client() as learner:
        launch(learner, platform, GRACE, lineitem=lineitem)


def rows() -> list[LtiScore]:
    with session_scope() as session:
        found = list(session.scalars(select(LtiScore)))
        session.expunge_all()
        return found


def test_a_graded_submit_sends_the_best_score_to_the_line_item(
    client: TestClient, platform: Platform
) -> None:
    course_with_learner(client, platform)
    graded_submit(GRACE.sub, 0.5)
    assert outbox.deliver_due() == 1
    graded_submit(GRACE.sub, 0.25)  # worse: the grade book keeps the best
    graded_submit(GRACE.sub, 1.0, "accepted")
    assert outbox.deliver_due() == 1  # one row per learner and link, whatever happened
    sent = platform.scores_for(GRACE.sub)
    assert [s["body"]["scoreGiven"] for s in sent] == [50.0, 100.0]
    last = sent[-1]
    assert last["lineitem"] == platform.url + LINEITEM
    assert last["content_type"] == "application/vnd.ims.lis.v1.score+json"
    assert last["body"]["scoreMaximum"] == 100.0
    assert last["body"]["activityProgress"] == "Completed"
    assert last["body"]["gradingProgress"] == "FullyGraded"
    assert last["body"]["timestamp"].endswith("+00:00")
    # The token came by the client-credentials grant with a signed assertion, once
    # (it is cached); the other grant is the roster's, at the instructor's launch.
    grants = [g for g in platform.recorded.token_requests if g["scope"].endswith("/score")]
    assert len(grants) == 1 and grants[0]["grant_type"] == "client_credentials"
    assert grants[0]["client_assertion_type"].endswith("jwt-bearer")
    assert [r.status for r in rows()] == ["sent"]


def test_runs_of_the_samples_send_nothing(client: TestClient, platform: Platform) -> None:
    course_with_learner(client, platform)
    with session_scope() as session:
        account = session.scalar(select(LtiAccount).where(LtiAccount.sub == GRACE.sub))
        assert account is not None
        user = session.get(User, account.user_id)
        assert user is not None
        submissions.create_submission(
            session=session, user=user, problem=SLUG, code="x", mode="run", max_queued=5
        )
    with session_scope() as session:
        claimed = queue.claim(session, worker="w", lease_seconds=30)
        assert claimed is not None
        queue.complete(
            session,
            submission_id=claimed.id,
            worker="w",
            verdict="accepted",
            score=1.0,
            result_json="{}",
        )
    assert rows() == [] and outbox.deliver_due() == 0


def test_an_lms_that_is_down_gets_the_grade_later_exactly_once(
    client: TestClient, platform: Platform
) -> None:
    course_with_learner(client, platform)
    platform.down = True
    graded_submit(GRACE.sub, 1.0, "accepted")
    assert outbox.deliver_due() == 0
    (row,) = rows()
    assert row.status == "pending" and row.attempts == 1 and "503" in (row.last_error or "")
    assert outbox.deliver_due() == 0  # backing off: not due again yet
    platform.down = False
    with session_scope() as session:  # as if the back-off had passed (or a restart later)
        for due in session.scalars(select(LtiScore)):
            due.next_attempt_at = due.changed_at
    assert outbox.deliver_due() == 1
    assert outbox.deliver_due() == 0
    assert [s["body"]["scoreGiven"] for s in platform.scores_for(GRACE.sub)] == [100.0]
    (row,) = rows()
    assert row.status == "sent" and row.last_error is None and row.score_given == 100.0


def test_a_refusal_for_good_is_failed_with_the_answer_and_resent_on_demand(
    client: TestClient, platform: Platform
) -> None:
    course_with_learner(client, platform)
    with session_scope() as session:  # the LMS deleted the column
        for link in session.scalars(select(LtiResourceLink)):
            link.lineitem_url = platform.url + "/gone"
    graded_submit(GRACE.sub, 1.0, "accepted")
    outbox.deliver_due()
    (row,) = rows()
    assert row.status == "failed" and "404" in (row.last_error or "")
    with session_scope() as session:  # the instructor sees it, with the LMS's answer
        from app.models import LtiContext

        course_id = session.scalar(select(LtiContext.course_id))
    page = client.get(f"/courses/{course_id}/lms").text
    assert "1 failed, 0 pending, 0 sent" in page and "answered 404" in page and "grace" in page
    with session_scope() as session:
        for link in session.scalars(select(LtiResourceLink)):
            link.lineitem_url = platform.url + LINEITEM
        assert outbox.resend(session) == 1
    assert outbox.deliver_due() == 1
    assert [s["body"]["scoreGiven"] for s in platform.scores_for(GRACE.sub)] == [100.0]


REFUSE: dict[str, tuple[str, ...]] = {
    "sqlite": (
        "CREATE TRIGGER refuse_lms_rows BEFORE UPDATE ON lti_scores"
        " BEGIN SELECT RAISE(ABORT, 'the outbox refuses'); END",
    ),
    "postgresql": (
        "CREATE FUNCTION refuse_lms_rows() RETURNS trigger LANGUAGE plpgsql"
        " AS $$ BEGIN RAISE EXCEPTION 'the outbox refuses'; END $$",
        "CREATE TRIGGER refuse_lms_rows BEFORE UPDATE ON lti_scores"
        " FOR EACH ROW EXECUTE FUNCTION refuse_lms_rows()",
    ),
}
ALLOW: dict[str, tuple[str, ...]] = {
    "sqlite": ("DROP TRIGGER refuse_lms_rows",),
    "postgresql": ("DROP TRIGGER refuse_lms_rows ON lti_scores",),
}


def accept_all(problem: Problem, code: str, mode: Mode, device: str, draw: int) -> GradeReport:
    return GradeReport(problem=problem.slug, mode=mode, verdict=Verdict.ACCEPTED, score=1.0)


def _ddl(statements: dict[str, tuple[str, ...]]) -> None:
    with engine().begin() as connection:
        for statement in statements[connection.dialect.name]:
            connection.exec_driver_sql(statement)


def test_a_verdict_whose_lms_rows_cannot_be_armed_is_not_recorded_until_they_can(
    client: TestClient, platform: Platform, caplog: pytest.LogCaptureFixture
) -> None:
    """The verdict and the promise to send it commit together (app/grading/queue.py):
    with the database refusing the grade-book row (a trigger, the database's own
    error), the verdict rolls back too and the worker keeps its lease and retries; once
    the row can be written both land, and the LMS gets the grade."""
    course_with_learner(client, platform)
    graded_submit(GRACE.sub, 0.5)
    assert outbox.deliver_due() == 1  # Grace's row exists, sent: a new verdict updates it
    with session_scope() as session:
        account = session.scalar(select(LtiAccount).where(LtiAccount.sub == GRACE.sub))
        assert account is not None
        grace = session.get_one(User, account.user_id)
        submission_id = submissions.create_submission(
            session=session, user=grace, problem=SLUG, code="x = 2", mode="submit", max_queued=5
        ).id
    caplog.set_level(logging.INFO, logger="jaxjudge.worker")
    workers = EmbeddedWorkers(threads=1, grader=FunctionGrader(accept_all))
    _ddl(REFUSE)
    grading = threading.Thread(target=workers.work_once, args=("test:1-1:0",), daemon=True)
    grading.start()
    deadline = time.monotonic() + 30
    while not any("the database fails" in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, "the worker never tried to record the verdict"
        time.sleep(0.05)
    with session_scope() as session:
        held = session.get_one(Submission, submission_id)
        assert (held.status, held.verdict, held.lease_owner) == ("running", None, "test:1-1:0")
    assert [r.status for r in rows()] == ["sent"]
    _ddl(ALLOW)
    grading.join(timeout=30)
    assert not grading.is_alive()
    with session_scope() as session:
        done = session.get_one(Submission, submission_id)
        assert (done.status, done.verdict, done.attempts) == ("done", "accepted", 1)
    assert outbox.deliver_due() == 1
    assert [s["body"]["scoreGiven"] for s in platform.scores_for(GRACE.sub)] == [50.0, 100.0]


def test_a_link_without_a_column_gets_one_made(client: TestClient, platform: Platform) -> None:
    launch(client, platform, ADA, custom={"problem": SLUG})  # no lineitem claim
    with in_process_client() as learner:
        launch(learner, platform, GRACE)
    graded_submit(GRACE.sub, 1.0, "accepted")
    assert outbox.deliver_due() == 1
    (item,) = platform.recorded.lineitems
    assert item["resourceLinkId"] == "link-1" and item["scoreMaximum"] == 100.0
    assert platform.scores_for(GRACE.sub)[0]["lineitem"] == item["id"]


def test_a_forged_client_assertion_gets_no_token(platform: Platform) -> None:
    """The platform server really checks the tool's signature: a token request signed
    by another key is refused (so the passing tests above prove a valid assertion)."""
    import time

    import jwt
    from cryptography.hazmat.primitives.asymmetric import rsa

    from app.lti.http import PlatformCallError, call

    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    assertion = jwt.encode(
        {
            "iss": CLIENT_ID,
            "sub": CLIENT_ID,
            "aud": platform.token_url,
            "iat": now,
            "exp": now + 60,
            "jti": "x",
        },
        stranger,
        algorithm="RS256",
        headers={"kid": "unknown"},
    )
    form = {
        "grant_type": "client_credentials",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": assertion,
        "scope": "x",
    }
    with pytest.raises(PlatformCallError) as refused:
        call("POST", platform.token_url, form=form)
    assert refused.value.status == 400


def test_an_applied_regrade_sends_the_course_s_new_score(
    client: TestClient, platform: Platform
) -> None:
    from app.data import catalog, regrades
    from app.models import Course, LtiContext, Regrade, RegradeItem

    course_with_learner(client, platform)
    submission_id = graded_submit(GRACE.sub, 0.0)
    assert outbox.deliver_due() == 1
    with session_scope() as session:
        context = session.scalar(select(LtiContext))
        assert context is not None
        version = catalog.live_version(session=session, slug=SLUG)
        assert version is not None
        ada = session.scalar(select(LtiAccount).where(LtiAccount.sub == ADA.sub))
        assert ada is not None
        regrade = Regrade(
            course_id=context.course_id,
            problem=SLUG,
            version_id=version.id,
            created_by=ada.user_id,
            status="ready",
        )
        session.add(regrade)
        session.flush()
        session.add(
            RegradeItem(
                regrade_id=regrade.id,
                submission_id=submission_id,
                status="done",
                old_verdict="wrong_answer",
                old_score=0.0,
                new_verdict="accepted",
                new_score=1.0,
                new_result_json="{}",
            )
        )
        session.flush()
        assert session.get(Course, context.course_id) is not None
        regrades.apply(session=session, regrade=regrade)  # in this course only
    assert outbox.deliver_due() == 1
    assert [s["body"]["scoreGiven"] for s in platform.scores_for(GRACE.sub)] == [0.0, 100.0]


def test_a_verdict_that_arrives_while_a_score_is_on_its_way_is_sent_too(
    client: TestClient, platform: Platform
) -> None:
    course_with_learner(client, platform)
    graded_submit(GRACE.sub, 0.5)

    def better_verdict_meanwhile() -> None:
        platform.on_score = None
        graded_submit(GRACE.sub, 1.0, "accepted")  # commits while the LMS is answering

    platform.on_score = better_verdict_meanwhile
    assert outbox.deliver_due() == 0  # 50 went, but the row is pending again
    (row,) = rows()
    assert row.status == "pending" and row.score_given == 50.0
    assert outbox.deliver_due() == 1
    assert [s["body"]["scoreGiven"] for s in platform.scores_for(GRACE.sub)] == [50.0, 100.0]


def test_linking_a_problem_learners_solved_already_sends_their_scores(
    client: TestClient, platform: Platform
) -> None:
    """An existing assignment linked from the LMS later: the learners' best scores go to
    the new column without waiting for another submit."""
    course_with_learner(client, platform)
    graded_submit(GRACE.sub, 1.0, "accepted")
    assert outbox.deliver_due() == 1  # to the first link's column
    lineitem = platform.url + "/contexts/course-101/lineitems/9"
    answer = launch(
        client,
        platform,
        ADA,
        resource_link_id="link-2",
        custom={"problem": SLUG},
        lineitem=lineitem,
    )
    assert answer.status_code == 303
    assert outbox.deliver_due() == 1
    (second,) = [s for s in platform.scores_for(GRACE.sub) if s["lineitem"] == lineitem]
    assert second["body"]["scoreGiven"] == 100.0


def test_a_late_policy_and_an_override_send_the_changed_score_again(
    client: TestClient, platform: Platform
) -> None:
    """The LMS gets the grade book's final score: a penalty set after the fact lowers
    it, an override replaces it; each change is sent without any new submit."""
    course_with_learner(client, platform)
    graded_submit(GRACE.sub, 1.0, "accepted")
    assert outbox.deliver_due() == 1
    with session_scope() as session:
        (course,) = session.scalars(select(Course))
        now = utcnow()
        assignments.assign(
            session=session,
            course=course,
            problem=SLUG,
            settings=AssignmentSettings(
                opens_at=now - timedelta(days=1),
                due_at=now - timedelta(minutes=90),  # the submit was an hour and a half late
                late_policy=LatePolicy.PENALTY,
                penalty_percent=25.0,
                penalty_unit="hour",
            ),
            confirm_past_due=True,
        )
        assert gradebook.grades_changed(session=session, course=course, problem=SLUG) == 1
    assert outbox.deliver_due() == 1
    with session_scope() as session:
        (course,) = session.scalars(select(Course))
        grace = session.scalar(select(LtiAccount).where(LtiAccount.sub == GRACE.sub))
        ada = session.scalar(select(LtiAccount).where(LtiAccount.sub == ADA.sub))
        assert grace is not None and ada is not None
        hand_grading.override(
            session=session,
            course=course,
            learner_id=grace.user_id,
            slug=SLUG,
            points=4.0,
            reason="the plot was missing",
            by=session.get_one(User, ada.user_id),
        )
    assert outbox.deliver_due() == 1
    assert [s["body"]["scoreGiven"] for s in platform.scores_for(GRACE.sub)] == [100.0, 50.0, 40.0]
