"""Problem folders in and out (grader/problems/folders.py): the bank's layout, a
deterministic zip, and the safe reading of untrusted uploads."""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path

import pytest

from grader.config import PROJECT_ROOT
from grader.problems import folders
from grader.problems.folders import FolderError
from grader.problems.source import ProblemSource
from tests.conftest import copy_problem

SLUG = "stable-logsumexp"


@pytest.fixture(scope="module")
def bank_files() -> dict[str, bytes]:
    return ProblemSource(PROJECT_ROOT, SLUG).files()


def zip_of(entries: dict[str, bytes], *, mode: int = stat.S_IFREG | 0o644) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def test_an_export_is_the_bank_layout_under_its_name_and_always_the_same_bytes(
    bank_files: dict[str, bytes],
) -> None:
    course_files = folders.renamed(bank_files, SLUG, "c7-logsumexp")
    first = folders.export(course_files, slug="c7-logsumexp", name="logsumexp")
    assert first == folders.export(course_files, slug="c7-logsumexp", name="logsumexp")
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        names = archive.namelist()
        assert names == sorted(names)
        assert "reference_solutions/logsumexp.py" in names
        assert all(
            n.startswith("problems/logsumexp/") or n.startswith("reference_solutions/")
            for n in names
        )
    [problem] = folders.read_upload(first)
    assert problem.name == "logsumexp"
    assert folders.renamed(problem.files, "logsumexp", SLUG) == bank_files
    assert folders.validate([problem]) == []


def test_a_zip_wrapped_in_one_folder_and_a_folder_on_disk_read_alike(
    bank_files: dict[str, bytes], tmp_path: Path
) -> None:
    wrapped = zip_of({f"course-repo-main/{name}": data for name, data in bank_files.items()})
    assert folders.read_upload(wrapped)[0].files == bank_files
    copy_problem(SLUG, tmp_path)
    (tmp_path / "README.md").write_text("not a problem")
    assert folders.read_upload(tmp_path)[0].files == bank_files  # the root
    assert folders.read_upload(tmp_path / "problems" / SLUG)[0].files == bank_files  # one folder


@pytest.mark.parametrize(
    ("entries", "mode", "message"),
    [
        ({"../evil.py": b"x"}, stat.S_IFREG | 0o644, "unsafe path"),
        ({"/etc/passwd": b"x"}, stat.S_IFREG | 0o644, "unsafe path"),
        ({"problems/a/x.py": b"/etc/passwd"}, stat.S_IFLNK | 0o777, "links"),
        ({"problems/a/big.txt": b"0" * (folders.MAX_FILE_BYTES + 1)}, 0, "larger than"),
        ({"problems/a/bomb.txt": b"0" * (900 * 1024)}, 0, "compressed more than"),
        ({"reference_solutions/alone.py": b"x = 1\n"}, 0, "without its folder"),
        ({"README.md": b"hello"}, 0, "no problem found"),
    ],
)
def test_unsafe_or_empty_uploads_are_refused_with_a_sentence(
    entries: dict[str, bytes], mode: int, message: str
) -> None:
    with pytest.raises(FolderError) as refused:
        folders.read_upload(zip_of(entries, mode=mode or stat.S_IFREG | 0o644))
    assert message in str(refused.value)


def test_not_a_zip_duplicates_and_too_many_entries_are_refused() -> None:
    with pytest.raises(FolderError, match="not a zip"):
        folders.read_upload(b"PK\x03\x04 but nothing more")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("problems/a/x.py", b"1")
        with pytest.warns(UserWarning, match="Duplicate name"):
            archive.writestr("problems/a/x.py", b"2")
    with pytest.raises(FolderError, match="appears twice"):
        folders.read_upload(buffer.getvalue())
    many = {f"problems/a/{n}.txt": b"" for n in range(folders.MAX_ENTRIES + 1)}
    with pytest.raises(FolderError, match="more than 1000 entries"):
        folders.read_upload(zip_of(many))


