"""Course problems: a problem may belong to one course (written in the browser, imported
from a folder or a course's git repository) and is then seen by that course alone; who
made each version; the check's progress lines while it runs and the lease of the worker
running it; a course's link to a git repository of problem folders; what a passing check
produced from a version's author code (its case bank, its expected outputs), kept with
the version.

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"


def _course_ids_never_reused(never: bool) -> None:
    """On SQLite, a table without AUTOINCREMENT gives a new row the highest id plus one,
    so a course made after the newest was deleted took its id, and with it the slugs
    ``c<id>-...`` of the deleted course's problem versions (which outlive it: learners'
    submissions name them). PostgreSQL's sequences never hand an id out twice."""
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table(
            "courses", recreate="always", table_kwargs={"sqlite_autoincrement": never}
        ):
            pass


def upgrade() -> None:
    _course_ids_never_reused(True)
    with op.batch_alter_table("problems") as problems:
        problems.add_column(
            sa.Column(
                "course_id",
                sa.Integer,
                sa.ForeignKey("courses.id", name="fk_problems_course_id", ondelete="CASCADE"),
                nullable=True,
            )
        )
        problems.create_index("ix_problems_course_id", ["course_id"])
    with op.batch_alter_table("problem_versions") as versions:
        versions.add_column(
            sa.Column(
                "author_id",
                sa.Integer,
                sa.ForeignKey(
                    "users.id", name="fk_problem_versions_author_id", ondelete="SET NULL"
                ),
                nullable=True,
            )
        )
        versions.add_column(sa.Column("check_log", sa.Text, nullable=False, server_default=""))
        versions.add_column(sa.Column("check_lease_owner", sa.String(64), nullable=True))
        versions.add_column(sa.Column("check_lease_expires_at", sa.DateTime, nullable=True))
    op.create_table(
        "course_problem_repos",
        sa.Column(
            "course_id",
            sa.Integer,
            sa.ForeignKey("courses.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("url", sa.String(500), nullable=False),
        sa.Column("branch", sa.String(100), nullable=False, server_default="main"),
        sa.Column("webhook_secret_hash", sa.String(128), nullable=False),
        sa.Column("last_commit", sa.String(64), nullable=False, server_default=""),
        sa.Column("last_pulled_at", sa.DateTime, nullable=True),
        sa.Column("last_report", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "problem_version_products",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "version_id",
            sa.Integer,
            sa.ForeignKey("problem_versions.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("device", sa.String(16), nullable=False),
        sa.Column("runtime_key", sa.String(64), nullable=False),
        sa.Column("blob", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("version_id", "kind", "device", "runtime_key"),
    )


def downgrade() -> None:
    op.drop_table("problem_version_products")
    op.drop_table("course_problem_repos")
    with op.batch_alter_table("problem_versions") as versions:
        versions.drop_column("check_lease_expires_at")
        versions.drop_column("check_lease_owner")
        versions.drop_column("check_log")
        versions.drop_column("author_id")
    with op.batch_alter_table("problems") as problems:
        problems.drop_index("ix_problems_course_id")
        problems.drop_column("course_id")
    _course_ids_never_reused(False)
