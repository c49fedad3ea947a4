"""Worker heartbeats (readiness, operators' view), the readiness probe's row, and
idempotency keys for submissions (a client that retries after a timeout gets the
submission it already made, not a second one).

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    op.create_table(
        "workers",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("host", sa.String(64), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("device", sa.String(8), nullable=False),
        sa.Column("threads", sa.Integer, nullable=False),
        sa.Column("pool_size", sa.Integer, nullable=False),
        sa.Column("idle_children", sa.Integer, nullable=False),
        sa.Column("warm", sa.Boolean, nullable=False),
        sa.Column("current_jobs", sa.String(200), nullable=False, server_default=""),
        sa.Column("version", sa.String(32), nullable=False),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.Column("heartbeat_at", sa.DateTime, nullable=False, index=True),
    )
    op.create_table(
        "service_checks",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("checked_at", sa.DateTime, nullable=False),
    )
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("client_key", sa.String(64), nullable=True))
        batch.create_unique_constraint("uq_submissions_user_client_key", ["user_id", "client_key"])


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_constraint("uq_submissions_user_client_key", type_="unique")
        batch.drop_column("client_key")
    op.drop_table("service_checks")
    op.drop_table("workers")
