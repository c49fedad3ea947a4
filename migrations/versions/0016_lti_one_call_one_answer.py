"""LTI: a Dynamic Registration invitation's calls out, spent before they are made (one
read of the configuration, one registration call); deep-linking requests kept on the
server and used once, instead of in the browser's cookie.

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"


def upgrade() -> None:
    op.create_table(
        "lti_registration_attempts",
        sa.Column("invitation_id", sa.String(64), primary_key=True),
        sa.Column("configuration_url", sa.String(1000), nullable=False),
        sa.Column("configuration", sa.Text, nullable=True),
        sa.Column("read_at", sa.DateTime, nullable=False),
        sa.Column("registering_at", sa.DateTime, nullable=True),
    )
    op.create_table(
        "lti_deep_link_requests",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "course_id",
            sa.Integer,
            sa.ForeignKey("courses.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "platform_id",
            sa.Integer,
            sa.ForeignKey("lti_platforms.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("deployment_id", sa.String(255), nullable=False),
        sa.Column("return_url", sa.String(1000), nullable=False),
        sa.Column("accept_multiple", sa.Boolean, nullable=False),
        sa.Column("data", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
        sa.Column("used_at", sa.DateTime, nullable=True),
    )
    op.create_index("ix_lti_deep_link_requests_user_id", "lti_deep_link_requests", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_lti_deep_link_requests_user_id", "lti_deep_link_requests")
    op.drop_table("lti_deep_link_requests")
    op.drop_table("lti_registration_attempts")
