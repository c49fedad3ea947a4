"""Mail and sign-in: the mail outbox, single-use links (password reset, email
verification), identities at OpenID Connect and SAML providers, sign-in requests kept on
the server, SAML assertions seen; where an account's email and student id came from,
its notification switches; courses that ask for a student id at join.

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"

USER_COLUMNS = (
    sa.Column("email_source", sa.String(16), nullable=False, server_default=""),
    sa.Column("email_verified_at", sa.DateTime, nullable=True),
    sa.Column("student_id_source", sa.String(16), nullable=False, server_default=""),
    sa.Column("notify_comment", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("notify_regrade", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("notify_extension", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("notify_deadline", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("deadline_digest_at", sa.DateTime, nullable=True),
)


def _user_id(ondelete: str, nullable: bool = False) -> sa.Column:
    return sa.Column(
        "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete=ondelete), nullable=nullable
    )


def upgrade() -> None:
    with op.batch_alter_table("users") as users:
        for column in USER_COLUMNS:
            users.add_column(column)
    # What an account typed before this revision is self-declared.
    op.execute("UPDATE users SET email_source = 'self' WHERE email != ''")
    op.execute("UPDATE users SET student_id_source = 'self' WHERE student_id != ''")
    with op.batch_alter_table("courses") as courses:
        courses.add_column(
            sa.Column("requires_student_id", sa.Boolean, nullable=False, server_default=sa.false())
        )
    op.create_table(
        "mail_outbox",
        sa.Column("id", sa.Integer, primary_key=True),
        _user_id("SET NULL", nullable=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("to_address", sa.String(254), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("text_body", sa.Text, nullable=False),
        sa.Column("html_body", sa.Text, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", sa.DateTime, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("sent_at", sa.DateTime, nullable=True),
    )
    op.create_index("ix_mail_outbox_due", "mail_outbox", ["status", "next_attempt_at"])
    op.create_index("ix_mail_outbox_user_id", "mail_outbox", ["user_id"])
    op.create_table(
        "one_time_links",
        sa.Column("id", sa.Integer, primary_key=True),
        _user_id("CASCADE"),
        sa.Column("purpose", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("email", sa.String(254), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
        sa.Column("used_at", sa.DateTime, nullable=True),
    )
    op.create_index("ix_one_time_links_user_id", "one_time_links", ["user_id"])
    op.create_table(
        "external_identities",
        sa.Column("id", sa.Integer, primary_key=True),
        _user_id("CASCADE"),
        sa.Column("protocol", sa.String(8), nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("issuer", sa.String(500), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("last_used_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("issuer", "subject"),
    )
    op.create_index("ix_external_identities_user_id", "external_identities", ["user_id"])
    op.create_table(
        "sign_in_requests",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("state_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("protocol", sa.String(8), nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("nonce", sa.String(128), nullable=False),
        sa.Column("code_verifier", sa.String(128), nullable=False),
        sa.Column("request_id", sa.String(128), nullable=False),
        sa.Column("next_path", sa.String(2000), nullable=False),
        sa.Column(
            "link_user_id",
            sa.Integer,
            sa.ForeignKey("users.id", ondelete="CASCADE"),
            nullable=True,
        ),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
        sa.Column("used_at", sa.DateTime, nullable=True),
    )
    op.create_table(
        "seen_assertions",
        sa.Column("assertion_id", sa.String(255), primary_key=True),
        sa.Column("issuer", sa.String(500), nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("seen_assertions")
    op.drop_table("sign_in_requests")
    op.drop_index("ix_external_identities_user_id", "external_identities")
    op.drop_table("external_identities")
    op.drop_index("ix_one_time_links_user_id", "one_time_links")
    op.drop_table("one_time_links")
    op.drop_index("ix_mail_outbox_user_id", "mail_outbox")
    op.drop_index("ix_mail_outbox_due", "mail_outbox")
    op.drop_table("mail_outbox")
    with op.batch_alter_table("courses") as courses:
        courses.drop_column("requires_student_id")
    with op.batch_alter_table("users") as users:
        for column in reversed(USER_COLUMNS):
            users.drop_column(column.name)
