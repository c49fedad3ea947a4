"""What a course problem's passing check produced is kept with its version
(app/data/check_products.py): a worker with none of it in its caches grades from the
stored products without running the author's cases.py; on a runtime the check did not
run on, the expected outputs are derived and kept as a product of their own; and a
deleted course leaves its problems' versions and products to its learners' submissions."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from app.core.db import session_scope
from app.data import accounts, catalog, check_products, course_problems, courses
from app.grading.worker import EmbeddedWorkers
from app.models import Course, ProblemRecord, ProblemVersion, ProblemVersionProduct, User
from app.vocabulary import CheckStatus, MemberRole, ProductKind
from grader import author_code, expected
from grader.check import check_problem
from grader.config import settings as grader_settings
from grader.problems.scaffold import scaffold_files
from tests.app import test_course_problems as course_tests
from tests.app.conftest import token_for

site = course_tests.site  # that module's app and database: one per module
Site = course_tests.Site
REFERENCE = "def solve(x, scale):\n    return x * scale\n"  # the scaffold's


def checked_and_published(site: Site, name: str) -> tuple[str, int]:
    """A new course problem (the scaffold) with the check a worker runs, its products kept
    as run_check keeps them, published and assigned in the site's course."""
    _name, teacher = course_tests.person("instructor")
    slug = course_problems.course_slug(site.course_id, name)
    with session_scope() as session:
        author = session.get_one(User, teacher.id)
        version, _created = course_problems.record_version(
            session=session, course_id=site.course_id, slug=slug, files=scaffold_files(slug),
            author=author,
        )  # fmt: skip
        session.flush()
        problem = catalog.problem_of(version)
        result = check_problem(problem.folder, trusted=False)
        assert result.ok, result.errors
        check_products.keep(session=session, version_id=version.id, problem=problem, device="cpu")
        version.check_status = CheckStatus.PASSED
        catalog.publish(session=session, version=version)
        version_id = version.id
    client, csrf = course_tests.instructor(site)
    assigned = client.post(
        f"/courses/{site.course_id}/assignments", data={"csrf_token": csrf, "problem": slug}
    )
    assert assigned.status_code == 200
    return slug, version_id


def a_fresh_machine(slug: str) -> None:
    """None of the problem's cases or outputs in this machine's caches, nothing loaded."""
    for folder in (grader_settings.expected_cache_dir, grader_settings.author_cases_dir):
        for kept in folder.glob(f"{slug}-*"):
            kept.unlink()
    catalog._loaded.clear()


def submitted_and_graded(site: Site, slug: str) -> dict[str, object]:
    """A new learner of the site's course submits the reference; one worker grades it."""
    client = site.client
    name = f"solver{next(course_tests._names)}"
    headers = token_for(name)
    with session_scope() as session:
        solver = accounts.user_by_name(session=session, name=name)
        assert solver is not None
        session.expunge(solver)
    course_tests.join(solver, site.course_id, MemberRole.LEARNER)
    sent = client.post(
        "/api/submissions", headers=headers, json={"problem": slug, "code": REFERENCE}
    )
    assert sent.status_code == 202, sent.text
    workers = EmbeddedWorkers(threads=1)
    try:
        assert workers.work_once("test")
    finally:
        workers.grader.close()
    graded: dict[str, object] = client.get(
        f"/api/submissions/{sent.json()['id']}", headers=headers
    ).json()
    return graded


def products(version_id: int) -> list[tuple[str, str, str]]:
    with session_scope() as session:
        rows = session.scalars(
            select(ProblemVersionProduct)
            .where(ProblemVersionProduct.version_id == version_id)
            .order_by(ProblemVersionProduct.id)
        ).all()
        return [(row.kind, row.device, row.runtime_key) for row in rows]


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_fresh_worker_grades_from_the_stored_products_and_derives_another_runtimes(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One real check; then each grading on a machine whose caches hold nothing of it."""
    slug, version_id = checked_and_published(site, "kept")

    def no_cases_sandbox(*_args: object) -> None:
        raise AssertionError("the author's cases.py ran outside a check")

    monkeypatch.setattr(author_code, "_run", no_cases_sandbox)
    a_fresh_machine(slug)
    graded = submitted_and_graded(site, slug)
    assert graded["verdict"] == "accepted", graded
    runtime = expected.runtime_key("cpu")
    assert [kind for kind, _device, _key in products(version_id)] == ["cases", "expected"]

    # Checked on another runtime (an upgraded JAX, a GPU's): derived here, kept, graded.
    with session_scope() as session:
        session.execute(
            update(ProblemVersionProduct)
            .where(
                ProblemVersionProduct.version_id == version_id,
                ProblemVersionProduct.kind == ProductKind.EXPECTED,
            )
            .values(runtime_key="another runtime")
        )
    a_fresh_machine(slug)
    graded = submitted_and_graded(site, slug)
    assert graded["verdict"] == "accepted", graded
    assert products(version_id)[1:] == [
        ("expected", "cpu", "another runtime"),
        ("derived", "cpu", runtime),
    ]
    a_fresh_machine(slug)  # a third machine of this runtime restores the derived ones
    with session_scope() as session:
        problem = catalog.problem_of(session.get_one(ProblemVersion, version_id))
        assert expected.on_disk(problem, "cpu")


def test_deleting_a_course_keeps_its_problems_versions_for_the_submissions(site: Site) -> None:
    """The course's problems go with it (no one can reach them); their versions and what
    their checks kept stay: learners' submissions name those versions, and stay theirs."""
    _name, teacher = course_tests.person("instructor")
    with session_scope() as session:
        owner = session.get_one(User, teacher.id)
        course = courses.create_course(session=session, name="Short-lived", instructor=owner)
        session.flush()
        slug = course_problems.course_slug(course.id, "gone")
        version, _created = course_problems.record_version(
            session=session, course_id=course.id, slug=slug, files=scaffold_files(slug),
            author=owner,
        )  # fmt: skip
        session.flush()
        session.add(
            ProblemVersionProduct(
                version_id=version.id, kind=ProductKind.CASES, device="", runtime_key="k",
                blob=b"bank",
            )
        )  # fmt: skip
        catalog.publish(session=session, version=version)
        course_id, version_id = course.id, version.id
    with session_scope() as session:
        course = session.get_one(Course, course_id)
        courses.delete_course(session=session, course=course, confirm_name="Short-lived")
    with session_scope() as session:
        assert session.get(ProblemRecord, slug) is None
        assert session.get(ProblemVersion, version_id) is not None
        assert products(version_id) == [("cases", "", "k")]
    # The newest course was deleted: the next one must not take its id, and with it the
    # slugs of the versions kept above (SQLite reuses the highest id without AUTOINCREMENT).
    with session_scope() as session:
        owner = session.get_one(User, teacher.id)
        later = courses.create_course(session=session, name="Next", instructor=owner)
        session.flush()
        assert later.id > course_id
        assert not course_problems.course_problem_slugs(session=session, course_id=later.id)
