"""A `jaxjudge check` is recorded on the synced version with the same files, and a new
problem goes live at sync only once proven (app/commands/cli.py record_check,
app/data/catalog.py proven): nothing unproven reaches learners."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.commands.cli import main, record_check
from app.core.config import grader_settings, settings
from app.core.db import session_scope
from app.data import accounts, catalog
from app.vocabulary import CheckStatus
from grader.check import CheckResult
from grader.problems.scaffold import scaffold
from tests.app.conftest import BANK_SLUG, in_process_client, sign_in


@pytest.fixture
def content(tmp_path: Path, sqlite_database: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server's content: one bank problem, copied unchanged, and a new scaffold."""
    root = tmp_path / "content"
    for part in ("problems", "reference_solutions"):
        (root / part).mkdir(parents=True)
    shutil.copytree(
        grader_settings.content_dir / "problems" / BANK_SLUG, root / "problems" / BANK_SLUG
    )
    shutil.copy(
        grader_settings.content_dir / "reference_solutions" / f"{BANK_SLUG}.py",
        root / "reference_solutions",
    )
    scaffold("tiny", root)
    monkeypatch.setattr(grader_settings, "content_dir", root)
    monkeypatch.setattr(grader_settings, "data_dir", tmp_path / "var")
    return root


def test_the_bank_goes_live_at_sync_and_a_new_problem_waits_for_its_check(
    content: Path,
) -> None:
    with session_scope() as session:
        report = catalog.sync(session=session)
        assert report.unproven == ["tiny v1"]
        assert "not published until `jaxjudge check` passes on it: tiny v1" in report.lines()
        assert catalog.live_version(session=session, slug="tiny") is None
        # The bank copy is listed in problems/proven.txt (its files are the bank's).
        assert catalog.live_version(session=session, slug=BANK_SLUG) is not None
        # The explicit override still publishes it.
        report = catalog.sync(session=session, publish=True)
        assert "tiny v1" in report.published


def test_a_check_that_cannot_be_recorded_says_why(
    content: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passed = CheckResult(slug="tiny")
    folder = content / "problems" / "tiny"
    assert record_check(folder, passed) == (
        "not recorded: no synced version has these files; run `jaxjudge sync`"
    )
    monkeypatch.setattr(settings, "database_url", f"sqlite:///{tmp_path / 'none.db'}")
    assert record_check(folder, passed) == (
        "not recorded: no database here yet (`jaxjudge sync` makes one)"
    )
    assert not (tmp_path / "none.db").exists()


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_cli_check_is_recorded_and_publishes_a_first_version(
    content: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with session_scope() as session:
        catalog.sync(session=session)
    assert main(["check", "tiny"]) == 0
    out = capsys.readouterr().out
    assert "recorded on tiny v1; published (the problem's first version, now proven)" in out
    with session_scope() as session:
        version = catalog.newest(session=session, slug="tiny")
        assert version.check_status == CheckStatus.PASSED and version.checked_at is not None
        report = json.loads(version.check_json or "{}")
        assert report["ok"] and "problem.toml:1" in report["todos"]
        assert report["cases"] == {"samples": 1, "hidden": 1, "variants": 16}
        assert "tiny: ok" in report["text"]
        live = catalog.live_version(session=session, slug="tiny")
        assert live is not None and live.id == version.id
        accounts.create_user(
            session=session, name="author", password="long test password", role="author"
        )
    with in_process_client() as browser:  # the preview shows the recorded check
        sign_in(browser, "author")
        preview = browser.get("/author/problems/tiny").text
    assert '<span class="check passed">passed</span>' in preview
    assert "1 sample, 1 hidden case in each of 16 variants" in preview
    assert f"TODOs left from the scaffold ({len(report['todos'])})" in preview
