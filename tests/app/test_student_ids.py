"""Student ids and emails that match one learner (issue 39): where each came from
(typed, SSO, LMS, a followed link), kept from being typed over, said per row in the
exports' companion; a course that asks for a student id at join."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.core.db import session_scope
from app.data import accounts, courses
from app.lti import claims, provisioning
from app.models import Course, LtiPlatform, User
from app.vocabulary import IdSource
from tests.app.conftest import form_token, in_process_client, sign_in, token_for


@pytest.fixture
def client(sqlite_database: str) -> Iterator[TestClient]:
    with in_process_client() as test_client:
        yield test_client


def user(name: str) -> User:
    with session_scope() as session:
        found = session.query(User).filter_by(name=name).one()
        session.expunge(found)
        return found


def set_ids(name: str, **values: object) -> None:
    with session_scope() as session:
        found = session.query(User).filter_by(name=name).one()
        for column, value in values.items():
            setattr(found, column, value)


def test_a_typed_student_id_is_self_declared_and_a_given_one_cannot_be_typed_over(
    client: TestClient,
) -> None:
    token_for("ada")
    csrf = sign_in(client, "ada")
    form = {"display_name": "Ada", "email": "", "student_id": "S42", "csrf_token": csrf}
    assert client.post("/account/profile", data=form).status_code == 200
    assert (user("ada").student_id, user("ada").student_id_source) == (
        "S42",
        IdSource.SELF_DECLARED,
    )
    assert "self-declared" in client.get("/account").text
    set_ids("ada", student_id="U-1", student_id_source=IdSource.SSO)
    page = client.get("/account").text
    assert 'value="U-1" readonly' in page
    assert "from your university&#39;s sign-in; it cannot be changed here." in page
    refused = client.post(
        "/account/profile", data={**form, "display_name": "Changed", "student_id": "S99"}
    )
    assert refused.status_code == 400
    assert (
        "Your student id came from your university&#39;s sign-in and cannot be changed here."
        in refused.text
    )
    assert (user("ada").student_id, user("ada").display_name) == ("U-1", "Ada")
    set_ids("ada", email="ada@lms.example", email_source=IdSource.LMS)
    kept = {**form, "student_id": "U-1", "email": "ada@lms.example"}
    assert client.post("/account/profile", data=kept).status_code == 200
    refused = client.post("/account/profile", data={**kept, "email": "me@example.org"})
    assert "Your email came from your LMS and cannot be changed here." in refused.text
    assert user("ada").email == "ada@lms.example"


def test_the_ids_companion_says_where_each_id_came_from(client: TestClient) -> None:
    teacher = token_for("teacher", role="instructor")
    made = client.post("/api/courses", json={"name": "Term"}, headers=teacher).json()
    people = {
        "ada": ("U-1", IdSource.SSO, "ada@uni.example", IdSource.SSO),
        "bob": ("L-2", IdSource.LMS, "bob@uni.example", IdSource.VERIFIED),
        "cy": ("S3", IdSource.SELF_DECLARED, "cy@uni.example", IdSource.SELF_DECLARED),
    }
    for name, (student_id, id_source, email, email_source) in people.items():
        client.post("/api/courses/join", json={"code": made["join_code"]}, headers=token_for(name))
        set_ids(name, student_id=student_id, student_id_source=id_source, email=email,
                email_source=email_source)  # fmt: skip
    answer = client.get(f"/api/courses/{made['id']}/grades-ids.csv", headers=teacher)
    rows = list(csv.reader(io.StringIO(answer.text.lstrip("\ufeff"))))
    assert {(r[0], r[2], r[4], r[5]) for r in rows[1:]} == {
        ("ada", "student id", "university sign-in", "yes"),
        ("ada", "email", "university sign-in", "yes"),
        ("bob", "student id", "LMS", "yes"),
        ("bob", "email", "verified by a mailed link", "yes"),
        ("cy", "student id", "set by the learner (unverified)", "yes"),
        ("cy", "email", "set by the learner (unverified)",
         "no: its owner has not verified it (a link is mailed when it is set)"),
    }  # fmt: skip
    canvas = client.get(f"/api/courses/{made['id']}/grades.csv?layout=canvas", headers=teacher)
    sis = {r[0]: r[2:4] for r in csv.reader(io.StringIO(canvas.text.lstrip("\ufeff")))}
    assert sis["cy"] == ["S3", ""] and sis["ada"] == ["U-1", "ada@uni.example"]


def test_an_lms_launch_gives_its_student_id_and_email_as_the_lms(sqlite_database: str) -> None:
    payload = {claims.LIS: {"person_sourcedid": " SIS-7 "}}
    assert claims.mapping(payload, claims.LIS)["person_sourcedid"] == " SIS-7 "
    with session_scope() as session:
        platform = LtiPlatform(issuer="https://lms.example", client_id="c",
                               auth_login_url="https://lms.example/a",
                               token_url="https://lms.example/t", jwks_url="https://lms.example/k")  # fmt: skip
        session.add(platform)
        session.flush()
        made = provisioning.linked_user(session=session, platform_id=platform.id, sub="s1",
                                        email="ann@uni.example", full_name="Ann",
                                        student_id="SIS-7")  # fmt: skip
        assert (made.email_source, made.student_id, made.student_id_source) == (
            IdSource.LMS, "SIS-7", IdSource.LMS,
        )  # fmt: skip
        # A learner's typed id gives way to the LMS's; a university sign-in's does not.
        made.student_id, made.student_id_source = "typo", IdSource.SELF_DECLARED
        again = provisioning.linked_user(session=session, platform_id=platform.id, sub="s1",
                                         email="", full_name="", student_id="SIS-7")  # fmt: skip
        assert (again.student_id, again.student_id_source) == ("SIS-7", IdSource.LMS)
        again.student_id, again.student_id_source = "U-9", IdSource.SSO
        provisioning.linked_user(session=session, platform_id=platform.id, sub="s1",
                                 email="", full_name="", student_id="SIS-7")  # fmt: skip
        assert again.student_id == "U-9"


def test_a_course_that_asks_for_a_student_id_takes_one_at_join(client: TestClient) -> None:
    with session_scope() as session:
        teacher = accounts.create_user(session=session, name="teacher",
                                       password="long test password", role="instructor")  # fmt: skip
        course = courses.create_course(session=session, name="JAX 101", instructor=teacher)
        course_id, code = course.id, course.join_code
    csrf = sign_in(client, "teacher")
    people = client.get(f"/courses/{course_id}/people").text
    assert "Ask for a student id at join" in people
    answer = client.post(f"/courses/{course_id}/student-id-required",
                         data={"required": "true", "csrf_token": csrf})  # fmt: skip
    assert answer.status_code == 200
    with session_scope() as session:
        assert session.get_one(Course, course_id).requires_student_id is True

    ada = token_for("ada")
    refused = client.post("/api/courses/join", json={"code": code}, headers=ada)
    assert refused.status_code == 400
    assert (
        refused.json()["detail"] == "JAX 101 asks for your student id: enter it with the join code."
    )
    assert client.get("/api/courses", headers=ada).json()["count"] == 0
    joined = client.post(
        "/api/courses/join", json={"code": code, "student_id": " S1 "}, headers=ada
    )
    assert joined.status_code == 200, joined.text
    assert (user("ada").student_id, user("ada").student_id_source) == ("S1", IdSource.SELF_DECLARED)

    token_for("bob")
    browser = TestClient(client.app)
    sign_in(browser, "bob")
    csrf = form_token(browser, "/courses")
    page = browser.post("/courses/join", data={"code": code, "csrf_token": csrf})
    assert page.status_code == 400
    assert "JAX 101 asks for your student id: enter it with the join code." in page.text
    assert user("bob").student_id == ""
    browser.post("/courses/join", data={"code": code, "student_id": "S2", "csrf_token": csrf})
    assert user("bob").student_id == "S2"
    assert "JAX 101" in browser.get("/courses").text
    cy = token_for("cy")  # an account with an id joins as it is: none asked
    set_ids("cy", student_id="C3", student_id_source=IdSource.SSO)
    assert client.post("/api/courses/join", json={"code": code}, headers=cy).status_code == 200
    assert (user("cy").student_id, user("cy").student_id_source) == ("C3", IdSource.SSO)
