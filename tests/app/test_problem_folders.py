"""A course's problems as folders (app/data/problem_folders.py): every bank problem
exported, imported into a course and exported again unchanged; an upload with one
invalid problem records nothing."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.commands.cli import main
from app.core.db import session_scope
from app.data import accounts, catalog, courses, problem_folders
from app.data.course_problem_edits import editor_files
from app.models import ProblemVersion
from grader.config import PROJECT_ROOT
from grader.problems import folders
from grader.problems.folders import FolderError
from grader.problems.problem import problem_folders as bank_folders
from grader.problems.source import ProblemSource
from tests.app.conftest import in_process_client, sign_in
from tests.conftest import copy_problem


@pytest.fixture
def course_id(sqlite_database: str) -> int:
    with session_scope() as session:
        teacher = accounts.create_user(
            session=session, name="teacher", password="long test password", role="instructor"
        )
        return courses.create_course(session=session, name="Course", instructor=teacher).id


def test_every_bank_problem_round_trips_through_a_course_unchanged(course_id: int) -> None:
    bank = [folder.name for folder in bank_folders(PROJECT_ROOT)]
    assert len(bank) >= 23
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


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_an_instructor_uploads_and_downloads_zips_on_the_course_page(course_id: int) -> None:
    good = ProblemSource(PROJECT_ROOT, "stable-logsumexp").files()
    broken = {**good, "problems/stable-logsumexp/problem.toml": b"title = 'x'\nnope = [\n"}
    with in_process_client() as browser:
        token = sign_in(browser, "teacher")
        assert "/problem-folders" in browser.get(f"/courses/{course_id}").text
        base = f"/courses/{course_id}/problem-folders"
        refused = browser.post(
            f"{base}/import",
            data={"csrf_token": token},
            files={"file": ("p.zip", _zip(broken), "application/zip")},
        )
        assert refused.status_code == 400
        assert "Nothing was imported" in refused.text and "problem.toml" in refused.text
        assert "no problems of its own" in browser.get(base).text
        not_zip = browser.post(
            f"{base}/import", data={"csrf_token": token}, files={"file": ("p.zip", b"hello")}
        )
        assert not_zip.status_code == 400 and "not a zip file" in not_zip.text
        done = browser.post(
            f"{base}/import",
            data={"csrf_token": token},
            files={"file": ("p.zip", _zip(good), "application/zip")},
        )
        assert done.status_code == 200
        assert f"c{course_id}-stable-logsumexp: new version v1" in done.text
        zipped = browser.get(f"{base}/c{course_id}-stable-logsumexp/v1.zip")
        assert zipped.headers["content-type"] == "application/zip"
        assert "stable-logsumexp-v1.zip" in zipped.headers["content-disposition"]
        assert zipped.content == folders.export(
            good, slug="stable-logsumexp", name="stable-logsumexp"
        )
        assert browser.get(f"{base}/c{course_id}-stable-logsumexp/v2.zip").status_code == 404
        assert browser.get(f"{base}/c{course_id + 1}-stable-logsumexp/v1.zip").status_code == 404


def test_the_cli_imports_a_folder_and_exports_a_version(
    course_id: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy_problem("stable-logsumexp", tmp_path / "root").folder
    (folder / "problem.toml").write_text((folder / "problem.toml").read_text() + "\nnope = 1\n")
    assert main(["problems", "import", str(folder), "--course", str(course_id)]) == 1
    assert "problem.toml" in capsys.readouterr().err
    copy_problem("stable-logsumexp", tmp_path / "clean")
    assert main(["problems", "import", str(tmp_path / "clean"), "--course", str(course_id)]) == 0
    assert "new version v1" in capsys.readouterr().out
    out = tmp_path / "out.zip"
    slug = f"c{course_id}-stable-logsumexp"
    assert main(["problems", "export", slug, "--out", str(out)]) == 0
    good = ProblemSource(PROJECT_ROOT, "stable-logsumexp").files()
    assert out.read_bytes() == folders.export(
        good, slug="stable-logsumexp", name="stable-logsumexp"
    )
    assert main(["problems", "import", str(out), "--course", str(course_id)]) == 0
    assert "unchanged, already v1" in capsys.readouterr().out
    assert main(["problems", "export", slug, "--version", "7", "--out", str(out)]) == 2


def test_the_editor_shows_a_problems_tests_py_beside_its_cases() -> None:
    """tests.py is one more author file in the course problem editor, after cases.py."""
    names = ("mistakes/a.py", "tests.py", "problem.toml", "cases.py", "statement.md")
    files = {f"problems/c1-x/{name}": b"" for name in names}
    shown = [file.name for file in editor_files("c1-x", files)]
    assert shown == ["statement.md", "cases.py", "tests.py", "problem.toml", "mistakes/a.py"]
