"""The grade book's revision: one row whose number every commit that writes what grades
are computed from moves on (app/core/grade_revision.py), so a grade book read can serve
the copy it computed at the same revision.

Revision ID: 0020
Revises: 0019
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"


def upgrade() -> None:
    table = op.create_table(
        "grade_book_revision",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("revision", sa.Integer, nullable=False),
    )
    op.bulk_insert(table, [{"id": 1, "revision": 0}])


def downgrade() -> None:
    op.drop_table("grade_book_revision")
