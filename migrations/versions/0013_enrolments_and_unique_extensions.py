"""Learners' own enrolments, and one extension per learner and per group.

A learner who joins with the code or is enrolled by the LMS has an enrolment; one
an instructor adds by name has none, and only their work from then on counts, so
adding an account cannot open its earlier code. Today's learners were enrolled
before adding by name existed, or were added under the old rule: they keep what
counted (each gets an enrolment). Duplicate extensions, which only a race could
make, keep their latest row.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    op.create_table(
        "course_enrolments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "course_id",
            sa.Integer,
            sa.ForeignKey("courses.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("how", sa.String(8), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("course_id", "user_id"),
    )
    op.create_index("ix_course_enrolments_user_id", "course_enrolments", ["user_id"])
    op.execute(
        "INSERT INTO course_enrolments (course_id, user_id, how, created_at)"
        " SELECT course_id, user_id, 'code', joined_at FROM course_members"
        " WHERE role = 'learner'"
    )
    op.execute(
        "DELETE FROM extensions WHERE id NOT IN (SELECT MAX(id) FROM extensions"
        " GROUP BY course_id, problem, COALESCE(user_id, -1), group_name)"
    )
    op.drop_index("ix_extensions_course_problem", table_name="extensions")
    op.create_index(
        "ux_extensions_learner",
        "extensions",
        ["course_id", "problem", "user_id"],
        unique=True,
        sqlite_where=sa.text("user_id IS NOT NULL"),
        postgresql_where=sa.text("user_id IS NOT NULL"),
    )
    op.create_index(
        "ux_extensions_group",
        "extensions",
        ["course_id", "problem", "group_name"],
        unique=True,
        sqlite_where=sa.text("user_id IS NULL"),
        postgresql_where=sa.text("user_id IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ux_extensions_group", table_name="extensions")
    op.drop_index("ux_extensions_learner", table_name="extensions")
    op.create_index("ix_extensions_course_problem", "extensions", ["course_id", "problem"])
    op.drop_index("ix_course_enrolments_user_id", table_name="course_enrolments")
    op.drop_table("course_enrolments")
