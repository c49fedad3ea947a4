"""A submission's samples' reports, kept while its hidden cases still run, so the
learner reads them before the verdict.

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    with op.batch_alter_table("submissions") as submissions:
        submissions.add_column(sa.Column("samples_json", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as submissions:
        submissions.drop_column("samples_json")
