"""Upgrading an older database keeps every row and every account working, and the
schema the migrations build is the one the models describe."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import Double, Float, select, text

from app.core.config import PROJECT_ROOT, grader_settings, settings
from app.core.db import engine, engine_for, migrate, session_scope
from app.data import accounts, catalog
from app.errors import DomainError
from app.models import Base, ProblemVersion, Submission, User
from grader.problems import snapshot
from grader.problems.source import ProblemSource, content_hash
from tests.postgres import PostgresServer


def _same_float(change: object) -> bool:
    """Float columns read back as FLOAT where the model says Double (SQLAlchemy 2.1's
    Float default): the same storage on both databases."""
    if not isinstance(change, list) or len(change) != 1:
        return False
    kind, *_rest, old, new = change[0]
    return kind == "modify_type" and isinstance(old, Float) and isinstance(new, Double | Float)


def test_the_migrations_build_the_models_schema(database: str) -> None:
    """A table, column, index or constraint in one and not the other fails here."""
    with engine().connect() as connection:
        changes = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert [change for change in changes if not _same_float(change)] == []


def upgrade_to(revision: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    with engine().begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def test_submissions_from_before_versions_survive_the_upgrade(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "database_url", f"sqlite:///{tmp_path / 'old.db'}")
    upgrade_to("0003")
    with engine().begin() as connection:
        connection.execute(
            text(
                "INSERT INTO users (id, name, password_hash, role, created_at) "
                "VALUES (1, 'old', 'x', 'learner', '2026-10-01 00:00:00')"
            )
        )
        connection.execute(
            text(
                "INSERT INTO submissions (user_id, problem, mode, code, status, created_at, "
                "attempts, verdict, score) VALUES (1, 'scan-microbatched-grads', 'submit', "
                "'x', 'done', '2026-10-01 00:00:00', 1, 'accepted', 1.0)"
            )
        )
    migrate()
    with session_scope() as session:
        catalog.sync(session=session)
        old = session.get_one(Submission, 1)
        assert (old.verdict, old.problem_version_id) == ("accepted", None)
        assert catalog.live_version(session=session, slug="scan-microbatched-grads") is not None


def test_altering_tables_keeps_every_row_that_refers_to_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite recreates a table to alter it; with foreign keys on, dropping the old copy
    would delete, by cascade, the regrade history of every submission."""
    monkeypatch.setattr(settings, "database_url", f"sqlite:///{tmp_path / 'old.db'}")
    upgrade_to("0004")
    statements = [
        "INSERT INTO users (id, name, password_hash, role, created_at) VALUES (1, 'ada', 'x', 'learner', '2026-10-01')",
        "INSERT INTO courses (id, name, join_code, created_at) VALUES (1, 'c', 'ABCDEFGH', '2026-10-01')",
        "INSERT INTO problem_versions (id, slug, number, content_hash, title, files_json, created_at, check_status) VALUES (1, 'p', 1, 'h', 't', '{}', '2026-10-01', 'passed')",
        "INSERT INTO submissions (id, user_id, problem, mode, code, status, created_at, attempts, verdict, score, problem_version_id) VALUES (1, 1, 'p', 'submit', 'x', 'done', '2026-10-01', 1, 'accepted', 1.0, 1)",
        "INSERT INTO regrades (id, course_id, problem, version_id, created_by, created_at, status) VALUES (1, 1, 'p', 1, 1, '2026-10-01', 'applied')",
        "INSERT INTO regrade_items (regrade_id, submission_id, status, attempts, old_verdict, old_score) VALUES (1, 1, 'done', 1, 'wrong_answer', 0.0)",
        "INSERT INTO past_verdicts (submission_id, problem_version_id, verdict, score, replaced_at, regrade_id) VALUES (1, 1, 'wrong_answer', 0.0, '2026-10-01', 1)",
    ]
    with engine().begin() as connection:
        for statement in statements:
            connection.execute(text(statement))
    migrate()
    with engine().connect() as connection:
        counts = {
            table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in ("users", "submissions", "regrade_items", "past_verdicts")
        }
    assert counts == {"users": 1, "submissions": 1, "regrade_items": 1, "past_verdicts": 1}


def test_look_alike_names_from_before_the_name_rules_keep_signing_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "database_url", f"sqlite:///{tmp_path / 'old.db'}")
    upgrade_to("0005")
    with engine().begin() as connection:
        for user_id, name in enumerate(["alice", "Alice", "\uff41lice"], start=1):
            connection.execute(
                text(
                    "INSERT INTO users (id, name, password_hash, role, created_at)"
                    " VALUES (:id, :name, 'x', 'learner', '2026-10-01')"
                ),
                {"id": user_id, "name": name},
            )
    migrate()
    with session_scope() as session:
        found = {
            name: accounts.user_by_name(session=session, name=name)
            for name in ("alice", "Alice", "\uff41lice")
        }
        assert {name: user.id for name, user in found.items() if user} == {
            "alice": 1,
            "Alice": 2,
            "\uff41lice": 3,
        }
        assert [u.canonical_name for u in session.scalars(select(User).order_by(User.id))] == [
            "alice",
            "alice~2",
            "alice~3",
        ]
        # ALICE is the canonical "alice": the first account; nobody can sign up as any of them.
        assert accounts.user_by_name(session=session, name="ALICE").id == 1  # type: ignore[union-attr]
        with pytest.raises(DomainError, match="is taken"):
            accounts.create_user(session=session, name="ALICE", password="long test password")


def test_processes_starting_together_on_postgresql_migrate_one_at_a_time(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A web server and workers started at once all run the migrations on one empty
    database: none fails, and the schema ends at head."""
    postgres_server.execute("CREATE DATABASE racing_migrations")
    url = postgres_server.url("racing_migrations")
    monkeypatch.setattr(settings, "database_url", url)
    errors: list[BaseException] = []

    def start() -> None:
        try:
            migrate()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=start) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    with engine().connect() as connection:
        versions = connection.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    assert len(versions) == 1
    engine_for(url).dispose()


def test_versions_stored_before_snapshots_took_paths_stay_the_same_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0015: a snapshot stored the old way (names inside the folder, the reference under
    a special key, hashed over those names) is still the version of the unchanged folder:
    no new version at the next sync, and it materialises and loads."""
    slug = "scan-microbatched-grads"
    source = ProblemSource(PROJECT_ROOT, slug)
    old = {
        name.removeprefix(f"problems/{slug}/"): data
        for name, data in source.files().items()
        if name.startswith("problems/")
    } | {"@reference.py": source.reference.read_bytes()}
    monkeypatch.setattr(settings, "database_url", f"sqlite:///{tmp_path / 'old.db'}")
    monkeypatch.setattr(grader_settings, "data_dir", tmp_path / "var")
    upgrade_to("0014")
    with engine().begin() as connection:
        connection.execute(
            text(
                "INSERT INTO problem_versions (id, slug, number, content_hash, title, files_json, "
                "created_at, check_status) VALUES (7, :slug, 1, :hash, 'Scan', :files, "
                "'2026-10-01 00:00:00', 'passed')"
            ),
            {"slug": slug, "hash": content_hash(old), "files": snapshot.encode(old)},
        )
    migrate()
    with session_scope() as session:
        report = catalog.sync(session=session)
        assert not [entry for entry in report.added if entry.startswith(f"{slug} ")]
        version = session.get_one(ProblemVersion, 7)
        assert version.content_hash == source.content_hash()
        problem = catalog.problem_of(version)
    assert problem.reference_source == source.reference.read_text()
    assert problem.folder == settings.versions_dir / version.content_hash / "problems" / slug
