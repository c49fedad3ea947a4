"""Who may call what: every route of the app, read from its router table, against
every kind of caller, compared with the decision written down here.

A route missing from ``DECISIONS`` fails the test, so no route is added without
deciding who may call it. Outcomes are classes, not exact codes: ``login`` (401,
or a redirect to the sign-in page), ``forbidden`` (403), ``hidden`` (404: the
thing does not exist for this caller), ``ok`` (anything else below 500: the
request got past authorization; a 400 for a wrong password still counts). No
request may answer 500.
"""

from __future__ import annotations

import json
import secrets
from base64 import b64encode
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import itsdangerous
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import delete

from app.core.db import session_scope
from app.core.sessions import secret_key
from app.data import accounts, api_tokens, assignments, catalog, courses, members, web_sessions
from app.grading import author_checks
from app.lti import platforms as lti_platforms
from app.models import (
    Course,
    Extension,
    Regrade,
    RubricItem,
    SimilarityReport,
    Submission,
    User,
)
from app.reports import similarity_runs
from app.server.main import create_app
from app.vocabulary import MemberRole
from app.web import client_download
from tests.app.conftest import BANK_SLUG

PASSWORD = "long test password"
CALLERS = (
    "anonymous",
    "learner",
    "ta",
    "author",
    "instructor",
    "other_instructor",
    "admin",
    "disabled",
    "revoked",
)
SIGNED_OUT = {"anonymous": "login", "disabled": "login", "revoked": "login"}
ACTIVE = ("learner", "ta", "author", "instructor", "other_instructor", "admin")


def everyone(outcome: str = "ok") -> dict[str, str]:
    return dict.fromkeys(CALLERS, outcome)


def signed_in(**exceptions: str) -> dict[str, str]:
    """Any active account; the signed-out get the sign-in page."""
    return {**SIGNED_OUT, **dict.fromkeys(ACTIVE, "ok"), **exceptions}


def only(*allowed: str, others: str = "forbidden", **exceptions: str) -> dict[str, str]:
    decided = {caller: "ok" if caller in allowed else others for caller in ACTIVE}
    return {**SIGNED_OUT, **decided, **exceptions}


# The course's instructor may; its teaching assistant and learner may not (403); for
# anyone outside the course it does not exist (404).
COURSE_INSTRUCTORS = only("instructor", others="hidden", learner="forbidden", ta="forbidden")
# Its staff (instructors and teaching assistants) may; its learner may not.
COURSE_STAFF = only("instructor", "ta", others="hidden", learner="forbidden")
COURSE_MEMBERS = only("instructor", "ta", "learner", others="hidden")
AUTHORS = only("author", "instructor", "other_instructor", "admin")  # by role, any course

