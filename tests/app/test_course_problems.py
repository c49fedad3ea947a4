"""A course's own problems: seen by that course's members and admins alone, written in the
browser by its instructors, published only after a passing check, assigned in that course
only. One app (and one database) per module: each test makes its own accounts."""

from __future__ import annotations

import html
import itertools
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from httpx2 import Response
from sqlalchemy import select

from app.core.config import settings
from app.core.db import engine, session_scope
from app.data import accounts, assignments, catalog, course_problems, courses, members
from app.errors import NotFoundError
from app.grading.worker import EmbeddedWorkers
from app.models import Course, ProblemVersion, Regrade, RegradeItem, User
from app.vocabulary import CheckStatus, MemberRole, RegradeStatus
from grader.problems import snapshot
from grader.problems.problem import find_problem, load_problem
from tests.app.conftest import BANK_SLUG, in_process_client, run_queued_check, sign_in, token_for

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


def editor_form(page: str) -> tuple[list[str], list[str]]:
    """The editor's file names and texts, as its form would post them back."""
    names = re.findall(r'<input name="name" value="([^"]*)"', page)
    texts = [
        html.unescape(t)
        for t in re.findall(r"<textarea name=\"text\"[^>]*>(.*?)</textarea>", page, re.S)
    ]
    return [html.unescape(n) for n in names], texts


def post_files(
    client: TestClient, csrf: str, path: str, version: int, files: list[tuple[str, str]]
) -> Response:
    data = {
        "csrf_token": csrf,
        "version": str(version),
        "name": [n for n, _ in files],
        "text": [t for _, t in files],
    }
    return client.post(path, data=data)


@pytest.fixture(scope="module")
def copied(site: Site) -> tuple[str, str]:
    """A course problem an instructor copied from the bank in the browser: (slug, editor)."""
    client, csrf = signed_in_as(site, MemberRole.INSTRUCTOR)
    made = client.post(
        f"/courses/{site.course_id}/authoring/new",
        data={"csrf_token": csrf, "name": "my-scan", "copy_of": BANK_SLUG},
    )
    assert made.status_code == 200, made.text
    slug = course_problems.course_slug(site.course_id, "my-scan")
    return slug, f"/courses/{site.course_id}/authoring/{slug}"


def instructor(site: Site) -> tuple[TestClient, str]:
    return signed_in_as(site, MemberRole.INSTRUCTOR)


def test_an_instructor_copies_a_bank_problem_and_edits_it(
    site: Site, copied: tuple[str, str]
) -> None:
    slug, editor = copied
    client, csrf = instructor(site)
    page = client.get(editor).text
    names, texts = editor_form(page)
    assert names[:5] == ["statement.md", "starter.py", "reference.py", "cases.py", "problem.toml"]
    assert "mistakes/used_bias.py" in names and names[-1] == ""  # the empty pair adds a file
    with session_scope() as session:
        assert [v.number for v in catalog.versions(session=session, slug=slug)] == [1]
        assert catalog.live_version(session=session, slug=slug) is None  # unchecked: not live
    statement = texts[0] + "\nA sentence only version 2 has.\n"
    files = list(zip(names, [statement, *texts[1:]], strict=True))
    files = [(n, t) for n, t in files if n not in ("", "mistakes/used_bias.py")]  # removed
    files.append(("mistakes/renamed_bias.py", texts[names.index("mistakes/used_bias.py")]))
    saved = post_files(client, csrf, editor, 1, files)
    assert saved.status_code == 200 and "v2" in saved.text
    with session_scope() as session:
        version = catalog.versions(session=session, slug=slug)[0]
        stored = snapshot.decode(version.files_json)
        assert version.number == 2 and version.check_status == CheckStatus.UNCHECKED
        assert b"only version 2 has" in stored[f"problems/{slug}/statement.md"]
        assert f"problems/{slug}/mistakes/renamed_bias.py" in stored
        assert f"problems/{slug}/mistakes/used_bias.py" not in stored
        assert f"reference_solutions/{slug}.py" in stored
    again = post_files(
        client, csrf, editor, 2, list(zip(*editor_form(client.get(editor).text), strict=True))
    )
    assert again.status_code == 200
    with session_scope() as session:  # the same files: no new version
        assert len(catalog.versions(session=session, slug=slug)) == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("problem.toml", "title = 3\n"), "problem.toml"),
        (("cases.py", "def cases(seed:\n"), "cases.py line 1: syntax error"),
        (("../outside.py", "x = 1\n"), "is not a file name here"),
        (("statement.md", "x" * (200 * 1024)), "the limit for one file is 128 KiB"),
    ],
)
def test_an_invalid_save_shows_why_and_stores_nothing(
    site: Site, copied: tuple[str, str], change: tuple[str, str], message: str
) -> None:
    slug, editor = copied
    client, csrf = instructor(site)
    with session_scope() as session:
        before = len(catalog.versions(session=session, slug=slug))
    names, texts = editor_form(client.get(editor).text)
    files = [(n, change[1] if n == change[0] else t) for n, t in zip(names, texts, strict=True)]
    if change[0] not in names:
        files.append(change)
    refused = post_files(client, csrf, editor, before, files)
    assert refused.status_code == 400 and "Nothing was saved" in refused.text
    assert message in html.unescape(refused.text), refused.text[:3000]
    with session_scope() as session:
        assert len(catalog.versions(session=session, slug=slug)) == before


