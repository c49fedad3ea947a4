"""Problems a learner marked complete (skipped or reviewed), kept apart from solved.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"


def upgrade() -> None:
    op.create_table(
        "problem_marks",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("problem", sa.String(100), nullable=False),
        sa.Column("marked_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("user_id", "problem"),
    )
    op.create_index("ix_problem_marks_user_id", "problem_marks", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_problem_marks_user_id", "problem_marks")
    op.drop_table("problem_marks")
