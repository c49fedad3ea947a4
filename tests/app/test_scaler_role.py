"""docs/deployment.md's database role for KEDA's scaler, made on a real PostgreSQL as
the guide writes it, and the guide's query run as that role: it counts the queue, the
same query as the manifest's, and the role reads nothing else."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.deploy.test_kubernetes import keda_query
from tests.docs.blocks import block
from tests.postgres import PostgresServer

GRANTS = block("docs/deployment.md", "CREATE ROLE jaxjudge_keda")
QUERY = block("docs/deployment.md", "SELECT (SELECT count(*)")
RUN = [GRANTS, QUERY]
DATABASE = "jaxjudge"  # the guide's database


@pytest.fixture
def jaxjudge_database(postgres_server: PostgresServer) -> Iterator[PostgresServer]:
    postgres_server.execute(f"CREATE DATABASE {DATABASE} TEMPLATE bank_template")
    try:
        yield postgres_server
    finally:
        postgres_server.execute(f"DROP DATABASE {DATABASE} WITH (FORCE)")
        postgres_server.execute("DROP ROLE IF EXISTS jaxjudge_keda")


def _connect(server: PostgresServer, user: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(
        host="127.0.0.1", port=server.port, user=user, dbname=DATABASE, autocommit=True
    )


def test_the_scalers_role_counts_the_queue_and_reads_nothing_else(
    jaxjudge_database: PostgresServer,
) -> None:
    assert " ".join(QUERY.text.split()) == " ".join(keda_query().split())
    with _connect(jaxjudge_database, "jaxjudge") as owner:
        owner.execute(GRANTS.text.encode())  # the guide's statements, as one script
    with _connect(jaxjudge_database, "jaxjudge_keda") as scaler:
        row = scaler.execute(QUERY.text.encode()).fetchone()
        assert row == (0,)  # the bank's template holds no submission
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            scaler.execute(b"SELECT code FROM submissions")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            scaler.execute(b"SELECT count(*) FROM users")
