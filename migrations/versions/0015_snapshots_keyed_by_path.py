"""Problem snapshots keyed by their paths under one root (``problems/<slug>/...`` and
``reference_solutions/<slug>.py``, grader/problems/source.py) instead of folder-relative
names plus a special ``@reference.py`` key. Every stored version is rewritten and its
content hash recomputed the new way: the same versions, numbers, live choices and
submissions; only the names inside the snapshot, and so the hash, change. The upgrade is
self-contained (it does not import the grader, whose code moves on).

Revision ID: 0015
Revises: 0014
"""

import base64
import hashlib
import json
from collections.abc import Callable

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"

OLD_REFERENCE_KEY = "@reference.py"


def _hash(files: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(
            name.encode() + b"\0" + hashlib.sha256(base64.b64decode(files[name])).digest()
        )
    return digest.hexdigest()


def _to_paths(slug: str, files: dict[str, str]) -> dict[str, str]:
    return {
        f"reference_solutions/{slug}.py"
        if name == OLD_REFERENCE_KEY
        else f"problems/{slug}/{name}": data
        for name, data in files.items()
    }


def _to_names(slug: str, files: dict[str, str]) -> dict[str, str]:
    folder = f"problems/{slug}/"
    return {
        OLD_REFERENCE_KEY
        if name == f"reference_solutions/{slug}.py"
        else name.removeprefix(folder): data
        for name, data in files.items()
    }


def _rewrite(convert: Callable[[str, dict[str, str]], dict[str, str]]) -> None:
    versions = sa.table(
        "problem_versions",
        sa.column("id", sa.Integer),
        sa.column("slug", sa.String),
        sa.column("content_hash", sa.String),
        sa.column("files_json", sa.Text),
    )
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(versions.c.id, versions.c.slug, versions.c.files_json)
    ).all()
    for row_id, slug, files_json in rows:
        files = convert(slug, json.loads(files_json))
        connection.execute(
            versions.update()
            .where(versions.c.id == row_id)
            .values(files_json=json.dumps(files), content_hash=_hash(files))
        )


def upgrade() -> None:
    _rewrite(_to_paths)


def downgrade() -> None:
    _rewrite(_to_names)
