"""The platform's commands (app/commands/cli.py): `jaxjudge submit` against a failing server,
and the warnings `jaxjudge serve` gives."""

from __future__ import annotations

import http.server
import threading
import time
from pathlib import Path

import pytest

from app.commands.cli import main


def test_serving_beyond_loopback_without_secure_cookies_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.commands.cli import serving_warnings
    from app.core.config import settings as web_settings

    monkeypatch.setattr(web_settings, "secure_cookies", False)
    assert serving_warnings("127.0.0.1", None) == []
    assert "JAXJUDGE_SECURE_COOKIES off" in serving_warnings("0.0.0.0", None)[0]
    assert "trusts X-Forwarded-For from anyone" in serving_warnings("127.0.0.1", "*")[0]
    monkeypatch.setattr(web_settings, "secure_cookies", True)
    assert serving_warnings("0.0.0.0", "10.0.0.2") == []


def test_serve_refuses_insecure_production_settings_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.core.config import InsecureSettingsError
    from app.core.config import settings as web_settings
    from app.server.main import create_app

    monkeypatch.setattr(web_settings, "environment", "production")
    monkeypatch.setattr(web_settings, "secret_key", None)
    monkeypatch.setattr(web_settings, "secure_cookies", False)
    assert main(["serve", "--port", "1"]) == 2
    error = capsys.readouterr().err
    assert "refusing to start in production" in error
    assert "JAXJUDGE_SECRET_KEY" in error and "JAXJUDGE_SECURE_COOKIES" in error
    assert len(error.strip().splitlines()) == 1
    with pytest.raises(InsecureSettingsError):
        create_app()  # however the app is started


@pytest.mark.parametrize("command", [["worker"], ["serve", "--port", "1"]])
def test_a_gpu_host_without_a_memory_bound_refuses_to_grade_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    from grader.config import settings as grader_settings
    from grader.running import devices, limits

    unbounded = limits.SandboxLimits(None, cgroup_problem="could not create /x: read-only")
    monkeypatch.setattr(devices, "gpu_available", lambda: True)
    monkeypatch.setattr(limits, "sandbox_limits", lambda: unbounded)
    assert main(command) == 2
    error = capsys.readouterr().err
    assert "GPU sandboxes need a cgroup to bound their memory" in error
    assert "could not create /x" in error and "docs/deployment.md" in error
    assert len(error.strip().splitlines()) == 1
    # An operator who knows may let it run without one.
    monkeypatch.setattr(grader_settings, "allow_unbounded_gpu_memory", True)
    limits.refuse_unbounded_gpu_host()


class _Answers(http.server.BaseHTTPRequestHandler):
    """A server that answers every request with a plain-text 500, or never."""

    silent = False

    def do_POST(self) -> None:
        if self.silent:
            time.sleep(5)
            return
        self.send_response(500)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"Internal Server Error\nsome trace\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("silent", [False, True], ids=["plain-text-500", "no-answer"])
def test_submit_prints_one_line_when_the_server_fails(
    silent: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    handler = type("Handler", (_Answers,), {"silent": silent})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    source = tmp_path / "s.py"
    source.write_text("x = 1\n")
    try:
        code = main(
            ["submit", "--server", f"http://127.0.0.1:{server.server_port}", "--token", "jj_x",
             "--http-timeout", "0.5", "scan-microbatched-grads", str(source)]
        )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert ("500: Internal Server Error" in err) if not silent else ("no answer within" in err)
