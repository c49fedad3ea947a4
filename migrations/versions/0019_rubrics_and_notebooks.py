"""Grading beyond one function: an assignment's rubric (items, their applications to
submissions, the submissions graded by hand, the audit trail) and how it meets the
automatic score; comments anchored to a line range of the submitted code; the notebook
an assignment is part of.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    with op.batch_alter_table("assignments") as assignments:
        assignments.add_column(sa.Column("notebook", sa.String(100), nullable=True))
        assignments.add_column(
            sa.Column("rubric_mode", sa.String(16), nullable=False, server_default="added")
        )
    with op.batch_alter_table("submission_comments") as comments:
        comments.add_column(sa.Column("line_start", sa.Integer, nullable=True))
        comments.add_column(sa.Column("line_end", sa.Integer, nullable=True))
    op.create_table(
        "rubric_items",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "assignment_id",
            sa.Integer,
            sa.ForeignKey("assignments.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("points", sa.Float, nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("removed_at", sa.DateTime, nullable=True),
    )
    op.create_table(
        "rubric_applications",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "submission_id",
            sa.Integer,
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column(
            "item_id",
            sa.Integer,
            sa.ForeignKey("rubric_items.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "applied_by", sa.Integer, sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("applied_by_name", sa.String(64), nullable=False),
        sa.Column("applied_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("submission_id", "item_id"),
    )
    op.create_table(
        "manual_gradings",
        sa.Column(
            "submission_id",
            sa.Integer,
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "graded_by", sa.Integer, sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("graded_by_name", sa.String(64), nullable=False),
        sa.Column("graded_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "rubric_events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "course_id",
            sa.Integer,
            sa.ForeignKey("courses.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "assignment_id",
            sa.Integer,
            sa.ForeignKey("assignments.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "item_id",
            sa.Integer,
            sa.ForeignKey("rubric_items.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column(
            "submission_id",
            sa.Integer,
            sa.ForeignKey("submissions.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column(
            "created_by", sa.Integer, sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("created_by_name", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_rubric_events_assignment", "rubric_events", ["assignment_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_rubric_events_assignment", table_name="rubric_events")
    op.drop_table("rubric_events")
    op.drop_table("manual_gradings")
    op.drop_table("rubric_applications")
    op.drop_table("rubric_items")
    with op.batch_alter_table("submission_comments") as comments:
        comments.drop_column("line_end")
        comments.drop_column("line_start")
    with op.batch_alter_table("assignments") as assignments:
        assignments.drop_column("rubric_mode")
        assignments.drop_column("notebook")
