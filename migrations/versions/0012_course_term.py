"""A term's course: assignment windows and late policies, extensions, teaching
assistants and groups, score overrides, comments on submissions, similarity reports,
and the names, emails and student ids that grade exports carry.

Existing assignments open when their course was made (what they counted before,
and more: work before a learner joined now counts too).

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"


def _id() -> sa.Column:
    return sa.Column("id", sa.Integer, primary_key=True)


def _course() -> sa.Column:
    return sa.Column(
        "course_id", sa.Integer, sa.ForeignKey("courses.id", ondelete="CASCADE"), nullable=False
    )


def _by(name: str) -> sa.Column:
    return sa.Column(name, sa.Integer, sa.ForeignKey("users.id", ondelete="SET NULL"))


def upgrade() -> None:
    with op.batch_alter_table("users") as users:
        users.add_column(
            sa.Column("display_name", sa.String(120), nullable=False, server_default="")
        )
        users.add_column(sa.Column("email", sa.String(254), nullable=False, server_default=""))
        users.add_column(sa.Column("student_id", sa.String(64), nullable=False, server_default=""))
    with op.batch_alter_table("course_members") as members:
        members.add_column(
            sa.Column("group_name", sa.String(60), nullable=False, server_default="")
        )
        members.add_column(
            sa.Column("student_id", sa.String(64), nullable=False, server_default="")
        )
    with op.batch_alter_table("assignments") as assignments:
        assignments.add_column(sa.Column("assigned_at", sa.DateTime, nullable=True))
        assignments.add_column(sa.Column("opens_at", sa.DateTime, nullable=True))
        assignments.add_column(
            sa.Column("late_policy", sa.String(16), nullable=False, server_default="none")
        )
        assignments.add_column(sa.Column("late_cutoff_at", sa.DateTime, nullable=True))
        assignments.add_column(
            sa.Column("penalty_percent", sa.Float, nullable=False, server_default="0")
        )
        assignments.add_column(
            sa.Column("penalty_unit", sa.String(8), nullable=False, server_default="day")
        )
        assignments.add_column(
            sa.Column("penalty_floor_percent", sa.Float, nullable=False, server_default="0")
        )
        assignments.add_column(
            sa.Column("max_points", sa.Float, nullable=False, server_default="10")
        )
        assignments.add_column(sa.Column("removed_at", sa.DateTime, nullable=True))
    op.execute(
        "UPDATE assignments SET assigned_at = (SELECT created_at FROM courses"
        " WHERE courses.id = assignments.course_id),"
        " opens_at = (SELECT created_at FROM courses WHERE courses.id = assignments.course_id)"
    )
    with op.batch_alter_table("assignments") as assignments:
        assignments.alter_column("assigned_at", existing_type=sa.DateTime, nullable=False)
        assignments.alter_column("opens_at", existing_type=sa.DateTime, nullable=False)

    op.create_table(
        "extensions",
        _id(),
        _course(),
        sa.Column("problem", sa.String(100), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE")),
        sa.Column("group_name", sa.String(60), nullable=False),
        sa.Column("due_at", sa.DateTime, nullable=False),
        _by("created_by"),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_extensions_course_problem", "extensions", ["course_id", "problem"])
    op.create_table(
        "score_overrides",
        _id(),
        _course(),
        sa.Column("problem", sa.String(100), nullable=False),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("score", sa.Float),
        sa.Column("old_score", sa.Float),
        sa.Column("reason", sa.Text, nullable=False),
        _by("created_by"),
        sa.Column("created_by_name", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index(
        "ix_score_overrides_course", "score_overrides", ["course_id", "problem", "user_id"]
    )
    op.create_table(
        "submission_comments",
        _id(),
        _course(),
        sa.Column(
            "submission_id",
            sa.Integer,
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        _by("author_id"),
        sa.Column("author_name", sa.String(64), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index(
        "ix_submission_comments_submission_id", "submission_comments", ["submission_id"]
    )
    op.create_table(
        "similarity_reports",
        _id(),
        _course(),
        sa.Column("problem", sa.String(100), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        _by("created_by"),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("finished_at", sa.DateTime),
        sa.Column("submissions", sa.Integer, nullable=False),
        sa.Column("seconds", sa.Float),
        sa.Column("pairs_json", sa.Text),
        sa.Column("error", sa.Text),
    )


def downgrade() -> None:
    for table in ("similarity_reports", "submission_comments", "score_overrides", "extensions"):
        op.drop_table(table)
    with op.batch_alter_table("assignments") as assignments:
        for column in (
            "assigned_at", "opens_at", "late_policy", "late_cutoff_at", "penalty_percent",
            "penalty_unit", "penalty_floor_percent", "max_points", "removed_at",
        ):  # fmt: skip
            assignments.drop_column(column)
    with op.batch_alter_table("course_members") as members:
        members.drop_column("group_name")
        members.drop_column("student_id")
    with op.batch_alter_table("users") as users:
        for column in ("display_name", "email", "student_id"):
            users.drop_column(column)