def test_the_statement_preview_renders_markdown_with_math(site: Site) -> None:
    client, csrf = instructor(site)
    shown = client.post(
        f"/courses/{site.course_id}/authoring/statement-preview",
        data={"csrf_token": csrf, "text": "# Title\n\n$x^2$ and **bold**"},
    )
    assert shown.status_code == 200 and "<h1>Title</h1>" in shown.text
    assert "<strong>bold</strong>" in shown.text and "<math" in shown.text


def test_publish_is_refused_before_a_passing_check(site: Site, copied: tuple[str, str]) -> None:
    slug, editor = copied
    client, csrf = instructor(site)
    refused = client.post(f"{editor}/versions/1/publish", data={"csrf_token": csrf})
    assert refused.status_code == 409 and "has not passed its check" in refused.text
    with session_scope() as session:
        assert catalog.live_version(session=session, slug=slug) is None
    assign = client.post(
        f"/courses/{site.course_id}/assignments", data={"csrf_token": csrf, "problem": slug}
    )
    assert assign.status_code == 404  # not published: not assignable


@pytest.mark.parametrize("who", ["ta", "learner", "other instructor", "stranger"])
def test_only_the_course_instructors_edit(site: Site, copied: tuple[str, str], who: str) -> None:
    slug, editor = copied
    role = {"ta": MemberRole.TEACHING_ASSISTANT, "learner": MemberRole.LEARNER}.get(who)
    if who == "other instructor":
        client, csrf = signed_in_as(site, MemberRole.INSTRUCTOR, site.other_course_id)
    else:
        client, csrf = signed_in_as(site, role, account="instructor")
    expected = 403 if role is not None else 404  # members know the course; others do not
    assert client.get(editor).status_code == expected
    assert client.get(f"/courses/{site.course_id}/authoring").status_code == expected
    posted = post_files(client, csrf, editor, 1, [("statement.md", "hijacked")])
    assert posted.status_code == expected
    assert (
        client.post(f"{editor}/versions/1/check", data={"csrf_token": csrf}).status_code == expected
    )
    if who == "other instructor":  # their own course's editor does not reach this problem
        theirs = f"/courses/{site.other_course_id}/authoring/{slug}"
        assert client.get(theirs).status_code == 404


def test_a_requested_check_waits_for_a_worker_and_the_pages_say_so(site: Site) -> None:
    client, csrf = instructor(site)
    editor = f"/courses/{site.course_id}/authoring/{site.slug}"
    started = client.post(f"{editor}/versions/1/check", data={"csrf_token": csrf})
    try:
        assert 'data-status="queued"' in started.text
        assert "no worker is running now" in started.text  # this app runs none
        assert "Check again" not in started.text  # queued: not asked twice
        progress = client.get(f"{editor}/versions/1/check").json()
        assert (progress["status"], progress["no_worker"]) == ("queued", True)
        listed = client.get(f"/courses/{site.course_id}/authoring").text
        assert "waits for a grading worker" in listed
    finally:
        with session_scope() as session:  # the module's published version, as it was
            version = catalog.version_by_number(session=session, slug=site.slug, number=1)
            assert version is not None
            version.check_status = CheckStatus.PASSED