DECISIONS: dict[str, dict[str, str]] = {
    "GET /openapi.json": everyone(),
    "GET /docs": everyone(),
    "GET /healthz": everyone(),
    # The light client's wheel: no secret in it, installed before signing in.
    f"GET {client_download.PATH}": everyone(),
    "GET /readyz": everyone(),
    # No account reads it: a token of its own, or a scrape from this machine
    # (the test client is neither; tests/app/test_metrics.py).
    "GET /metrics": everyone("forbidden"),
    "GET /assets/highlight.css": everyone(),
    "GET /assets/verdicts.css": everyone(),
    "GET /static": everyone(),
    "GET /login": everyone(),
    "POST /login": everyone(),
    "GET /signup": everyone(),
    "POST /signup": everyone(),
    "POST /logout": everyone(),
    # OpenID Connect: no provider is configured here, so every name is unknown (404);
    # linking needs a signed-in form; the state in the callback is its only authority.
    "GET /sso/oidc/{name}/start": everyone("hidden"),
    "GET /sso/oidc/{name}/callback": everyone("hidden"),
    "POST /sso/oidc/{name}/link": only(others="hidden"),
    # SAML: no IdP is configured here either. The metadata is public (an IdP reads it);
    # the ACS takes the IdP's cross-site POST with no cookie (its signed answer and the
    # pending request are its authority: an empty one is a 400 page for anyone); the
    # linked step's signed token is its authority (none here: a 400 page).
    "GET /sso/saml/metadata": everyone(),
    "GET /sso/saml/{name}/start": everyone("hidden"),
    "POST /sso/saml/{name}/link": only(others="hidden"),
    "POST /sso/saml/acs": everyone(),
    "GET /sso/saml/linked": everyone(),
    # Identity 1 is nobody's here: "not linked to your account".
    "POST /account/identities/{identity_id}/unlink": only(),
    # Forgotten passwords and email links: the token in the link is the authority.
    "GET /password/forgot": everyone(),
    "POST /password/forgot": everyone(),
    "GET /password/reset/{token}": everyone(),
    "GET /password/reset": everyone(),
    "POST /password/reset": everyone(),
    "GET /email/verify/{token}": everyone(),
    "POST /email/verify/{token}": everyone(),
    "POST /account/email/verify": signed_in(),
    "GET /admin/mail": only("admin"),
    # Only a failed mail is resent: mail 1 is none, so the admin's answer is 404.
    "POST /admin/mail/{mail_id}/resend": only("admin", admin="hidden"),
    "POST /admin/reset-links": only("admin"),
    "GET /api/problems": signed_in(),
    "POST /api/problems/{slug}/hints": signed_in(),
    "PUT /api/problems/{slug}/complete": signed_in(),
    "DELETE /api/problems/{slug}/complete": signed_in(),
    "GET /api/tracks": signed_in(),
    "POST /api/submissions": signed_in(),
    # A notebook upload (multipart; these calls send none: 422 past the guards).
    "POST /api/submissions/notebook": signed_in(),
    "POST /api/courses/{course_id}/notebook-submissions": COURSE_MEMBERS,
    "GET /api/submissions/{submission_id}": only("learner", others="hidden"),
    "GET /api/submissions/{submission_id}/events": only("learner", others="hidden"),
    "GET /api/tokens": signed_in(),
    # Only a signed-in browser makes a token; every caller here sends one (issue 37).
    "POST /api/tokens": only(),
    "DELETE /api/tokens/{token_id}": only("learner", others="hidden"),
    "GET /api/courses": signed_in(),
    "POST /api/courses": only("instructor", "other_instructor", "admin"),
    "POST /api/courses/join": signed_in(),
    "GET /api/courses/{course_id}": COURSE_MEMBERS,
    "GET /api/courses/{course_id}/members": COURSE_STAFF,
    "PUT /api/courses/{course_id}/assignments": COURSE_INSTRUCTORS,
    "GET /api/courses/{course_id}/grades": COURSE_STAFF,
    "GET /api/courses/{course_id}/grades.csv": COURSE_STAFF,
    "GET /api/courses/{course_id}/grades-ids.csv": COURSE_STAFF,
    "GET /api/courses/{course_id}/submissions.csv": COURSE_STAFF,
    "GET /api/courses/{course_id}/learners/{learner_id}/timeline": COURSE_STAFF,
    "DELETE /api/courses/{course_id}": COURSE_INSTRUCTORS,
    "DELETE /api/courses/{course_id}/assignments/{slug}": COURSE_INSTRUCTORS,
    "GET /api/courses/{course_id}/overrides.csv": COURSE_STAFF,
    "POST /api/courses/{course_id}/members": COURSE_INSTRUCTORS,
    "DELETE /api/courses/{course_id}/members/{user_id}": COURSE_INSTRUCTORS,
    "PATCH /api/courses/{course_id}/members/{user_id}": COURSE_INSTRUCTORS,
    "POST /api/courses/{course_id}/student-ids": COURSE_INSTRUCTORS,
    "GET /api/courses/{course_id}/extensions": COURSE_STAFF,
    "POST /api/courses/{course_id}/extensions": COURSE_INSTRUCTORS,
    "POST /api/courses/{course_id}/extensions.csv": COURSE_INSTRUCTORS,
    "DELETE /api/courses/{course_id}/extensions/{extension_id}": COURSE_INSTRUCTORS,
    "GET /api/courses/{course_id}/submissions/{submission_id}/comments": COURSE_STAFF,
    "POST /api/courses/{course_id}/submissions/{submission_id}/comments": COURSE_STAFF,
    "PUT /api/courses/{course_id}/learners/{learner_id}/problems/{slug}/override": COURSE_STAFF,
    "GET /api/courses/{course_id}/overrides": COURSE_STAFF,
    # Rubrics: staff read them and apply their items; only instructors change the items.
    "GET /api/courses/{course_id}/assignments/{slug}/rubric": COURSE_STAFF,
    "POST /api/courses/{course_id}/assignments/{slug}/rubric": COURSE_INSTRUCTORS,
    "PATCH /api/courses/{course_id}/assignments/{slug}/rubric/{item_id}": COURSE_INSTRUCTORS,
    "DELETE /api/courses/{course_id}/assignments/{slug}/rubric/{item_id}": COURSE_INSTRUCTORS,
    "GET /api/courses/{course_id}/submissions/{submission_id}/rubric": COURSE_STAFF,
    "POST /api/courses/{course_id}/submissions/{submission_id}/rubric/{item_id}": COURSE_STAFF,
    "DELETE /api/courses/{course_id}/submissions/{submission_id}/rubric/{item_id}": COURSE_STAFF,
    "POST /api/courses/{course_id}/submissions/{submission_id}/graded": COURSE_STAFF,
    "POST /api/courses/{course_id}/problems/{slug}/similarity": COURSE_STAFF,
    "GET /api/courses/{course_id}/similarity/{report_id}": COURSE_STAFF,
    "POST /api/courses/{course_id}/problems/{slug}/regrades": COURSE_INSTRUCTORS,
    "GET /api/courses/{course_id}/regrades/{regrade_id}": COURSE_INSTRUCTORS,
    "POST /api/courses/{course_id}/regrades/{regrade_id}/apply": COURSE_INSTRUCTORS,
    "POST /api/courses/{course_id}/regrades/{regrade_id}/discard": COURSE_INSTRUCTORS,
    "GET /": signed_in(),
    "GET /problems/{slug}": signed_in(),
    "GET /problems/{slug}/history": signed_in(),
    "GET /problems/{slug}/track-progress": signed_in(),
    "POST /problems/{slug}/quiz/{question_id}": signed_in(),
    "POST /problems/{slug}/{marking}": signed_in(),
    "GET /tracks/{track}": signed_in(),
    # Unlocked by an accepted submission, which nobody here has.
    "GET /problems/{slug}/walkthrough": signed_in(**dict.fromkeys(ACTIVE, "forbidden")),
    "GET /account": signed_in(),
    "POST /account/password": signed_in(),
    "POST /account/profile": signed_in(),
    "POST /account/sessions/{session_id}/end": only("learner", others="hidden"),
    "POST /account/tokens": signed_in(),
    "POST /account/tokens/{token_id}/revoke": only("learner", others="hidden"),
    "POST /account/notifications": signed_in(),
    # The signed token in the path is what authorizes it (a mail's unsubscribe link).
    "GET /notifications/unsubscribe/{token}": everyone(),
    "POST /notifications/unsubscribe/{token}": everyone(),
    "GET /admin/users": only("admin"),
    "GET /admin/workers": only("admin"),
    "POST /admin/users/{user_id}/{action}": only("admin"),
    "GET /courses": signed_in(),
    "POST /courses": only("instructor", "other_instructor", "admin"),
    "POST /courses/join": signed_in(),
    "GET /courses/{course_id}": COURSE_MEMBERS,
    "POST /courses/{course_id}/assignments": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/notebook-submissions": COURSE_MEMBERS,
    "GET /courses/{course_id}/grades.csv": COURSE_STAFF,
    "GET /courses/{course_id}/grades-ids.csv": COURSE_STAFF,
    "GET /courses/{course_id}/submissions.csv": COURSE_STAFF,
    "GET /courses/{course_id}/overrides.csv": COURSE_STAFF,
    "POST /courses/{course_id}/assignments/{slug}/remove": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/delete": COURSE_INSTRUCTORS,
    "GET /courses/{course_id}/people": COURSE_STAFF,
    "POST /courses/{course_id}/members": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/members/{user_id}/remove": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/members/{user_id}/group": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/student-ids": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/student-id-required": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/extensions": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/extensions/upload": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/extensions/{extension_id}/remove": COURSE_INSTRUCTORS,
    # A course's problems as folders (zip, git): its instructors only. The bank's slug is
    # no problem of the course: its zip does not exist, even for the instructor.
    "GET /courses/{course_id}/problem-folders": COURSE_INSTRUCTORS,
    "GET /courses/{course_id}/problem-folders/{slug}/v{number}.zip": {
        **COURSE_INSTRUCTORS,
        "instructor": "hidden",
    },
    "POST /courses/{course_id}/problem-folders/import": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/problem-folders/repository": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/problem-folders/pull": COURSE_INSTRUCTORS,
    # A course's own problems in the browser: its instructors and platform admins (who
    # may write any course's); its teaching assistant and learner may not. The bank's
    # slug is no problem of the course: its editor does not exist, even for them.
    "GET /courses/{course_id}/authoring": {**COURSE_INSTRUCTORS, "admin": "ok"},
    "POST /courses/{course_id}/authoring/new": {**COURSE_INSTRUCTORS, "admin": "ok"},
    "POST /courses/{course_id}/authoring/statement-preview": {**COURSE_INSTRUCTORS, "admin": "ok"},
    **{
        route: {**COURSE_INSTRUCTORS, "instructor": "hidden"}
        for route in (
            "GET /courses/{course_id}/authoring/{slug}",
            "POST /courses/{course_id}/authoring/{slug}",
            "GET /courses/{course_id}/authoring/{slug}/versions/{number}/check",
            "POST /courses/{course_id}/authoring/{slug}/versions/{number}/check",
            "POST /courses/{course_id}/authoring/{slug}/versions/{number}/publish",
            "GET /courses/{course_id}/authoring/{slug}/versions/{number}/preview",
        )
    },
    # A git host's webhook: the secret is its only authority, no session admits it.
    "POST /hooks/courses/{course_id}/problems": everyone("forbidden"),
    "POST /courses/{course_id}/submissions/{submission_id}/comments": COURSE_STAFF,
    "POST /courses/{course_id}/learners/{learner_id}/problems/{slug}/override": COURSE_STAFF,
    "POST /courses/{course_id}/problems/{slug}/similarity": COURSE_STAFF,
    "GET /courses/{course_id}/assignments/{slug}/rubric": COURSE_STAFF,
    "POST /courses/{course_id}/assignments/{slug}/rubric": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/assignments/{slug}/rubric/{item_id}": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/assignments/{slug}/rubric/{item_id}/remove": COURSE_INSTRUCTORS,
    # The grading view: the course's staff grade (apply items, comment, mark graded).
    "GET /courses/{course_id}/assignments/{slug}/grading": COURSE_STAFF,
    "GET /courses/{course_id}/assignments/{slug}/grading/{submission_id}": COURSE_STAFF,
    "POST /courses/{course_id}/assignments/{slug}/grading/{submission_id}/items/{item_id}": (
        COURSE_STAFF
    ),
    "POST /courses/{course_id}/assignments/{slug}/grading/{submission_id}/comments": COURSE_STAFF,
    "POST /courses/{course_id}/assignments/{slug}/grading/{submission_id}/graded": COURSE_STAFF,
    "GET /courses/{course_id}/similarity/{report_id}": COURSE_STAFF,
    "GET /courses/{course_id}/similarity/{report_id}/pairs/{index}": COURSE_STAFF,
    "GET /courses/{course_id}/learners/{learner_id}": COURSE_STAFF,
    "GET /courses/{course_id}/problems/{slug}": COURSE_STAFF,
    "POST /courses/{course_id}/problems/{slug}/regrades": COURSE_INSTRUCTORS,
    "GET /courses/{course_id}/regrades/{regrade_id}": COURSE_INSTRUCTORS,
    "GET /courses/{course_id}/regrades/{regrade_id}/progress": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/regrades/{regrade_id}/{decision}": COURSE_INSTRUCTORS,
    "GET /author": AUTHORS,
    "GET /author/problems/{slug}": AUTHORS,
    "POST /author/problems/{slug}/versions/{number}/check": AUTHORS,
    "POST /author/problems/{slug}/versions/{number}/publish": only("author", "admin"),
    # LTI: the LMS's login and launch come from anyone's browser (the state, the nonce
    # and the signature decide); the pickers need the launch's signed-in user.
    "GET /lti/login": everyone(),
    "POST /lti/login": everyone(),
    "POST /lti/launch": everyone(),
    "GET /lti/jwks": everyone(),
    "GET /lti/canvas.json": everyone(),  # the values an LMS admin would type in
    "GET /help/{guide}": everyone(),  # the project's own guides (docs/)
    "GET /lti/register": everyone(),
    "POST /lti/register": everyone(),
    "GET /lti/deep-link": signed_in(),
    "POST /lti/deep-link": signed_in(),
    "GET /lti/link": signed_in(),
    "POST /lti/link": signed_in(),
    "GET /admin/lti": only("admin"),
    "POST /admin/lti/platforms": only("admin"),
    "POST /admin/lti/platforms/{platform_id}/remove": only("admin"),
    "POST /admin/lti/registration-link": only("admin"),
    "POST /admin/lti/rotate-key": only("admin"),
    "POST /admin/lti/resend": only("admin"),
    "GET /courses/{course_id}/lms": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/lms/roster": COURSE_INSTRUCTORS,
    "POST /courses/{course_id}/lms/resend": COURSE_INSTRUCTORS,
}