def test_a_link_in_a_folder_on_disk_is_refused(tmp_path: Path) -> None:
    copy_problem(SLUG, tmp_path)
    os.symlink("/etc/passwd", tmp_path / "problems" / SLUG / "hints.md.link")
    with pytest.raises(FolderError, match="links"):
        folders.read_upload(tmp_path)


def test_a_linked_folder_above_the_files_is_refused(tmp_path: Path) -> None:
    """``reference_solutions`` (or ``problems``) itself a link to a folder elsewhere: the
    files below it are not links, but every one of them is read through one."""
    copy_problem(SLUG, tmp_path / "elsewhere")
    copy_problem(SLUG, tmp_path / "upload")
    references = tmp_path / "upload" / "reference_solutions"
    for entry in references.iterdir():
        entry.unlink()
    references.rmdir()
    references.symlink_to(tmp_path / "elsewhere" / "reference_solutions")
    with pytest.raises(FolderError, match="links"):
        folders.read_upload(tmp_path / "upload")
    with pytest.raises(FolderError, match="links"):
        folders.read_upload(tmp_path / "upload" / "problems" / SLUG)


def test_invalid_problems_are_named_by_file_field_and_line(bank_files: dict[str, bytes]) -> None:
    broken = dict(bank_files)
    broken[f"problems/{SLUG}/cases.py"] = b"def cases(seed):\n    return (\n"
    toml = dict(bank_files)
    toml[f"problems/{SLUG}/problem.toml"] += b"\nsurprise = 1\n"
    missing = {k: v for k, v in bank_files.items() if not k.startswith("reference_solutions/")}
    errors = folders.validate(
        [
            folders.FolderProblem(SLUG, broken),
            folders.FolderProblem(SLUG, toml),
            folders.FolderProblem(SLUG, missing),
            folders.FolderProblem("Bad_Name", {}),
        ]
    )
    assert len(errors) == 4, errors
    assert errors[0].startswith(f"problems/{SLUG}/cases.py, line ")
    assert errors[1].startswith(f"problems/{SLUG}/problem.toml") and "surprise" in errors[1]
    assert errors[2].startswith(f"reference_solutions/{SLUG}.py: missing")
    assert "Bad_Name" in errors[3] and "lower-case" in errors[3]


def test_validating_an_upload_runs_none_of_its_code(
    bank_files: dict[str, bytes], tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    hostile = dict(bank_files)
    for name in (f"problems/{SLUG}/cases.py", f"reference_solutions/{SLUG}.py"):
        hostile[name] = f"open({str(marker)!r}, 'w').close()\n".encode() + hostile[name]
    assert folders.validate([folders.FolderProblem(SLUG, hostile)]) == []
    assert not marker.exists()


def test_a_problems_tests_py_travels_is_syntax_checked_and_never_run_by_validation(
    bank_files: dict[str, bytes], tmp_path: Path
) -> None:
    """tests.py is one more author file: exported, imported, its syntax named, its code
    run only in sandboxes (grader/author_tests.py), never by an import's validation."""
    marker = tmp_path / "ran"
    with_tests = dict(bank_files)
    with_tests[f"problems/{SLUG}/tests.py"] = f"open({str(marker)!r}, 'w').close()\n".encode()
    exported = folders.export(with_tests, slug=SLUG, name=SLUG)
    [problem] = folders.read_upload(exported)
    assert problem.files[f"problems/{SLUG}/tests.py"] == with_tests[f"problems/{SLUG}/tests.py"]
    assert folders.validate([problem]) == []
    assert not marker.exists()
    broken = dict(with_tests)
    broken[f"problems/{SLUG}/tests.py"] = b"@test(points=1\ndef t(rng):\n    yield []\n"
    [error] = folders.validate([folders.FolderProblem(SLUG, broken)])
    assert error.startswith(f"problems/{SLUG}/tests.py, line ")
