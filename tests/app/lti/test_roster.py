"""The roster from the LMS (NRPS): synced at a staff launch and on demand, paged; members
who never launched are in the course (the grade book shows them as not started)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.core.db import session_scope
from app.data import courses
from app.models import Course, LtiAccount, LtiContext
from app.reports import gradebook
from tests.app.lti.conftest import ADA, ALAN, GRACE, SLUG, launch
from tests.lti_platform import LEARNER, TEACHING_ASSISTANT, Platform, User

TESS = User("sub-tess", "Tess Assist", "tess@uni.example", [TEACHING_ASSISTANT])
ZOE = User("sub-zoe", "Zoë Ångström", "", [LEARNER])  # no email; a name outside ASCII


def course_members() -> dict[str, str]:
    with session_scope() as session:
        context = session.scalar(select(LtiContext))
        assert context is not None
        course = session.get(Course, context.course_id)
        assert course is not None
        return {
            user.name: role for user, role in courses.members_of(session=session, course=course)
        }


def test_a_staff_launch_brings_the_whole_roster_in(client: TestClient, platform: Platform) -> None:
    platform.members = [ADA, GRACE, ALAN, TESS, ZOE]  # three pages of two
    launch(client, platform, ADA, custom={"problem": SLUG})
    assert course_members() == {
        "ada": "instructor",
        "tess": "ta",
        "grace": "learner",
        "alan": "learner",
        "Zoe-Angstrom": "learner",
    }
    with session_scope() as session:
        context = session.scalar(select(LtiContext))
        assert context is not None and context.roster_synced_at is not None
        course = session.get(Course, context.course_id)
        assert course is not None
        matrix = gradebook.grade_matrix(session=session, course=course)
        alan = next(u for u in matrix.learners if u.name == "alan")
        assert matrix.cell(alan, SLUG).attempts == 0  # not started
        linked = session.scalar(select(LtiAccount).where(LtiAccount.sub == ALAN.sub))
        assert linked is not None and linked.user_id == alan.id  # his first launch finds him


def test_the_roster_syncs_on_demand_and_an_outage_changes_nothing(
    client: TestClient, platform: Platform
) -> None:
    launch(client, platform, ADA, custom={"problem": SLUG})
    assert set(course_members()) == {"ada"}
    with session_scope() as session:
        course_id = session.scalar(select(LtiContext.course_id))
    page = client.get(f"/courses/{course_id}/lms")
    assert page.status_code == 200 and "Deep Learning 101" in page.text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert token
    platform.members = [ADA, GRACE]
    platform.down = True
    answer = client.post(f"/courses/{course_id}/lms/roster", data={"csrf_token": token[1]})
    assert answer.status_code == 400 and "503" in answer.text
    assert set(course_members()) == {"ada"}
    platform.down = False
    answer = client.post(f"/courses/{course_id}/lms/roster", data={"csrf_token": token[1]})
    assert answer.status_code == 200 and "Roster synced: 2 members" in answer.text
    assert course_members() == {"ada": "instructor", "grace": "learner"}
