"""A course's problems as folders (app/data/problem_folders.py): every bank problem
exported, imported into a course and exported again unchanged; an upload with one
invalid problem records nothing."""

from __future__ import annotations

import io
import zipfile

import pytest
from sqlalchemy import func, select

from app.core.db import session_scope
from app.data import accounts, catalog, courses, problem_folders
from app.models import ProblemVersion
from grader.config import PROJECT_ROOT
from grader.problems import folders
from grader.problems.folders import FolderError
from grader.problems.problem import problem_folders as bank_folders
from grader.problems.source import ProblemSource


@pytest.fixture
def course_id(sqlite_database: str) -> int:
    with session_scope() as session:
        teacher = accounts.create_user(
            session=session, name="teacher", password="long test password", role="instructor"
        )
        return courses.create_course(session=session, name="Course", instructor=teacher).id


def test_every_bank_problem_round_trips_through_a_course_unchanged(course_id: int) -> None:
    bank = [folder.name for folder in bank_folders(PROJECT_ROOT)]
    assert len(bank) >= 21
    exported: dict[str, bytes] = {}
    for slug in bank:
        source = ProblemSource(PROJECT_ROOT, slug)
        exported[slug] = folders.export(source.files(), slug=slug, name=slug)
    with session_scope() as session:
        for slug in bank:
            [imported] = problem_folders.import_problems(
                session=session,
                course_id=course_id,
                problems=folders.read_upload(exported[slug]),
                author=None,
            )
            assert imported.slug == f"c{course_id}-{slug}" and imported.created
    with session_scope() as session:
        for slug in bank:
            [version] = catalog.versions(session=session, slug=f"c{course_id}-{slug}")
            assert version.number == 1
            assert catalog.live_version(session=session, slug=version.slug) is None  # unchecked
            name, again = problem_folders.export_version(version)
            assert name == f"{slug}-v1.zip"
            assert again == exported[slug]  # byte for byte
            [problem] = folders.read_upload(again)
            source = ProblemSource(PROJECT_ROOT, slug)
            assert folders.renamed(problem.files, slug, slug) == source.files()
            assert problem_folders.content_hash_as_bank(version) == source.content_hash()


def test_an_import_is_all_or_nothing_and_unchanged_files_make_no_version(course_id: int) -> None:
    good = ProblemSource(PROJECT_ROOT, "stable-logsumexp").files()
    bad = folders.renamed(dict(good), "stable-logsumexp", "broken")
    bad["problems/broken/problem.toml"] = b"title = \n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in {**good, **bad}.items():
            archive.writestr(name, data)
    upload = folders.read_upload(buffer.getvalue())
    assert [p.name for p in upload] == ["broken", "stable-logsumexp"]
    with session_scope() as session, pytest.raises(FolderError) as refused:
        problem_folders.import_problems(
            session=session, course_id=course_id, problems=upload, author=None
        )
    assert refused.value.errors[0].startswith("problems/broken/problem.toml")
    with session_scope() as session:
        count = select(func.count()).select_from(ProblemVersion)
        assert session.scalar(count.where(ProblemVersion.slug.like("c%-%"))) == 0
        first = problem_folders.import_problems(
            session=session, course_id=course_id, problems=upload[1:], author=None
        )
        again = problem_folders.import_problems(
            session=session, course_id=course_id, problems=upload[1:], author=None
        )
    assert [i.line() for i in first] == [f"c{course_id}-stable-logsumexp: new version v1"]
    assert not again[0].created and again[0].number == 1
