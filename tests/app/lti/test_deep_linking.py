"""Deep Linking 2.0: an instructor adding an activity in the LMS picks problems in
jaxjudge; they go back as signed resource links with line items, and a learner who
follows one lands on its problem. One request yields one signed response, and only
to someone who still teaches the course."""

from __future__ import annotations

import html
import re
from datetime import date

import httpx2 as httpx
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from app.core.db import session_scope
from app.lti import keys
from app.models import CourseMember, LtiDeepLinkRequest, User
from app.vocabulary import MemberRole
from tests.app.conftest import in_process_client
from tests.app.lti.conftest import ADA, GRACE, SLUG, launch
from tests.lti_platform import CLIENT_ID, DEPLOYMENT_ID, LEARNER, LTI, Platform
from tests.lti_platform import User as LmsUser

DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
OTHER = "stable-logsumexp"


def deep_linking_launch(client: TestClient, platform: Platform) -> str:
    """Ada adds an activity: the launch, the picker; the picker's CSRF token."""
    answer = launch(
        client, platform, ADA, message_type="LtiDeepLinkingRequest", resource_link_id=None
    )
    assert answer.headers["location"] == "/lti/deep-link"
    picker = client.get("/lti/deep-link")
    assert picker.status_code == 200 and SLUG in picker.text and OTHER in picker.text
    token = re.search(r'name="csrf_token" value="([^"]+)"', picker.text)
    assert token
    return token[1]


def answered(client: TestClient, csrf: str, *slugs: str) -> httpx.Response:
    return client.post(
        "/lti/deep-link", data={"problem": list(slugs), "points": "10", "csrf_token": csrf}
    )


def picked(client: TestClient, platform: Platform, *slugs: str) -> dict[str, object]:
    answer = answered(client, deep_linking_launch(client, platform), *slugs)
    assert answer.status_code == 200
    form = re.search(r'<form id="lti-post" method="post" action="([^"]+)">', answer.text)
    assert form and html.unescape(form[1]) == f"{platform.url}/deep-link-return"
    assert f"form-action 'self' {platform.url}" in answer.headers["content-security-policy"]
    jwt_field = re.search(r'name="JWT" value="([^"]+)"', answer.text)
    assert jwt_field
    return platform.decode_deep_link_response(jwt_field[1])


def test_picked_problems_go_back_as_signed_links_with_line_items(
    client: TestClient, platform: Platform
) -> None:
    response = picked(client, platform, SLUG, OTHER)
    assert response["iss"] == CLIENT_ID and response["aud"] == platform.issuer
    assert response[LTI + "message_type"] == "LtiDeepLinkingResponse"
    assert response[LTI + "deployment_id"] == DEPLOYMENT_ID
    assert response[DL + "data"] == "opaque-platform-data"  # echoed as the spec asks
    items = response[DL + "content_items"]
    assert isinstance(items, list) and [i["custom"]["problem"] for i in items] == [SLUG, OTHER]
    first = items[0]
    assert first["type"] == "ltiResourceLink" and first["url"].endswith("/lti/launch")
    assert first["lineItem"] == {"scoreMaximum": 10.0, "label": first["title"], "tag": SLUG}
    assert first["custom"]["due_at"] == "$ResourceLink.submission.endDateTime"
    assert first["custom"]["points"] == "10"


def test_a_learner_follows_a_deep_linked_activity_to_its_problem(
    client: TestClient, platform: Platform
) -> None:
    items = picked(client, platform, OTHER)[DL + "content_items"]
    assert isinstance(items, list)
    custom = items[0]["custom"]
    # The LMS made a link from the item, filled in the due date, and the learner follows it.
    filled = {**custom, "due_at": f"{date.today().year + 1}-12-24T12:00:00Z"}
    with in_process_client() as learner:
        answer = launch(learner, platform, GRACE, resource_link_id="dl-link", custom=filled)
        assert answer.headers["location"] == f"/problems/{OTHER}"
    from sqlalchemy import select

    from app.core.db import session_scope
    from app.models import LtiResourceLink

    with session_scope() as session:  # the points picked are the column's maximum
        assert session.scalar(select(LtiResourceLink.score_maximum)) == 10.0


