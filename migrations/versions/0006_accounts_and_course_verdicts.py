"""Accounts that hold against an attacker, and regrades scoped to a course.

- users: a canonical name (NFKC, case-folded) that is unique, a disabled
  flag, and the per-account sign-in delay;
- server-side web sessions (revocable), API tokens with a name and an expiry;
- course_verdicts: a regrade applied in one course changes only what that
  course sees; regrades record whether they were applied platform-wide.

Existing accounts keep working: two old names that differ only by case or
width (``alice``, ``Alice``) both keep signing in with their exact names; the
later ones get a canonical name that no new sign-up can take (``alice~7``).

Revision ID: 0006
Revises: 0005
"""

import unicodedata

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"


def canonical(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("canonical_name", sa.String(80), nullable=True))
        batch.add_column(sa.Column("disabled_at", sa.DateTime, nullable=True))
        batch.add_column(
            sa.Column("failed_sign_ins", sa.Integer, nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("sign_in_blocked_until", sa.DateTime, nullable=True))
    users = sa.table(
        "users", sa.column("id", sa.Integer), sa.column("name"), sa.column("canonical_name")
    )
    connection = op.get_bind()
    taken: set[str] = set()
    for user_id, name in connection.execute(
        sa.select(users.c.id, users.c.name).order_by(users.c.id)
    ):
        form = canonical(name)
        if form in taken:
            form = f"{form}~{user_id}"  # a legacy look-alike: its exact name still signs in
        taken.add(form)
        connection.execute(users.update().where(users.c.id == user_id).values(canonical_name=form))
    with op.batch_alter_table("users") as batch:
        batch.alter_column("canonical_name", existing_type=sa.String(80), nullable=False)
        batch.create_unique_constraint("uq_users_canonical_name", ["canonical_name"])

    with op.batch_alter_table("api_tokens") as batch:
        batch.add_column(sa.Column("name", sa.String(100), nullable=False, server_default=""))
        batch.add_column(sa.Column("expires_at", sa.DateTime, nullable=True))

    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "user_id",
            sa.Integer,
            sa.ForeignKey("users.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("last_seen_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
        sa.Column("user_agent", sa.String(200), nullable=False, server_default=""),
    )
    op.create_table(
        "course_verdicts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "course_id",
            sa.Integer,
            sa.ForeignKey("courses.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column(
            "submission_id",
            sa.Integer,
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("verdict", sa.String(32)),
        sa.Column("score", sa.Float),
        sa.Column("result_json", sa.Text),
        sa.Column("problem_version_id", sa.Integer, sa.ForeignKey("problem_versions.id")),
        sa.Column("regrade_id", sa.Integer, sa.ForeignKey("regrades.id")),
        sa.Column("applied_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("course_id", "submission_id"),
    )
    with op.batch_alter_table("regrades") as batch:
        batch.add_column(sa.Column("scope", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("regrades") as batch:
        batch.drop_column("scope")
    op.drop_table("course_verdicts")
    op.drop_table("web_sessions")
    with op.batch_alter_table("api_tokens") as batch:
        batch.drop_column("expires_at")
        batch.drop_column("name")
    with op.batch_alter_table("users") as batch:
        batch.drop_constraint("uq_users_canonical_name", type_="unique")
        batch.drop_column("sign_in_blocked_until")
        batch.drop_column("failed_sign_ins")
        batch.drop_column("disabled_at")
        batch.drop_column("canonical_name")
