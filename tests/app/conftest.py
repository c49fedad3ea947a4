from __future__ import annotations

import itertools
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core import throttle
from app.core.config import grader_settings, settings
from app.core.db import engine, engine_for, migrate, session_scope
from app.data import accounts, api_tokens, catalog
from app.grading import author_checks
from app.server.main import create_app
from grader.judging.samples import SampleView
from grader.problems.problem import Problem, load_problem, problem_folders
from tests.conftest import copy_problem
from tests.postgres import PostgresServer

BANK_SLUG = "scan-microbatched-grads"
_numbers = itertools.count()


@pytest.fixture(autouse=True)
def fresh_throttles() -> None:
    """Throttles live in memory per process: every test starts from none."""
    for window in vars(throttle).values():
        if isinstance(window, throttle.SlidingWindow):
            window.clear()
    accounts.unknown_names.clear()


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
            catalog.sync(session=session)
        with engine().connect() as connection:  # everything into the file itself (WAL)
            connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        engine().dispose()
    finally:
        settings.database_url = original
    return path


@pytest.fixture
def sqlite_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, migrated_template: Path
) -> str:
    """A throwaway SQLite database, migrated to the newest schema, with the problems synced
    (for the tests of SQLite's own behaviour: its file lock, its file)."""
    shutil.copyfile(migrated_template, tmp_path / "test.db")
    url = f"sqlite:///{tmp_path / 'test.db'}"
    monkeypatch.setattr(settings, "database_url", url)
    return url


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server per test process (tests/postgres.py), with a template
    database migrated to the newest schema and the bank synced."""
    server = PostgresServer()
    try:
        server.execute("CREATE DATABASE bank_template")
        original = settings.database_url
        settings.database_url = server.url("bank_template")
        try:
            migrate()
            with session_scope() as session:
                catalog.sync(session=session)
            engine().dispose()  # a template must have no connections to be copied
        finally:
            settings.database_url = original
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_database(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """A throwaway PostgreSQL database copied from the migrated template."""
    name = f"test_{next(_numbers)}"
    postgres_server.execute(f"CREATE DATABASE {name} TEMPLATE bank_template")
    url = postgres_server.url(name)
    monkeypatch.setattr(settings, "database_url", url)
    yield url
    engine_for(url).dispose()
    postgres_server.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest) -> str:
    """Every test that needs the database runs on SQLite (the default) and on PostgreSQL
    (how jaxjudge scales): both are the product."""
    return str(request.getfixturevalue(f"{request.param}_database"))


@pytest.fixture
def private_bank(tmp_path: Path, database: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Problems and references in a private folder (one problem, the fast one), synced once:
    tests edit it freely. Returns the folder holding problems/ and reference_solutions/."""
    copy_problem(BANK_SLUG, tmp_path)
    monkeypatch.setattr(grader_settings, "content_dir", tmp_path)
    monkeypatch.setattr(grader_settings, "data_dir", tmp_path / "var")
    with session_scope() as session:
        catalog.sync(session=session)
    return tmp_path


def store_samples(slug: str, outcome: list[SampleView] | Exception) -> None:
    """What the preparer stores after the trusted run (app/grading/preparation.py),
    for the live version of ``slug``: page tests need no JAX."""
    with session_scope() as session:
        live = catalog.live_version(session=session, slug=slug)
        assert live is not None
        catalog.store_samples(live, outcome)


def in_process_client() -> TestClient:
    """The app in-process with no grading workers and no trusted runs (no JAX)."""
    return TestClient(create_app(workers=0, prepare=False))


@pytest.fixture
def client(database: str) -> Iterator[TestClient]:
    with in_process_client() as test_client:
        yield test_client


def run_queued_check(version_id: int) -> None:
    """What a grading worker does with a queued check once no submission waits
    (app/grading/worker.py): claim it, run it, record it."""
    with session_scope() as session:
        claimed = author_checks.claim_check(session, worker="test:1-1:0", lease_seconds=600)
    assert claimed == version_id
    assert author_checks.run_check(version_id, worker="test:1-1:0", lease_seconds=600)


def token_for(name: str, role: str = "learner") -> dict[str, str]:
    """A new account's bearer header, for the JSON API."""
    with session_scope() as session:
        user = accounts.create_user(
            session=session, name=name, password="long test password", role=role
        )
        return {"Authorization": f"Bearer {api_tokens.create(session=session, user=user)[0]}"}


def form_token(client: TestClient, path: str) -> str:
    """The CSRF token of the form on ``path``."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', client.get(path).text)
    assert found, f"no CSRF token on {path}"
    return found.group(1)


def sign_in(client: TestClient, name: str, password: str = "long test password") -> str:
    """Sign in through the form; returns the session's CSRF token for later forms."""
    token = form_token(client, "/login")
    client.post("/login", data={"name": name, "password": password, "csrf_token": token})
    meta = re.search(r'<meta name="csrf-token" content="([^"]+)">', client.get("/courses").text)
    assert meta, f"{name} is not signed in"
    return meta[1]


def bank_in_track_order() -> list[Problem]:
    """The bank as the API lists it: by track, then position."""
    bank = [load_problem(folder) for folder in problem_folders()]
    return sorted(bank, key=lambda p: (p.config.track, p.config.position))


TRACKS_EASIEST_FIRST = ["jax-foundations", "optax-and-flax", "gradient-accumulation"]


def bank_easiest_track_first() -> list[Problem]:
    """The bank as the pages list it: the bank's three tracks easiest first (all easy;
    two easy and two medium; mostly medium and hard), each by position."""
    return sorted(bank_in_track_order(), key=lambda p: TRACKS_EASIEST_FIRST.index(p.config.track))
