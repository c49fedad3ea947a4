"""Problem versions (content-hash snapshots), live versions, regrades, past verdicts.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_table(
        "problem_versions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("slug", sa.String(100), nullable=False, index=True),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("title", sa.String(120), nullable=False),
        sa.Column("files_json", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("check_status", sa.String(16), nullable=False),
        sa.Column("check_json", sa.Text),
        sa.Column("checked_at", sa.DateTime),
        sa.UniqueConstraint("slug", "number"),
        sa.UniqueConstraint("slug", "content_hash"),
    )
    op.create_table(
        "problems",
        sa.Column("slug", sa.String(100), primary_key=True),
        sa.Column("live_version_id", sa.Integer, sa.ForeignKey("problem_versions.id")),
        sa.Column("published_at", sa.DateTime),
    )
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(
            sa.Column(
                "problem_version_id",
                sa.Integer,
                sa.ForeignKey("problem_versions.id", name="fk_submissions_problem_version"),
            )
        )
    op.create_table(
        "regrades",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "course_id",
            sa.Integer,
            sa.ForeignKey("courses.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("problem", sa.String(100), nullable=False),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("problem_versions.id"), nullable=False),
        sa.Column("created_by", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("decided_at", sa.DateTime),
    )
    op.create_table(
        "regrade_items",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "regrade_id",
            sa.Integer,
            sa.ForeignKey("regrades.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "submission_id",
            sa.Integer,
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("lease_owner", sa.String(64)),
        sa.Column("lease_expires_at", sa.DateTime),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("old_verdict", sa.String(32)),
        sa.Column("old_score", sa.Float),
        sa.Column("new_verdict", sa.String(32)),
        sa.Column("new_score", sa.Float),
        sa.Column("new_result_json", sa.Text),
        sa.UniqueConstraint("regrade_id", "submission_id"),
    )
    op.create_index("ix_regrade_items_claim", "regrade_items", ["status", "id"])
    op.create_table(
        "past_verdicts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "submission_id",
            sa.Integer,
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("problem_version_id", sa.Integer, sa.ForeignKey("problem_versions.id")),
        sa.Column("verdict", sa.String(32)),
        sa.Column("score", sa.Float),
        sa.Column("result_json", sa.Text),
        sa.Column("replaced_at", sa.DateTime, nullable=False),
        sa.Column("regrade_id", sa.Integer, sa.ForeignKey("regrades.id")),
    )


def downgrade() -> None:
    op.drop_table("past_verdicts")
    op.drop_index("ix_regrade_items_claim", "regrade_items")
    op.drop_table("regrade_items")
    op.drop_table("regrades")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("problem_version_id")
    op.drop_table("problems")
    op.drop_table("problem_versions")
