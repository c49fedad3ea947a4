"""Problem versions: sync by content hash, explicit publishing, snapshots graded as stored."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.core.config import settings
from app.core.db import session_scope
from app.data import catalog
from app.models import ProblemVersion
from grader.problems import snapshot
from grader.problems.source import content_hash
from tests.app.conftest import BANK_SLUG as SLUG


@pytest.fixture
def bank(private_bank: Path) -> Path:
    return private_bank


def test_an_unchanged_folder_syncs_to_the_same_version(bank: Path) -> None:
    with session_scope() as session:
        report = catalog.sync(session=session)
        assert report.added == [] and report.unchanged == [SLUG]
        assert [v.number for v in catalog.versions(session=session, slug=SLUG)] == [1]


def test_an_edit_becomes_a_new_version_that_waits_to_be_published(bank: Path) -> None:
    statement = bank / "problems" / SLUG / "statement.md"
    statement.write_text(statement.read_text() + "\nOne more sentence.\n")
    with session_scope() as session:
        report = catalog.sync(session=session)
        assert report.added == [f"{SLUG} v2"] and report.published == []
        live = catalog.live_problem(session=session, slug=SLUG)
        assert live is not None and live[0].number == 1
        assert "One more sentence." not in live[1].statement  # learners still get version 1
        catalog.publish(session=session, version=catalog.newest(session=session, slug=SLUG))
        live = catalog.live_problem(session=session, slug=SLUG)
        assert live is not None and live[0].number == 2
        assert "One more sentence." in live[1].statement


def test_a_reference_change_alone_is_a_new_version(bank: Path) -> None:
    reference = bank / "reference_solutions" / f"{SLUG}.py"
    reference.write_text(reference.read_text() + "\n# clarified\n")
    with session_scope() as session:
        assert catalog.sync(session=session, publish=True).published == [f"{SLUG} v2"]


def test_new_problems_wait_for_publishing_when_configured(
    bank: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "publish_new_problems", False)
    shutil.copytree(bank / "problems" / SLUG, bank / "problems" / "scan-copy")
    shutil.copy(
        bank / "reference_solutions" / f"{SLUG}.py", bank / "reference_solutions" / "scan-copy.py"
    )
    with session_scope() as session:
        report = catalog.sync(session=session)
        assert report.added == ["scan-copy v1"] and report.published == []
        assert catalog.live_problem(session=session, slug="scan-copy") is None
        assert "scan-copy" not in [p.slug for _v, p in catalog.live_problems(session=session)]


def test_an_invalid_folder_is_reported_and_changes_nothing(bank: Path) -> None:
    (bank / "problems" / SLUG / "hints.md").write_text("")
    with session_scope() as session:
        report = catalog.sync(session=session)
        assert report.added == [] and report.invalid and "hints.md" in report.invalid[0]
        assert catalog.live_version(session=session, slug=SLUG) is not None


def test_a_version_is_graded_from_its_snapshot_even_after_the_folder_is_gone(bank: Path) -> None:
    with session_scope() as session:
        version = catalog.newest(session=session, slug=SLUG)
    shutil.rmtree(bank / "problems" / SLUG)
    problem = catalog.problem_of(version)
    assert problem.folder.is_relative_to(settings.versions_dir)
    assert content_hash(snapshot.take(problem)) == version.content_hash
    assert problem.case_bank.samples and problem.reference_source


def test_snapshots_refuse_paths_that_leave_their_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unsafe path"):
        snapshot.materialise(SLUG, {"../escape.py": b"x"}, tmp_path)
    assert not (tmp_path.parent / "escape.py").exists()


def test_the_sync_and_publish_commands(
    bank: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.commands.cli import main

    assert main(["sync"]) == 0
    assert "1 unchanged" in capsys.readouterr().out
    (bank / "problems" / SLUG / "hints.md").write_text("## One\nA changed hint.\n")
    assert main(["sync"]) == 0
    assert f"new version: {SLUG} v2" in capsys.readouterr().out
    with session_scope() as session:
        assert catalog.live_version(session=session, slug=SLUG).number == 1  # type: ignore[union-attr]
    assert main(["publish", SLUG]) == 0
    assert f"published {SLUG} v2" in capsys.readouterr().out
    assert main(["publish", SLUG, "--version", "1"]) == 0  # rolling back is publishing v1
    with session_scope() as session:
        assert catalog.live_version(session=session, slug=SLUG).number == 1  # type: ignore[union-attr]
    assert main(["publish", SLUG, "--version", "9"]) == 2
    assert "no such version" in capsys.readouterr().err
    (bank / "problems" / SLUG / "statement.md").write_text("")
    assert main(["sync"]) == 1  # an invalid folder fails the command, naming the file
    assert "statement.md" in capsys.readouterr().out


def test_reverting_a_folder_maps_to_its_old_version_and_publishing_follows_the_folder(
    bank: Path,
) -> None:
    statement = bank / "problems" / SLUG / "statement.md"
    original = statement.read_text()
    statement.write_text(original + "\nA temporary sentence.\n")
    with session_scope() as session:
        assert catalog.sync(session=session, publish=True).published == [f"{SLUG} v2"]
    statement.write_text(original)
    with session_scope() as session:
        report = catalog.sync(session=session, publish=True)
        assert report.added == [] and report.published == [f"{SLUG} v1"]
        assert catalog.live_version(session=session, slug=SLUG).number == 1  # type: ignore[union-attr]


def test_a_bank_folder_named_like_a_course_problem_is_refused(bank: Path) -> None:
    # Bank problems are trusted code; a course's (c<course>-<name>) never come from there.
    shutil.copytree(bank / "problems" / SLUG, bank / "problems" / "c7-scan")
    shutil.copy(
        bank / "reference_solutions" / f"{SLUG}.py", bank / "reference_solutions" / "c7-scan.py"
    )
    with session_scope() as session:
        report = catalog.sync(session=session, publish=True)
        assert report.invalid == [
            "c7-scan: a bank folder's name may not look like a course problem's (c<digits>-...);"
            " rename the folder"
        ]
        assert catalog.versions(session=session, slug="c7-scan") == []


def test_a_course_problem_loads_untrusted_and_apart_from_the_same_files_in_the_bank(
    bank: Path,
) -> None:
    with session_scope() as session:
        version = catalog.newest(session=session, slug=SLUG)
        files = snapshot.decode(version.files_json)
        course_files = {name.replace(SLUG, "c7-scan"): data for name, data in files.items()}
        course_version = ProblemVersion(
            slug="c7-scan",
            number=1,
            content_hash=content_hash(course_files),
            title=version.title,
            files_json=snapshot.encode(course_files),
        )
        assert catalog.problem_of(version).trusted
        course = catalog.problem_of(course_version)
        assert not course.trusted and course.slug == "c7-scan"
        assert catalog.problem_of(course_version) is course  # loaded once per process
