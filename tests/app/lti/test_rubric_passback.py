"""The LMS receives the combined score: a submit graded automatically, then given a
rubric item by hand, sends automatic plus rubric points; changing the item's points
sends the new total, with no new submit (app/data/rubrics.py arms the rows)."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.core.db import session_scope
from app.data import assignments, rubrics
from app.lti import outbox
from app.models import Course, LtiAccount, Submission, User
from tests.app.lti.conftest import ADA, GRACE, SLUG
from tests.app.lti.test_outbox import course_with_learner, graded_submit
from tests.lti_platform import Platform


def test_the_lms_gets_automatic_and_rubric_points_and_an_item_s_new_points(
    client: TestClient, platform: Platform
) -> None:
    course_with_learner(client, platform)
    submission_id = graded_submit(GRACE.sub, 0.5)
    assert outbox.deliver_due() == 1
    with session_scope() as session:
        (course,) = session.scalars(select(Course))
        instructor = session.scalar(select(LtiAccount).where(LtiAccount.sub == ADA.sub))
        assert instructor is not None
        by = session.get_one(User, instructor.user_id)
        assignment = assignments.assigned(session=session, course=course, slug=SLUG)
        item = rubrics.add_item(session=session, course=course, assignment=assignment,
                                points=2, description="explains the shapes", by=by)  # fmt: skip
        assert outbox.deliver_due() == 0  # an item nobody has applied changes no score
        rubrics.apply(session=session, course=course, item_id=item.id, by=by,
                      submission=session.get_one(Submission, submission_id))  # fmt: skip
        item_id, points = item.id, assignment.max_points
    assert outbox.deliver_due() == 1
    with session_scope() as session:
        (course,) = session.scalars(select(Course))
        instructor = session.scalar(select(LtiAccount).where(LtiAccount.sub == ADA.sub))
        assert instructor is not None
        rubrics.change_item(session=session, course=course, item_id=item_id, points=1,
                            description="explains the shapes",
                            by=session.get_one(User, instructor.user_id))  # fmt: skip
    assert outbox.deliver_due() == 1
    given = [s["body"]["scoreGiven"] for s in platform.scores_for(GRACE.sub)]
    assert points == 10 and given == [50.0, 70.0, 60.0]  # 5 + 2 of 10, then 5 + 1
