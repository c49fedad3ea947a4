"""A course's own problems: seen by that course's members and admins alone, written in the
browser by its instructors, published only after a passing check, assigned in that course
only. One app (and one database) per module: each test makes its own accounts."""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.config import settings
from app.core.db import engine, session_scope
from app.data import accounts, assignments, catalog, course_problems, courses, members
from app.errors import NotFoundError
from app.models import Course, User
from app.vocabulary import CheckStatus, MemberRole
from grader.problems import snapshot
from grader.problems.problem import find_problem, load_problem
from tests.app.conftest import BANK_SLUG, in_process_client, sign_in, token_for

PASSWORD = "long test password"
_names = itertools.count()


@dataclass
class Site:
    client: TestClient
    course_id: int
    other_course_id: int
    slug: str  # a published problem of course ``course_id``


def bank_copy(slug: str) -> dict[str, bytes]:
    """The bank problem's files renamed to ``slug``."""
    folder = find_problem(BANK_SLUG)
    assert folder is not None
    return course_problems.renamed(snapshot.take(load_problem(folder)), BANK_SLUG, slug)


def person(role: str = "learner") -> tuple[str, User]:
    name = f"person{next(_names)}"
    with session_scope() as session:
        user = accounts.create_user(session=session, name=name, password=PASSWORD, role=role)
        session.expunge(user)
    return name, user


def join(user: User, course_id: int, role: MemberRole) -> None:
    with session_scope() as session:
        course = session.get_one(Course, course_id)
        members.add(session=session, course=course, user=session.get_one(User, user.id), role=role)


@pytest.fixture(scope="module")
def site(migrated_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    database = tmp_path_factory.mktemp("course-problems") / "test.db"
    shutil.copyfile(migrated_template, database)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(settings, "database_url", f"sqlite:///{database}")
        _name, teacher = person("instructor")
        with session_scope() as session:
            owner = session.get_one(User, teacher.id)
            course = courses.create_course(session=session, name="Ours", instructor=owner)
            other = courses.create_course(session=session, name="Theirs", instructor=owner)
            session.flush()
            slug = course_problems.course_slug(course.id, "scan-copy")
            version, _created = course_problems.record_version(
                session=session, course_id=course.id, slug=slug, files=bank_copy(slug), author=owner
            )
            version.check_status = CheckStatus.PASSED  # proven elsewhere (the slow test)
            catalog.publish(session=session, version=version)
            found = Site(client=None, course_id=course.id, other_course_id=other.id, slug=slug)  # type: ignore[arg-type]
        with in_process_client() as client:
            found.client = client
            yield found
        engine().dispose()


def signed_in_as(
    site: Site, role: MemberRole | None, course_id: int | None = None, account: str = "learner"
) -> tuple[TestClient, str]:
    """The module's client signed in as a new account (a member with ``role`` of
    ``course_id``, the site's course by default), and its CSRF token."""
    name, user = person(account)
    if role is not None:
        join(user, course_id or site.course_id, role)
    site.client.cookies.clear()
    return site.client, sign_in(site.client, name)


def learner_routes(slug: str) -> list[tuple[str, str]]:
    return [
        ("GET", f"/problems/{slug}"),
        ("GET", f"/problems/{slug}/history"),
        ("GET", f"/problems/{slug}/track-progress"),
        ("GET", f"/problems/{slug}/walkthrough"),
    ]


def test_members_of_the_course_see_its_problem(site: Site) -> None:
    client, _csrf = signed_in_as(site, MemberRole.LEARNER)
    page = client.get(f"/problems/{site.slug}")
    assert page.status_code == 200 and "Micro-batched gradients" in page.text
    assert client.get(f"/problems/{site.slug}/history").status_code == 200


@pytest.mark.parametrize("who", ["other course's learner", "stranger", "anonymous"])
def test_everyone_else_gets_404_on_every_route(site: Site, who: str) -> None:
    if who == "anonymous":
        site.client.cookies.clear()
        client = site.client
        for _method, path in learner_routes(site.slug):
            assert client.get(path, follow_redirects=False).status_code in (303, 401)
        return
    course = site.other_course_id if who == "other course's learner" else None
    client, csrf = signed_in_as(site, MemberRole.LEARNER if course else None, course)
    for method, path in learner_routes(site.slug):
        answer = client.request(method, path)
        assert answer.status_code == 404, (path, answer.status_code)
        assert "Micro-batched" not in answer.text
    marked = client.post(f"/problems/{site.slug}/complete", data={"csrf_token": csrf})
    assert marked.status_code == 404


@pytest.mark.parametrize("member", [True, False])
def test_the_api_hides_it_outside_the_course(site: Site, member: bool) -> None:
    name = f"api{next(_names)}"
    headers = token_for(name)
    if member:
        with session_scope() as session:
            user = accounts.user_by_name(session=session, name=name)
            assert user is not None
            session.expunge(user)
        join(user, site.course_id, MemberRole.LEARNER)
    client = site.client
    listed = [p["slug"] for p in client.get("/api/problems", headers=headers).json()["data"]]
    assert site.slug not in listed and BANK_SLUG in listed  # the global list: the bank only
    hints = client.post(f"/api/problems/{site.slug}/hints", headers=headers)
    marked = client.put(f"/api/problems/{site.slug}/complete", headers=headers)
    submitted = client.post(
        "/api/submissions", headers=headers, json={"problem": site.slug, "code": "x = 1"}
    )
    expected = (200, 204, 202) if member else (404, 404, 404)
    assert (hints.status_code, marked.status_code, submitted.status_code) == expected


def test_the_global_listings_never_show_it(site: Site) -> None:
    client, _csrf = signed_in_as(site, MemberRole.LEARNER)
    assert site.slug not in client.get("/").text  # even for a member: the bank's list
    with session_scope() as session:
        assert site.slug not in {p.slug for p in catalog.live_problem_list(session=session)}
        assert site.slug not in {p.slug for _v, p in catalog.live_problems(session=session)}
        own = catalog.live_problems(session=session, course_id=site.course_id)
        assert site.slug in {p.slug for _v, p in own}
        other = catalog.live_problems(session=session, course_id=site.other_course_id)
        assert site.slug not in {p.slug for _v, p in other}


def test_the_bank_authoring_pages_do_not_hold_it(site: Site) -> None:
    client, _csrf = signed_in_as(site, None, account="admin")
    assert site.slug not in client.get("/author").text
    assert client.get(f"/author/problems/{site.slug}").status_code == 404
    assert client.get(f"/problems/{site.slug}").status_code == 200  # admins see every course's


def test_it_is_assigned_in_its_own_course_only(site: Site) -> None:
    with session_scope() as session:
        other = session.get_one(Course, site.other_course_id)
        with pytest.raises(NotFoundError, match="Unknown problem"):
            assignments.assign(session=session, course=other, problem=site.slug)
