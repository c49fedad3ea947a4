from __future__ import annotations

from pathlib import Path

import pytest

from app.core.config import settings
from app.core.db import migrate


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A throwaway SQLite database, migrated to the newest schema."""
    url = f"sqlite:///{tmp_path / 'test.db'}"
    monkeypatch.setattr(settings, "database_url", url)
    migrate()
    return url
