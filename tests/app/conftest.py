from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core import throttle
from app.core.config import PROJECT_ROOT, grader_settings, settings
from app.core.db import engine, migrate, session_scope
from app.data import catalog
from grader.samples import SampleView

BANK_SLUG = "scan-microbatched-grads"


@pytest.fixture(autouse=True)
def fresh_throttles() -> None:
    """Throttles live in memory per process: every test starts from none."""
    throttle.reset_all()


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One database migrated to the newest schema with the bank synced, made once per
    worker; each test gets a copy (a migration run per test costs half a second)."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    original = settings.database_url
    settings.database_url = f"sqlite:///{path}"
    try:
        migrate()
        with session_scope() as session:
            catalog.sync(session)
        with engine().connect() as connection:  # everything into the file itself (WAL)
            connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        engine().dispose()
    finally:
        settings.database_url = original
    return path


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, migrated_template: Path) -> str:
    """A throwaway SQLite database, migrated to the newest schema, with the problems synced."""
    shutil.copyfile(migrated_template, tmp_path / "test.db")
    url = f"sqlite:///{tmp_path / 'test.db'}"
    monkeypatch.setattr(settings, "database_url", url)
    return url


@pytest.fixture
def private_bank(tmp_path: Path, database: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Problems and references in a private folder (one problem, the fast one), synced once:
    tests edit it freely. Returns the folder holding problems/ and reference_solutions/."""
    problems, references = tmp_path / "problems", tmp_path / "reference_solutions"
    shutil.copytree(PROJECT_ROOT / "problems" / BANK_SLUG, problems / BANK_SLUG)
    references.mkdir()
    shutil.copy(PROJECT_ROOT / "reference_solutions" / f"{BANK_SLUG}.py", references)
    monkeypatch.setattr(grader_settings, "problems_dir", problems)
    monkeypatch.setattr(grader_settings, "reference_dir", references)
    monkeypatch.setattr(grader_settings, "data_dir", tmp_path / "var")
    with session_scope() as session:
        catalog.sync(session)
    return tmp_path


def store_samples(slug: str, outcome: list[SampleView] | Exception) -> None:
    """What the preparer stores after the trusted run (app/grading/preparation.py),
    for the live version of ``slug``: page tests need no JAX."""
    with session_scope() as session:
        live = catalog.live_version(session, slug)
        assert live is not None
        catalog.store_samples(live, outcome)


def sign_in(client: TestClient, name: str, password: str = "long test password") -> str:
    """Sign in through the form; returns the session's CSRF token for later forms."""
    form = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/login").text)
    assert form
    client.post("/login", data={"name": name, "password": password, "csrf_token": form[1]})
    meta = re.search(r'<meta name="csrf-token" content="([^"]+)">', client.get("/courses").text)
    assert meta, f"{name} is not signed in"
    return meta[1]
