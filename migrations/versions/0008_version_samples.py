"""Each version's sample cases as the problem page shows them (inputs and the
reference's outputs), stored once the version's trusted run is done, so a page
view reads them instead of running the reference.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    with op.batch_alter_table("problem_versions") as batch:
        batch.add_column(sa.Column("samples_json", sa.Text, nullable=True))
        batch.add_column(sa.Column("samples_error", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("problem_versions") as batch:
        batch.drop_column("samples_error")
        batch.drop_column("samples_json")
