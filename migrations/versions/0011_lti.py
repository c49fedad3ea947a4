"""LTI 1.3: platforms and deployments, used registration invitations, logins in flight, linked accounts, contexts and
resource links, the grade-book outbox, the tool's signing keys.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"


def _id() -> sa.Column:
    return sa.Column("id", sa.Integer, primary_key=True)


def _platform() -> sa.Column:
    return sa.Column(
        "platform_id",
        sa.Integer,
        sa.ForeignKey("lti_platforms.id", ondelete="CASCADE"),
        nullable=False,
    )


def upgrade() -> None:
    op.create_table(
        "lti_platforms",
        _id(),
        sa.Column("issuer", sa.String(255), nullable=False),
        sa.Column("client_id", sa.String(255), nullable=False),
        sa.Column("name", sa.String(120), nullable=False),
        sa.Column("auth_login_url", sa.String(500), nullable=False),
        sa.Column("token_url", sa.String(500), nullable=False),
        sa.Column("jwks_url", sa.String(500), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("issuer", "client_id"),
    )
    op.create_table(
        "lti_invitation_uses",
        sa.Column("invitation_id", sa.String(64), primary_key=True),
        sa.Column("issuer", sa.String(255), nullable=False),
        sa.Column("used_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "lti_deployments",
        _id(),
        _platform(),
        sa.Column("deployment_id", sa.String(255), nullable=False),
        sa.UniqueConstraint("platform_id", "deployment_id"),
    )
    op.create_table(
        "lti_logins",
        _id(),
        sa.Column("state_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("nonce", sa.String(64), nullable=False),
        _platform(),
        sa.Column("target_link_uri", sa.String(2000), nullable=False),
        sa.Column("browser_hash", sa.String(64), nullable=False),
        sa.Column("relaunch_query", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
        sa.Column("used_at", sa.DateTime, nullable=True),
    )
    op.create_table(
        "lti_accounts",
        _id(),
        _platform(),
        sa.Column("sub", sa.String(255), nullable=False),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("email", sa.String(255), nullable=False),
        sa.Column("full_name", sa.String(255), nullable=False),
        sa.Column("linked_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("platform_id", "sub"),
    )
    op.create_index("ix_lti_accounts_user_id", "lti_accounts", ["user_id"])
    op.create_table(
        "lti_contexts",
        _id(),
        _platform(),
        sa.Column("context_id", sa.String(255), nullable=False),
        sa.Column(
            "course_id",
            sa.Integer,
            sa.ForeignKey("courses.id", ondelete="CASCADE"),
            nullable=False,
            unique=True,
        ),
        sa.Column("deployment_id", sa.String(255), nullable=False),
        sa.Column("title", sa.String(255), nullable=False),
        sa.Column("memberships_url", sa.String(1000), nullable=True),
        sa.Column("lineitems_url", sa.String(1000), nullable=True),
        sa.Column("scopes", sa.Text, nullable=False),
        sa.Column("roster_synced_at", sa.DateTime, nullable=True),
        sa.UniqueConstraint("platform_id", "context_id"),
    )
    op.create_table(
        "lti_resource_links",
        _id(),
        sa.Column(
            "context_id",
            sa.Integer,
            sa.ForeignKey("lti_contexts.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("resource_link_id", sa.String(255), nullable=False),
        sa.Column("problem", sa.String(100), nullable=False),
        sa.Column("lineitem_url", sa.String(1000), nullable=True),
        sa.Column("score_maximum", sa.Float, nullable=False),
        sa.UniqueConstraint("context_id", "resource_link_id"),
    )
    op.create_table(
        "lti_scores",
        _id(),
        sa.Column(
            "link_id",
            sa.Integer,
            sa.ForeignKey("lti_resource_links.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", sa.DateTime, nullable=False),
        sa.Column("changed_at", sa.DateTime, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("score_given", sa.Float, nullable=True),
        sa.Column("score_maximum", sa.Float, nullable=True),
        sa.Column("sent_at", sa.DateTime, nullable=True),
        sa.UniqueConstraint("link_id", "user_id"),
    )
    op.create_index("ix_lti_scores_due", "lti_scores", ["status", "next_attempt_at"])
    op.create_table(
        "lti_keys",
        _id(),
        sa.Column("kid", sa.String(64), nullable=False, unique=True),
        sa.Column("private_pem", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("retired_at", sa.DateTime, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("lti_keys")
    op.drop_index("ix_lti_scores_due", "lti_scores")
    op.drop_table("lti_scores")
    op.drop_table("lti_resource_links")
    op.drop_table("lti_contexts")
    op.drop_index("ix_lti_accounts_user_id", "lti_accounts")
    op.drop_table("lti_accounts")
    op.drop_table("lti_logins")
    op.drop_table("lti_deployments")
    op.drop_table("lti_invitation_uses")
    op.drop_table("lti_platforms")