def wait_for_check(slug: str, number: int, timeout: float = 600.0) -> ProblemVersion:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with session_scope() as session:
            version = catalog.version_by_number(session=session, slug=slug, number=number)
            assert version is not None
            if version.check_status != CheckStatus.RUNNING:
                session.expunge(version)
                return version
        time.sleep(0.5)
    raise AssertionError("the check did not finish")


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_new_problem_is_checked_published_assigned_solved_and_regraded(site: Site) -> None:
    """This module's real checks (the scaffold, the smallest problem): its progress lines
    stored and served as they come, then publish, assign, a learner's submit graded
    against it, and a regrade onto a new version, checked too, graded from what its
    check kept."""
    client, csrf = instructor(site)
    made = client.post(
        f"/courses/{site.course_id}/authoring/new", data={"csrf_token": csrf, "name": "tiny"}
    )
    assert made.status_code == 200 and "TODO(jaxjudge new)" in made.text
    slug = course_problems.course_slug(site.course_id, "tiny")
    editor = f"/courses/{site.course_id}/authoring/{slug}"
    started = client.post(f"{editor}/versions/1/check", data={"csrf_token": csrf})
    assert started.status_code == 200 and 'data-status="queued"' in started.text
    run_queued_check(wait_for_check(slug, 1).id)  # as a worker would, once nothing else waits
    version = wait_for_check(slug, 1)
    assert version.check_status == CheckStatus.PASSED, version.check_json
    progress = client.get(f"{editor}/versions/1/check").json()
    assert progress["status"] == "passed" and len(progress["lines"]) >= 3
    assert progress["lines"] == version.check_log.splitlines()
    assert version.check_log in html.unescape(client.get(editor).text)  # shown in the editor
    preview = client.get(f"{editor}/versions/1/preview").text
    assert (
        "<summary>sample</summary>" in preview
        and "<th>expected <code>result</code></th>" in preview
    )

    assert client.post(f"{editor}/versions/1/publish", data={"csrf_token": csrf}).status_code == 200
    course_page = client.get(f"/courses/{site.course_id}").text
    assert f'<option value="{slug}"' in course_page  # beside the bank's in the assign form
    assigned = client.post(
        f"/courses/{site.course_id}/assignments", data={"csrf_token": csrf, "problem": slug}
    )
    assert assigned.status_code == 200

    name = f"solver{next(_names)}"
    headers = token_for(name)
    with session_scope() as session:
        solver = accounts.user_by_name(session=session, name=name)
        assert solver is not None
        session.expunge(solver)
    join(solver, site.course_id, MemberRole.LEARNER)
    reference = "def solve(x, scale):\n    return x * scale\n"
    submitted = client.post(
        "/api/submissions", headers=headers, json={"problem": slug, "code": reference}
    )
    assert submitted.status_code == 202
    workers = EmbeddedWorkers(threads=1)
    try:
        # The worker takes the oldest waiting work first: the module's other submissions
        # (or a regrade item) may come before this one.
        for _ in range(20):
            assert workers.work_once("test")
            graded = client.get(
                f"/api/submissions/{submitted.json()['id']}", headers=headers
            ).json()
            if graded["status"] not in ("queued", "running"):
                break
        assert graded["verdict"] == "accepted", graded

        # A new version: learners keep v1 until it is published and a regrade moves them.
        names, texts = editor_form(client.get(editor).text)
        files = [
            (n, t + "\nMore.\n" if n == "statement.md" else t)
            for n, t in zip(names, texts, strict=True)
        ]
        assert post_files(client, csrf, editor, 1, files).status_code == 200
        with session_scope() as session:
            v2 = catalog.version_by_number(session=session, slug=slug, number=2)
            assert v2 is not None and catalog.live_version(session=session, slug=slug).number == 1  # type: ignore[union-attr]
        # Its own real check: a version is graded only from what its check kept (without
        # one, the regrade's verdicts are the clear "run the check again" error).
        assert (
            client.post(f"{editor}/versions/2/check", data={"csrf_token": csrf}).status_code == 200
        )
        run_queued_check(wait_for_check(slug, 2).id)
        assert wait_for_check(slug, 2).check_status == CheckStatus.PASSED
        regrade = client.post(
            f"/courses/{site.course_id}/problems/{slug}/regrades",
            data={"csrf_token": csrf, "version": "2"},
        )
        assert regrade.status_code == 200, regrade.text[:2000]
        while workers.work_once("test"):
            pass
    finally:
        workers.grader.close()
    with session_scope() as session:
        done = session.scalars(select(Regrade).where(Regrade.problem == slug)).one()
        assert done.status == RegradeStatus.READY, done.status
        regraded = session.scalars(select(RegradeItem).where(RegradeItem.regrade_id == done.id))
        assert [item.new_verdict for item in regraded] == ["accepted"]
