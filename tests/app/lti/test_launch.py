"""The LTI 1.3 launch against a real platform server: a good launch signs the learner in
on the linked problem; every rule of the security framework refuses a bad one with a
page that says why, and changes nothing."""

from __future__ import annotations

import html
import time
from datetime import date

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.core.db import session_scope
from app.lti import platform_keys
from app.models import Course, CourseMember, LtiAccount, LtiLogin, User
from tests.app.conftest import in_process_client
from tests.app.lti.conftest import ADA, GRACE, SLUG, launch, start_login
from tests.lti_platform import (
    CLIENT_ID,
    INSTRUCTOR,
    LEARNER,
    TEACHING_ASSISTANT,
    Platform,
    forge,
    public_pem,
)
from tests.lti_platform import User as LmsUser

YEAR = date.today().year + 1  # due dates in the future whenever the test runs


def counts() -> tuple[int, int, int]:
    with session_scope() as session:
        return (
            session.scalar(select(func.count()).select_from(User)) or 0,
            session.scalar(select(func.count()).select_from(Course)) or 0,
            session.scalar(select(func.count()).select_from(LtiAccount)) or 0,
        )


def test_an_instructor_launch_creates_the_course_and_lands_on_the_problem(
    client: TestClient, platform: Platform
) -> None:
    answer = launch(client, platform, ADA, custom={"problem": SLUG})
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == f"/problems/{SLUG}"
    courses_page = client.get("/courses").text
    assert "Deep Learning 101" in courses_page  # signed in, and a member of the new course
    with session_scope() as session:
        linked = session.scalar(select(LtiAccount).where(LtiAccount.sub == ADA.sub))
        assert linked is not None and linked.email == ADA.email
        user = session.get(User, linked.user_id)
        assert user is not None and user.name == "ada"
        member = session.scalar(select(CourseMember).where(CourseMember.user_id == user.id))
        assert member is not None and member.role == "instructor"


def test_a_learner_lands_signed_in_and_is_the_same_account_next_time(
    client: TestClient, platform: Platform
) -> None:
    launch(client, platform, ADA, custom={"problem": SLUG})
    with in_process_client() as learner:
        first = launch(learner, platform, GRACE)
        assert first.headers["location"] == f"/problems/{SLUG}"  # the link knows its problem
        assert "grace" in learner.get(f"/problems/{SLUG}").text
        before = counts()
        again = launch(learner, platform, GRACE)
        assert again.status_code == 303 and counts() == before


def test_the_login_works_by_post_too(client: TestClient, platform: Platform) -> None:
    login = start_login(client, platform, ADA, method="POST")
    token = platform.id_token(nonce=login.nonce, user=ADA, custom={"problem": SLUG})
    answer = client.post(
        "/lti/launch", data={"id_token": token, "state": login.state}, follow_redirects=False
    )
    assert answer.status_code == 303


def test_a_teaching_assistant_is_the_courses_teaching_assistant(
    client: TestClient, platform: Platform
) -> None:
    launch(client, platform, ADA, custom={"problem": SLUG})
    # Canvas sends a TA the Instructor role and the TeachingAssistant sub-role.
    assistant = LmsUser(
        "sub-ta", "Tess Assist", "tess@uni.example", [INSTRUCTOR, TEACHING_ASSISTANT]
    )
    with in_process_client() as browser:
        launch(browser, platform, assistant)
        with session_scope() as session:
            account = session.scalar(select(LtiAccount).where(LtiAccount.sub == "sub-ta"))
            assert account is not None
            role = session.scalar(
                select(CourseMember.role).where(CourseMember.user_id == account.user_id)
            )
        assert role == "ta"


def test_the_lms_never_demotes_the_courses_last_instructor(
    client: TestClient, platform: Platform
) -> None:
    launch(client, platform, ADA, custom={"problem": SLUG})
    demoted = LmsUser(ADA.sub, ADA.name, ADA.email, [LEARNER])
    with in_process_client() as browser:
        launch(browser, platform, demoted)
    with session_scope() as session:
        account = session.scalar(select(LtiAccount).where(LtiAccount.sub == ADA.sub))
        assert account is not None
        role = session.scalar(
            select(CourseMember.role).where(CourseMember.user_id == account.user_id)
        )
    assert role == "instructor"


def test_a_learner_cannot_create_a_course(client: TestClient, platform: Platform) -> None:
    before = counts()
    answer = launch(client, platform, GRACE, custom={"problem": SLUG})
    assert answer.status_code == 400
    assert "not linked to jaxjudge yet" in answer.text
    assert counts() == before  # not even the account