def routes(app: FastAPI) -> Iterator[tuple[str, str]]:
    """(method, path) of every route, mounted ones included, from the router table."""

    def walk(entries: list[Any]) -> Iterator[Any]:
        for route in entries:
            if hasattr(route, "original_router"):  # FastAPI's included routers
                yield from walk(route.original_router.routes)
            else:
                yield route

    for route in walk(app.routes):
        for method in sorted((getattr(route, "methods", None) or {"GET"}) - {"HEAD"}):
            yield method, route.path


@dataclass
class World:
    ids: dict[str, int]
    bearer: dict[str, str]
    sessions: Callable[[str], tuple[dict[str, str], str]]


def session_cookie(sid: str, csrf: str) -> str:
    """The browser cookie SessionMiddleware would have set (signed, base64 JSON)."""
    data = b64encode(json.dumps({"sid": sid, "csrf": csrf}).encode())
    return itsdangerous.TimestampSigner(str(secret_key())).sign(data).decode()


@pytest.fixture
def world(private_bank: object, monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.setattr(author_checks, "request_check", lambda *args, **kwargs: None)  # no JAX here
    monkeypatch.setattr(similarity_runs, "launch", lambda report_id: None)  # no thread either
    ids: dict[str, int] = {}
    bearer: dict[str, str] = {}
    with session_scope() as session:
        users: dict[str, User] = {}
        for caller, role in [
            ("learner", "learner"), ("author", "author"), ("instructor", "instructor"),
            ("other_instructor", "instructor"), ("admin", "admin"), ("disabled", "learner"),
            ("ta", "learner"),
            ("revoked", "learner"), ("victim", "learner"),
        ]:  # fmt: skip
            users[caller] = accounts.create_user(
                session=session, name=caller.replace("_", "-"), password=PASSWORD, role=role
            )
            bearer[caller] = api_tokens.create(session=session, user=users[caller])[0]
        course = courses.create_course(session=session, name="C", instructor=users["instructor"])
        courses.create_course(session=session, name="C2", instructor=users["other_instructor"])
        assignments.assign(session=session, course=course, problem=BANK_SLUG, due_at=None)
        courses.join_course(
            session=session, code=course.join_code, user=users["learner"], address="test"
        )
        members.add(
            session=session, course=course, user=users["ta"], role=MemberRole.TEACHING_ASSISTANT
        )
        submission = Submission(user_id=users["learner"].id, problem=BANK_SLUG, code="x",
                                mode="submit", status="done", verdict="wrong_answer", score=0.0,
                                problem_version_id=catalog.live_version(session=session, slug=BANK_SLUG).id)  # type: ignore[union-attr]  # fmt: skip
        session.add(submission)
        session.flush()
        regrade = Regrade(course_id=course.id, problem=BANK_SLUG, version_id=submission.problem_version_id or 0, created_by=users["instructor"].id)  # fmt: skip
        session.add(regrade)
        session.flush()
        report = SimilarityReport(
            course_id=course.id, problem=BANK_SLUG, scope="accepted", status="ready",
            pairs_json=json.dumps([{
                "left_submission": submission.id, "right_submission": submission.id,
                "left_learner": "learner", "right_learner": "learner", "similarity": 1.0,
                "jaccard": 1.0, "left_lines": [[1, 1]], "right_lines": [[1, 1]],
            }]),
        )  # fmt: skip
        session.add(report)
        session.flush()
        spare_token = api_tokens.create(session=session, user=users["learner"])[1]
        page_token = api_tokens.create(session=session, user=users["learner"])[1]
        spare_session = web_sessions.start(session=session, user=users["learner"])
        ids |= {
            "course_id": course.id,
            "learner_id": users["learner"].id,
            "submission_id": submission.id,
            "regrade_id": regrade.id,
            "report_id": report.id,
            "token_id": spare_token.id,
            "page_token_id": page_token.id,
            "user_id": users["victim"].id,
            "session_id": web_sessions.find(session=session, sid=spare_session)[1].id,  # type: ignore[index]
        }
        accounts.set_disabled(session=session, user=users["disabled"], disabled=True)
        revoked = api_tokens.of_user(session=session, user=users["revoked"])[0]
        api_tokens.revoke(session=session, user=users["revoked"], token_id=revoked.id)
        names = {caller: user.id for caller, user in users.items()}
        ids["platform_id"] = lti_platforms.add(
            session=session,
            platform=lti_platforms.PlatformIn(
                issuer="https://lms.example", client_id="jaxjudge",
                auth_login_url="https://lms.example/auth", token_url="https://lms.example/token",
                jwks_url="https://lms.example/jwks", deployment_ids=("1",),
            ),
        ).id  # fmt: skip

    def sessions(caller: str) -> tuple[dict[str, str], str]:
        """A fresh browser session for the caller: its cookie and its CSRF token."""
        csrf = secrets.token_urlsafe(16)
        if caller == "anonymous":
            return {"jaxjudge_session": session_cookie("", csrf)}, csrf
        with session_scope() as session:
            sid = web_sessions.start(session=session, user=session.get_one(User, names[caller]))
            if caller == "revoked":
                web_sessions.end(session=session, sid=sid)  # a cookie copied before sign-out
        return {"jaxjudge_session": session_cookie(sid, csrf)}, csrf

    return World(ids, bearer, sessions)


PARAMS = {
    "slug": BANK_SLUG,
    "number": "1",
    "action": "enable",
    "marking": "complete",
    "decision": "discard",
    "question_id": "why-scan",
    "track": "gradient-accumulation",
    "index": "0",
    "token": "not-a-signed-token",  # refused with a page (400): still past authorization
    "mail_id": "1",
    "name": "uni",
    "identity_id": "1",
    "guide": "lti",
}
FORMS = {
    "POST /login": {"name": "nobody", "password": "wrong password"},
    "POST /signup": {"name": "x", "password": "short"},
    "POST /account/password": {"current": "not it", "new": "whatever long enough"},
    "POST /courses": {"name": "New course"},
    "POST /courses/join": {"code": "NOCODE00"},
    "POST /problems/{slug}/quiz/{question_id}": {"choice": "0"},
    "POST /courses/{course_id}/assignments": {"problem": BANK_SLUG},
    "POST /courses/{course_id}/problems/{slug}/regrades": {"version": "1"},
    "POST /courses/{course_id}/authoring/{slug}": {"version": "1"},
    "POST /courses/{course_id}/members": {"user": "victim"},
    "POST /courses/{course_id}/extensions": {"problem": BANK_SLUG, "due": "2030-01-01T00:00"},
    "POST /courses/{course_id}/submissions/{submission_id}/comments": {"body": "Nice."},
    "POST /courses/{course_id}/assignments/{slug}/rubric": {"points": "1", "description": "x"},
    "POST /courses/{course_id}/assignments/{slug}/grading/{submission_id}/items/{item_id}": {
        "applied": "yes"
    },
    "POST /courses/{course_id}/assignments/{slug}/grading/{submission_id}/comments": {
        "body": "Nice.",
        "line_start": "1",
    },
    "POST /courses/{course_id}/assignments/{slug}/rubric/{item_id}": {
        "points": "2",
        "description": "y",
    },
    "POST /courses/{course_id}/learners/{learner_id}/problems/{slug}/override": {
        "points": "5",
        "reason": "checked by hand",
    },
    "POST /account/profile": {"display_name": "Someone"},
    "POST /admin/reset-links": {"user_id": "1"},
    "POST /lti/link": {"problem": BANK_SLUG},
    "POST /lti/register": {"invitation": "not-one", "openid_configuration": "http://127.0.0.1:9/"},
    "POST /admin/lti/platforms": {
        "issuer": "https://lms.example",
        "client_id": "c",
        "auth_login_url": "https://lms.example/a",
        "token_url": "https://lms.example/t",
        "jwks_url": "https://lms.example/k",
    },
}
JSON = {
    "POST /api/submissions": {"problem": BANK_SLUG, "code": "x", "mode": "run"},
    "POST /api/tokens": {"name": "t"},
    "POST /api/courses": {"name": "New course"},
    "POST /api/courses/join": {"code": "NOCODE00"},
    "PUT /api/courses/{course_id}/assignments": {"problem": BANK_SLUG},
    "POST /api/courses/{course_id}/problems/{slug}/regrades": {"version": 1},
    "POST /api/courses/{course_id}/members": {"user": "victim"},
    "PATCH /api/courses/{course_id}/members/{user_id}": {"group": "A"},
    "POST /api/courses/{course_id}/extensions": {"data": []},
    "POST /api/courses/{course_id}/submissions/{submission_id}/comments": {"body": "Nice."},
    "PUT /api/courses/{course_id}/learners/{learner_id}/problems/{slug}/override": {
        "points": None,
        "reason": "back to computed",
    },
    "POST /api/courses/{course_id}/problems/{slug}/similarity": {"scope": "accepted"},
    "POST /api/courses/{course_id}/assignments/{slug}/rubric": {"points": 1, "description": "x"},
    "PATCH /api/courses/{course_id}/assignments/{slug}/rubric/{item_id}": {"points": 2},
}
FILES = {
    "POST /courses/{course_id}/student-ids": "user,student_id\nlearner,S1\n",
    "POST /courses/{course_id}/extensions/upload": "user,problem,due_at\n",
}


def fresh_target(world: World, key: str) -> dict[str, str]:
    """Routes that remove what they name get a new one at each call: a member to
    remove, an extension to take back, the problem (assigned again) to unassign."""
    with session_scope() as session:
        course = session.get_one(Course, world.ids["course_id"])
        if "/members/{user_id}" in key:
            user = accounts.create_user(
                session=session, name=f"m{secrets.token_hex(4)}", password=PASSWORD
            )
            members.add(session=session, course=course, user=user, role=MemberRole.LEARNER)
            return {"user_id": str(user.id)}
        if "/extensions/{extension_id}" in key:  # one per learner: the last caller's goes
            session.execute(delete(Extension).where(Extension.course_id == course.id))
            extension = Extension(course_id=course.id, problem=BANK_SLUG,
                                  user_id=world.ids["learner_id"], due_at=datetime(2030, 1, 1))  # fmt: skip
            session.add(extension)
            session.flush()
            return {"extension_id": str(extension.id)}
        if "{item_id}" in key:  # a rubric item of its own, on the (re)assigned problem
            assignment = assignments.assign(session=session, course=course, problem=BANK_SLUG)
            item = RubricItem(assignment_id=assignment.id, points=1.0, description="fresh")
            session.add(item)
            session.flush()
            return {"item_id": str(item.id)}
        if "/assignments/{slug}" in key:
            assignments.assign(session=session, course=course, problem=BANK_SLUG)
    return {}


def outcome(status: int, location: str) -> str:
    if status == 401 or (status in (302, 303) and location.startswith("/login?")):
        return "login"
    return {403: "forbidden", 404: "hidden"}.get(status, "ok")


def call(client: TestClient, world: World, caller: str, method: str, path: str) -> Any:
    key = f"{method} {path}"
    values = {**PARAMS, **{k: str(v) for k, v in world.ids.items()}, **fresh_target(world, key)}
    if not key.startswith(("GET /api/", "POST /api/", "PUT /api/", "DELETE /api/")):
        values["token_id"] = values["page_token_id"]  # each revoking route gets its own token
    url = path.format(**values)
    if url == "/static":
        url = "/static/style.css"
    headers: dict[str, str] = {}
    if url.startswith("/api/"):
        if caller != "anonymous":
            headers["Authorization"] = f"Bearer {world.bearer[caller]}"
        return client.request(
            method, url, headers=headers, json=JSON.get(key), follow_redirects=False
        )
    cookies, csrf = world.sessions(caller)
    client.cookies.clear()
    client.cookies.update(cookies)
    data = {**FORMS.get(key, {}), "csrf_token": csrf} if method == "POST" else None
    files = {"file": ("upload.csv", FILES[key], "text/csv")} if key in FILES else None
    return client.request(method, url, data=data, files=files, follow_redirects=False)


def test_every_route_has_a_decision(world: World) -> None:
    app = create_app(workers=0, prepare=False)
    found = {f"{method} {path}" for method, path in routes(app)}
    assert found - set(DECISIONS) == set(), "routes nobody decided about"
    assert set(DECISIONS) - found == set(), "decisions for routes that no longer exist"


@pytest.mark.slow  # about 20 s on 2 cores: every route for every role
def test_every_caller_gets_the_decided_outcome_on_every_route(world: World) -> None:
    app = create_app(workers=0, prepare=False)
    wrong = []
    with TestClient(app) as client:
        for method, path in routes(app):
            for caller in CALLERS:
                answer = call(client, world, caller, method, path)
                got = outcome(answer.status_code, answer.headers.get("location", ""))
                want = DECISIONS[f"{method} {path}"][caller]
                broken = answer.status_code >= 500 and not (
                    path == "/readyz" and answer.status_code == 503  # "not ready" is its answer
                )
                if broken or got != want:
                    wrong.append(
                        f"{method} {path} as {caller}: {answer.status_code} ({got}), want {want}"
                    )
    assert wrong == [], "\n".join(wrong)
