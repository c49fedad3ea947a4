"""A real PostgreSQL server for the tests: Debian's binaries (`make` installs the
`postgresql` package as root), a throwaway cluster in a temporary directory, owned
and run by a non-root user (PostgreSQL refuses to run as root), listening on a free
loopback port. Nothing is mocked: the queue's SKIP LOCKED branch, the migrations and
the web app run against it as they would in production.

PostgreSQL is part of the product, so a machine where it cannot be found or started
fails these tests with the reason; it never skips them.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

SERVER_USER = "postgres"  # the Debian package's account; any non-root user works


class PostgresUnavailableError(RuntimeError):
    """No PostgreSQL binaries, or the server would not start."""


def _binary(name: str) -> str:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    if found is None:
        raise PostgresUnavailableError(
            f"PostgreSQL's {name} is not installed: run `make test` as root (it installs Debian's"
            " postgresql package) or `sudo apt-get install postgresql`"
        )
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """One cluster, started in ``__init__`` and removed by ``stop``."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="jaxjudge-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as_user: list[str] = []
        if os.getuid() == 0:
            try:
                account = pwd.getpwnam(SERVER_USER)
            except KeyError:
                raise PostgresUnavailableError(
                    f"running as root and there is no {SERVER_USER!r} user to run PostgreSQL as"
                ) from None
            os.chmod(self.root, 0o700)
            os.chown(self.root, account.pw_uid, account.pw_gid)
            self._as_user = [
                shutil.which("runuser") or "runuser",
                "-u",
                SERVER_USER,
                "--",
            ]
        self._run(
            _binary("initdb"),
            "-D",
            str(self.data),
            "-U",
            "jaxjudge",
            "--auth=trust",
            "--encoding=UTF8",
            "--no-sync",
        )
        self._run(
            _binary("pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.root / "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off -c max_connections=300",
            "start",
        )

    def _run(self, *argv: str) -> None:
        done = subprocess.run(
            [*self._as_user, *argv], capture_output=True, text=True, check=False, timeout=120
        )
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise PostgresUnavailableError(
                f"{Path(argv[0]).name} failed ({done.returncode}): {done.stderr.strip()} {tail}"
            )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://jaxjudge@127.0.0.1:{self.port}/{database}"

    def execute(self, sql: str) -> None:
        """One statement outside a transaction (CREATE/DROP DATABASE need that)."""
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user="jaxjudge", dbname="postgres", autocommit=True
        ) as connection:
            connection.execute(sql)

    def stop(self) -> None:
        subprocess.run(
            [*self._as_user, _binary("pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
            capture_output=True,
            check=False,
            timeout=60,
        )
        deadline = time.monotonic() + 10
        while (self.data / "postmaster.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        shutil.rmtree(self.root, ignore_errors=True)