def test_a_new_link_is_set_up_by_the_instructor(client: TestClient, platform: Platform) -> None:
    answer = launch(client, platform, ADA, resource_link_id="link-new")
    assert answer.headers["location"] == "/lti/link"
    picker = client.get("/lti/link").text
    token = picker.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    chosen = client.post(
        "/lti/link", data={"problem": SLUG, "csrf_token": token}, follow_redirects=False
    )
    assert chosen.headers["location"] == f"/problems/{SLUG}"
    with in_process_client() as learner:
        assert (
            launch(learner, platform, GRACE, resource_link_id="link-new").headers["location"]
            == f"/problems/{SLUG}"
        )


def test_the_due_date_the_lms_sends_is_the_assignment_s(
    client: TestClient, platform: Platform
) -> None:
    launch(client, platform, ADA, custom={"problem": SLUG, "due_at": f"{YEAR}-12-01T23:59:00Z"})
    from app.models import Assignment

    with session_scope() as session:
        due = session.scalar(select(Assignment.due_at).where(Assignment.problem == SLUG))
    assert due is not None and due.isoformat() == f"{YEAR}-12-01T23:59:00"


# Each rule of the IMS Security Framework, broken on purpose.


def _refused(client: TestClient, state: str, token: str, why: str) -> None:
    before = counts()
    answer = client.post("/lti/launch", data={"id_token": token, "state": state})
    assert answer.status_code in (400, 401), answer.text
    assert why in html.unescape(answer.text), answer.text
    assert counts() == before


def test_an_expired_token_is_refused(client: TestClient, platform: Platform) -> None:
    login = start_login(client, platform, ADA)
    old = {"exp": int(time.time()) - 600, "iat": int(time.time()) - 900}
    _refused(
        client, login.state, platform.id_token(nonce=login.nonce, user=ADA, extra=old), "expired"
    )


def test_a_token_issued_in_the_future_is_refused(client: TestClient, platform: Platform) -> None:
    login = start_login(client, platform, ADA)
    later = {"iat": int(time.time()) + 3600, "exp": int(time.time()) + 7200}
    _refused(
        client, login.state, platform.id_token(nonce=login.nonce, user=ADA, extra=later), "future"
    )


def test_a_token_for_another_tool_is_refused(client: TestClient, platform: Platform) -> None:
    login = start_login(client, platform, ADA)
    token = platform.id_token(nonce=login.nonce, user=ADA, extra={"aud": "another-tool"})
    _refused(client, login.state, token, "another tool")


def test_several_audiences_need_this_tool_as_authorized_party(
    client: TestClient, platform: Platform
) -> None:
    login = start_login(client, platform, ADA)
    token = platform.id_token(
        nonce=login.nonce, user=ADA, extra={"aud": [CLIENT_ID, "other"], "azp": "other"}
    )
    _refused(client, login.state, token, "authorized party")


def test_an_unknown_issuer_is_refused_at_login(client: TestClient, platform: Platform) -> None:
    params = platform.initiation(ADA) | {"iss": "https://unknown.example"}
    answer = client.get("/lti/login", params=params, follow_redirects=False)
    assert answer.status_code == 400 and "is registered" in answer.text


def test_a_token_from_another_issuer_is_refused(client: TestClient, platform: Platform) -> None:
    login = start_login(client, platform, ADA)
    token = platform.id_token(nonce=login.nonce, user=ADA, extra={"iss": "https://evil.example"})
    _refused(client, login.state, token, "another issuer")


