from __future__ import annotations

from pathlib import Path

import pytest

from app import catalog
from app.core.config import settings
from app.core.db import migrate, session_scope


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A throwaway SQLite database, migrated to the newest schema, with the problems synced."""
    url = f"sqlite:///{tmp_path / 'test.db'}"
    monkeypatch.setattr(settings, "database_url", url)
    migrate()
    with session_scope() as session:
        catalog.sync(session)
    return url
