"""Learners' answers to the quizzes of problems (quiz.toml): the first answer to each
question, with whether it was right.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"


def upgrade() -> None:
    op.create_table(
        "quiz_answers",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("problem", sa.String(100), nullable=False),
        sa.Column("question", sa.String(40), nullable=False),
        sa.Column("picked", sa.String(40), nullable=False),
        sa.Column("correct", sa.Boolean, nullable=False),
        sa.Column("answered_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("user_id", "problem", "question"),
    )
    op.create_index("ix_quiz_answers_user_id", "quiz_answers", ["user_id"])
    op.create_index("ix_quiz_answers_problem", "quiz_answers", ["problem"])


def downgrade() -> None:
    op.drop_index("ix_quiz_answers_problem", "quiz_answers")
    op.drop_index("ix_quiz_answers_user_id", "quiz_answers")
    op.drop_table("quiz_answers")