def test_an_unregistered_deployment_is_refused(client: TestClient, platform: Platform) -> None:
    login = start_login(client, platform, ADA)
    deployment = {"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "rogue"}
    token = platform.id_token(nonce=login.nonce, user=ADA, extra=deployment)
    _refused(client, login.state, token, "not registered")
    initiation = platform.initiation(ADA) | {"lti_deployment_id": "rogue"}
    answer = client.get("/lti/login", params=initiation, follow_redirects=False)
    assert answer.status_code == 400 and "not registered" in answer.text


def test_a_replayed_launch_is_refused(client: TestClient, platform: Platform) -> None:
    login = start_login(client, platform, ADA)
    token = platform.id_token(nonce=login.nonce, user=ADA, custom={"problem": SLUG})
    first = client.post("/lti/launch", data={"id_token": token, "state": login.state})
    assert first.status_code == 200  # followed to the problem page
    _refused(client, login.state, token, "already used")


def test_a_nonce_from_another_login_is_refused(client: TestClient, platform: Platform) -> None:
    login = start_login(client, platform, ADA)
    other = start_login(client, platform, ADA)
    token = platform.id_token(nonce=other.nonce, user=ADA)
    _refused(client, login.state, token, "nonce")


@pytest.mark.parametrize("alg", ["none", "HS256"])
def test_unsigned_and_hmac_tokens_are_refused(
    client: TestClient, platform: Platform, alg: str
) -> None:
    login = start_login(client, platform, ADA)
    claims = platform.launch_claims(nonce=login.nonce, user=ADA)
    secret = None if alg == "none" else public_pem(platform.key)
    token = forge({"alg": alg, "typ": "JWT", "kid": platform.kid}, claims, secret)
    _refused(client, login.state, token, "RS256")


def test_a_key_not_in_the_platform_s_set_is_refused(client: TestClient, platform: Platform) -> None:
    from cryptography.hazmat.primitives.asymmetric import rsa

    login = start_login(client, platform, ADA)
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = platform.id_token(nonce=login.nonce, user=ADA, key=stranger, kid="not-published")
    _refused(client, login.state, token, "not in the LMS's published key set")
    # A published kid with another key's signature is a bad signature.
    login = start_login(client, platform, ADA)
    token = platform.id_token(nonce=login.nonce, user=ADA, key=stranger)
    _refused(client, login.state, token, "signature does not verify")


def test_a_rotated_platform_key_is_fetched_again_but_made_up_kids_fetch_nothing(
    client: TestClient, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert launch(client, platform, ADA, custom={"problem": SLUG}).status_code == 303
    assert platform.jwks_fetches == 1
    from cryptography.hazmat.primitives.asymmetric import rsa

    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    # A window no busy machine outlasts (the real one is seconds): the test is that a
    # made-up kid fetches nothing within it, not how fast five logins go.
    monkeypatch.setattr(platform_keys, "REFETCH_AFTER", 600.0)
    for _ in range(5):  # within REFETCH_AFTER of the last fetch: no new fetch
        login = start_login(client, platform, ADA)
        token = platform.id_token(nonce=login.nonce, user=ADA, key=stranger, kid="made-up")
        _refused(client, login.state, token, "not in the LMS's published key set")
    assert platform.jwks_fetches == 1
    monkeypatch.setattr(platform_keys, "REFETCH_AFTER", 0.0)  # as if some time passed
    platform.rotate_key()  # the cached set lacks the new kid: one fresh fetch
    assert launch(client, platform, ADA, custom={"problem": SLUG}).status_code == 303
    assert platform.jwks_fetches == 2


def test_a_missing_or_forged_state_is_refused(client: TestClient, platform: Platform) -> None:
    login = start_login(client, platform, ADA)
    token = platform.id_token(nonce=login.nonce, user=ADA)
    _refused(client, "", token, "no login in progress")
    _refused(client, "forged-state", token, "no login in progress")


def test_a_launch_finished_by_another_browser_is_refused(
    client: TestClient, platform: Platform
) -> None:
    """Login CSRF: an attacker's own launch posted from the victim's browser (which
    lacks the attacker's state cookie) signs nobody in."""
    login = start_login(client, platform, ADA)
    token = platform.id_token(nonce=login.nonce, user=ADA, custom={"problem": SLUG})
    with in_process_client() as victim:
        before = counts()
        answer = victim.post("/lti/launch", data={"id_token": token, "state": login.state})
        assert "does not hold the cookie of the launch" in answer.text
        assert 'href="/lti/login?' in answer.text  # the new-window fallback
        assert counts() == before
        assert "Deep Learning 101" not in victim.get("/courses").text


def test_a_launch_in_a_frame_continues_in_a_new_window(
    client: TestClient, platform: Platform
) -> None:
    login = start_login(client, platform, ADA)
    token = platform.id_token(nonce=login.nonce, user=ADA, custom={"problem": SLUG})
    answer = client.post(
        "/lti/launch",
        data={"id_token": token, "state": login.state},
        headers={"Sec-Fetch-Dest": "iframe"},
    )
    assert (
        "new window" in answer.text
        and "frame-ancestors *" in answer.headers["content-security-policy"]
    )
    with session_scope() as session:
        assert session.scalar(select(LtiLogin.used_at)) is None  # the login was not spent


def test_malformed_tokens_get_a_page(client: TestClient, platform: Platform) -> None:
    odd_headers = [
        forge({"alg": "RS256", "kid": 123}, {}, b"k"),  # a kid that is not a string
        forge({"alg": "RS256", "crit": ["x"]}, {}, b"k"),
    ]
    for token in ["", "garbage", "a.b.c", "x" * 60_000, *odd_headers]:
        login = start_login(client, platform, ADA)  # a refusal drops the login's cookie
        answer = client.post("/lti/launch", data={"id_token": token, "state": login.state})
        assert answer.status_code == 400 and '<main id="content"' in answer.text, token[:10]
    answer = client.post("/lti/launch", data={"id_token": "x" * 70_000, "state": "s"})
    assert answer.status_code == 413  # past the body limit: refused unread


def test_behind_tls_the_state_cookie_crosses_sites_and_nothing_else_reads_it(
    platform: Platform,
) -> None:
    """The launch's form post comes from the LMS's site: the state cookie must be
    SameSite=None (so Secure), and it is HttpOnly, for /lti/ only, for ten minutes."""
    from app.server.main import create_app

    with TestClient(create_app(workers=0, prepare=False), base_url="https://testserver") as app:
        answer = app.get("/lti/login", params=platform.initiation(ADA), follow_redirects=False)
    cookie = answer.headers["set-cookie"].lower()
    assert cookie.startswith("jaxjudge_lti_")
    for attribute in (
        "samesite=none",
        "secure",
        "httponly",
        "path=/lti/",
        "max-age=600",
        "partitioned",
    ):
        assert attribute in cookie, attribute


def test_overlong_ids_from_the_lms_are_refused_not_cut(
    client: TestClient, platform: Platform
) -> None:
    login = start_login(client, platform, ADA)
    token = platform.id_token(nonce=login.nonce, user=ADA, context_id="c" * 300)
    _refused(client, login.state, token, "'context' id is not 1-255 characters")
    login = start_login(client, platform, ADA)
    token = platform.id_token(nonce=login.nonce, user=ADA, resource_link_id="r" * 300)
    _refused(client, login.state, token, "'resource_link' id is not 1-255 characters")


def test_a_second_registration_of_the_same_lms_finds_the_same_people(
    client: TestClient, platform: Platform
) -> None:
    """A user is (issuer, sub): the LMS registered twice (two client ids, e.g. a second
    developer key) launches the same account, not a copy of it."""
    from urllib.parse import parse_qs, urlparse

    from app.lti.platforms import PlatformIn, add
    from tests.lti_platform import DEPLOYMENT_ID

    launch(client, platform, ADA, custom={"problem": SLUG})
    with session_scope() as session:
        add(
            session=session,
            platform=PlatformIn(
                issuer=platform.issuer,
                client_id="second-key",
                auth_login_url=platform.login_url,
                token_url=platform.token_url,
                jwks_url=platform.jwks_url,
                deployment_ids=(DEPLOYMENT_ID,),
            ),
        )
    before = counts()
    with in_process_client() as browser:
        params = platform.initiation(ADA) | {"client_id": "second-key"}
        started = browser.get("/lti/login", params=params, follow_redirects=False)
        query = {k: v[0] for k, v in parse_qs(urlparse(started.headers["location"]).query).items()}
        assert query["client_id"] == "second-key"
        token = platform.id_token(
            nonce=query["nonce"], user=ADA, context_id="course-202", extra={"aud": "second-key"}
        )
        answer = browser.post(
            "/lti/launch", data={"id_token": token, "state": query["state"]}, follow_redirects=False
        )
        assert answer.status_code == 303, answer.text
    users, _courses, accounts = counts()
    assert (users, accounts) == before[0::2]  # no second account for the same person


def test_nul_characters_in_a_login_request_get_a_page(
    client: TestClient, platform: Platform
) -> None:
    """PostgreSQL text cannot hold NUL: refused at the door, on both databases."""
    for field in ("iss", "target_link_uri", "login_hint"):
        params = platform.initiation(ADA) | {field: "x\x00y"}
        answer = client.get("/lti/login", params=params, follow_redirects=False)
        assert answer.status_code == 400 and "NUL" in answer.text, field


def test_a_learner_s_own_due_date_does_not_move_the_course_s(
    client: TestClient, platform: Platform
) -> None:
    from app.models import Assignment

    launch(client, platform, ADA, custom={"problem": SLUG, "due_at": f"{YEAR}-12-01T23:59:00Z"})
    with in_process_client() as learner:  # an extension the LMS fills in for this learner
        launch(
            learner, platform, GRACE, custom={"problem": SLUG, "due_at": f"{YEAR}-12-08T23:59:00Z"}
        )
    with session_scope() as session:
        due = session.scalar(select(Assignment.due_at).where(Assignment.problem == SLUG))
    assert due is not None and due.isoformat() == f"{YEAR}-12-01T23:59:00"


def test_logins_from_one_address_are_throttled(
    client: TestClient, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each login writes a row: one address starting them by the thousand is stopped
    (a class behind one NAT launching together stays far below the limit)."""
    from app.core import throttle

    monkeypatch.setattr(throttle.lti_logins, "limit", 3)
    for _ in range(3):
        start_login(client, platform, ADA)
    answer = client.get("/lti/login", params=platform.initiation(ADA), follow_redirects=False)
    assert answer.status_code == 429 and "Too many LMS launches" in answer.text
