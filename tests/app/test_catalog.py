"""Problem versions: sync by content hash, explicit publishing, snapshots graded as stored."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app import catalog
from app.core.config import settings
from app.core.db import session_scope
from grader import snapshot
from tests.app.conftest import BANK_SLUG as SLUG


@pytest.fixture
def bank(private_bank: Path) -> Path:
    return private_bank


def test_an_unchanged_folder_syncs_to_the_same_version(bank: Path) -> None:
    with session_scope() as session:
        report = catalog.sync(session)
        assert report.added == [] and report.unchanged == [SLUG]
        assert [v.number for v in catalog.versions(session, SLUG)] == [1]


def test_an_edit_becomes_a_new_version_that_waits_to_be_published(bank: Path) -> None:
    statement = bank / "problems" / SLUG / "statement.md"
    statement.write_text(statement.read_text() + "\nOne more sentence.\n")
    with session_scope() as session:
        report = catalog.sync(session)
        assert report.added == [f"{SLUG} v2"] and report.published == []
        live = catalog.live_problem(session, SLUG)
        assert live is not None and live[0].number == 1
        assert "One more sentence." not in live[1].statement  # learners still get version 1
        catalog.publish(session, version=catalog.newest(session, SLUG))
        live = catalog.live_problem(session, SLUG)
        assert live is not None and live[0].number == 2
        assert "One more sentence." in live[1].statement


def test_a_reference_change_alone_is_a_new_version(bank: Path) -> None:
    reference = bank / "reference_solutions" / f"{SLUG}.py"
    reference.write_text(reference.read_text() + "\n# clarified\n")
    with session_scope() as session:
        assert catalog.sync(session, publish=True).published == [f"{SLUG} v2"]


def test_new_problems_wait_for_publishing_when_configured(
    bank: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "publish_new_problems", False)
    shutil.copytree(bank / "problems" / SLUG, bank / "problems" / "scan-copy")
    shutil.copy(
        bank / "reference_solutions" / f"{SLUG}.py", bank / "reference_solutions" / "scan-copy.py"
    )
    with session_scope() as session:
        report = catalog.sync(session)
        assert report.added == ["scan-copy v1"] and report.published == []
        assert catalog.live_problem(session, "scan-copy") is None
        assert "scan-copy" not in [p.slug for _v, p in catalog.live_problems(session)]


def test_an_invalid_folder_is_reported_and_changes_nothing(bank: Path) -> None:
    (bank / "problems" / SLUG / "hints.md").write_text("")
    with session_scope() as session:
        report = catalog.sync(session)
        assert report.added == [] and report.invalid and "hints.md" in report.invalid[0]
        assert catalog.live_version(session, SLUG) is not None


def test_a_version_is_graded_from_its_snapshot_even_after_the_folder_is_gone(bank: Path) -> None:
    with session_scope() as session:
        version = catalog.newest(session, SLUG)
    shutil.rmtree(bank / "problems" / SLUG)
    problem = catalog.problem_of(version)
    assert problem.folder.is_relative_to(settings.versions_dir)
    assert snapshot.content_hash(snapshot.take(problem)) == version.content_hash
    assert problem.cases and problem.reference_source


def test_snapshots_refuse_paths_that_leave_their_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unsafe path"):
        snapshot.materialise(SLUG, {"../escape.py": b"x"}, tmp_path)
    assert not (tmp_path.parent / "escape.py").exists()
