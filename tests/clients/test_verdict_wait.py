"""How the light client waits for a verdict: the submission's event stream first (the
verdict is pushed the moment it is recorded), polling where a stream is refused. The
HTTP answers here are the server's documented ones (docs/api.md), served by a small
loopback server so that each way can be forced; tests/clients/test_notebook.py waits
through the real server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from jaxjudge_client.http import ApiClient
from jaxjudge_client.verdicts import wait

DONE = {"id": 1, "status": "done", "verdict": "accepted"}


class Answers(BaseHTTPRequestHandler):
    stream_refused = False
    polled: ClassVar[list[str]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.endswith("/events"):
            if self.stream_refused:
                self.send_response(503)
                self.send_header("Retry-After", "1")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            running = {"id": 1, "status": "running", "stage": "samples"}
            for kind, data in (("progress", running), ("done", DONE)):
                self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            return
        Answers.polled.append(self.path)
        body = json.dumps(DONE).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_the_verdict_comes_on_the_stream_with_its_stages(server: str) -> None:
    Answers.stream_refused, Answers.polled = False, []
    seen: list[str] = []
    answer = wait(ApiClient(server, "t"), 1, progress=lambda a, _s: seen.append(a["status"]))
    assert answer == DONE and seen == ["running", "done"]
    assert Answers.polled == []  # not one poll


def test_a_refused_stream_falls_back_to_polling(server: str) -> None:
    Answers.stream_refused, Answers.polled = True, []
    assert wait(ApiClient(server, "t"), 1) == DONE
    assert Answers.polled == ["/api/submissions/1"]
