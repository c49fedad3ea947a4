"""A real `jaxjudge serve` for tests: started on loopback, as a user runs it."""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from grader import expected
from grader.config import settings
from grader.problems.problem import load_problem, problem_folders


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@functools.cache
def bank_prepared() -> None:
    """Every bank problem's trusted outputs, reference and mistakes, in the run's cache
    before this process starts its first server. A server's own preparation
    (app/grading/preparation.py) then finds them on disk. Left to the servers, the
    bank's trusted runs went on behind every test that served, and each stopped server
    threw its half-done run away for the next to begin again: the whole suite took
    twice as long. The pytest workers share the work through the cache's file locks."""
    problems = [load_problem(folder) for folder in problem_folders()]
    for problem, result in expected.prepare_all(expected.longest_first(problems)):
        if isinstance(result, Exception):
            raise AssertionError(f"the trusted runs of {problem.slug} failed: {result}")


def server_env(tmp_path: Path) -> dict[str, str]:
    """A throwaway database; the trusted-output caches are the test session's."""
    return {
        **os.environ,
        "JAXJUDGE_DATABASE_URL": f"sqlite:///{tmp_path / 'server.db'}",
        "JAXJUDGE_DATA_DIR": str(settings.data_dir),
    }


def jaxjudge(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.commands.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


class Server:
    """`jaxjudge serve` on a free loopback port, started and waited for."""

    def __init__(
        self, env: dict[str, str], workers: int, *extra: str, log: Path | None = None
    ) -> None:
        bank_prepared()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_file = None if log is None else log.open("w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "app.commands.cli",
                "serve",
                "--port",
                str(self.port),
                "--workers",
                str(workers),
                *extra,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self.log_file or subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=1) as response:
                    if json.loads(response.read()) == {"status": "ok"}:
                        return
            except OSError:
                time.sleep(0.2)
        raise AssertionError("the server did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)
        self._close_log()

    def kill(self) -> None:
        """SIGKILL, as a crash: no shutdown of any kind."""
        self.process.kill()
        self.process.wait()
        self._close_log()

    def _close_log(self) -> None:
        if self.log_file is not None:
            self.log_file.close()