def test_learners_cannot_add_activities(client: TestClient, platform: Platform) -> None:
    launch(client, platform, ADA, custom={"problem": SLUG})  # the course exists
    with in_process_client() as learner:
        answer = launch(
            learner, platform, GRACE, message_type="LtiDeepLinkingRequest", resource_link_id=None
        )
        assert answer.status_code == 403 and "instructors" in answer.text
        picker = learner.get("/lti/deep-link")  # nothing was left waiting for them
        assert picker.status_code == 400 and "No LMS is waiting" in picker.text


def test_a_response_signed_before_a_key_rotation_still_verifies(
    client: TestClient, platform: Platform
) -> None:
    from app.core.db import session_scope

    before = keys.public_jwks()["keys"][0]["kid"]
    with session_scope() as session:
        keys.rotate(session)
    published = [k["kid"] for k in keys.public_jwks()["keys"]]
    assert published[0] != before and before in published  # the retired key stays a day
    response = picked(client, platform, SLUG)  # signed with the new key
    assert response[LTI + "message_type"] == "LtiDeepLinkingResponse"


def test_the_course_s_existing_assignments_come_first(
    client: TestClient, platform: Platform
) -> None:
    launch(client, platform, ADA, custom={"problem": OTHER})  # OTHER is assigned now
    launch(client, platform, ADA, message_type="LtiDeepLinkingRequest", resource_link_id=None)
    picker = client.get("/lti/deep-link").text
    first = re.search(r'name="problem" value="([^"]+)"', picker)
    assert first and first[1] == OTHER
    assert picker.count("already assigned in this course") == 1


def test_a_replayed_cookie_gets_no_second_signed_response(
    client: TestClient, platform: Platform
) -> None:
    csrf = deep_linking_launch(client, platform)
    before = httpx.Cookies(client.cookies)  # a copy of the cookie, the request in it
    assert 'name="JWT"' in answered(client, csrf, SLUG).text
    client.cookies = before
    again = answered(client, csrf, OTHER)
    assert again.status_code == 400 and "No LMS is waiting" in again.text
    assert 'name="JWT"' not in again.text


def test_a_relaunch_as_a_learner_spends_the_waiting_request(
    client: TestClient, platform: Platform
) -> None:
    """The LMS relaunches Ada as a learner (in another frame or browser: her first
    session stays signed in); her pick is then answered with nothing signed, although
    she stays the course's instructor in jaxjudge (its last one is never demoted)."""
    csrf = deep_linking_launch(client, platform)
    with in_process_client() as elsewhere:
        as_learner = LmsUser(ADA.sub, ADA.name, ADA.email, [LEARNER])
        assert launch(elsewhere, platform, as_learner, custom={"problem": SLUG}).status_code == 303
    again = answered(client, csrf, SLUG)
    assert again.status_code == 400 and 'name="JWT"' not in again.text
    with session_scope() as session:
        assert session.scalar(select(CourseMember.role)) == MemberRole.INSTRUCTOR
        assert session.scalar(select(LtiDeepLinkRequest.used_at)) is not None


def test_only_someone_who_teaches_the_course_now_gets_the_response(
    client: TestClient, platform: Platform
) -> None:
    """Their role is read when they answer, not taken from the launch."""
    csrf = deep_linking_launch(client, platform)
    with session_scope() as session:  # a roster sync or a co-instructor demoted Ada since
        ada = session.scalars(select(User.id)).one()
        session.execute(
            update(CourseMember).where(CourseMember.user_id == ada).values(role=MemberRole.LEARNER)
        )
    answer = answered(client, csrf, SLUG)
    assert answer.status_code == 403 and "instructors" in answer.text
    assert 'name="JWT"' not in answer.text
