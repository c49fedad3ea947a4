"""Upgrading a database made before problem versions keeps its submissions gradeable."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import text

from app import catalog
from app.core.config import PROJECT_ROOT, settings
from app.core.db import engine, migrate, session_scope
from app.models import Submission


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
        catalog.sync(session)
        old = session.get_one(Submission, 1)
        assert (old.verdict, old.problem_version_id) == ("accepted", None)
        assert catalog.live_version(session, "scan-microbatched-grads") is not None
