"""Each submission's secret draw of the hidden inputs (which variant it is graded on).

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        # Null for submissions made before variants existed: graded on variant 0.
        batch.add_column(sa.Column("hidden_draw", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("hidden_draw")
