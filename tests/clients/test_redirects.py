"""Where the light client's token goes when a server redirects (issue 37): on to the same
origin, never to another. Two loopback servers on two ports: the first redirects, the
second writes down the headers each request brought."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from jaxjudge_client.http import ApiClient

TOKEN = "jj_the-learners-token"


class Recorder(BaseHTTPRequestHandler):
    """Answers every request with ``{}`` (or one event) and keeps its headers."""

    seen: ClassVar[list[dict[str, str]]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        Recorder.seen.append({k.lower(): v for k, v in self.headers.items()})
        if self.path.endswith("/events"):
            body, kind = b'event: done\ndata: {"status": "done"}\n\n', "text/event-stream"
        else:
            body, kind = json.dumps({"path": self.path}).encode(), "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def redirecting_to(target: str) -> type[BaseHTTPRequestHandler]:
    """A server that sends ``/same/...`` to itself at ``/...`` and everything else to
    ``target`` (another origin), with the same path."""

    class Redirector(Recorder):
        def do_GET(self) -> None:
            if self.path.startswith("/same/"):
                location = self.path.removeprefix("/same")
            elif self.path.startswith("/api/"):
                location = target + self.path
            else:
                super().do_GET()
                return
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Redirector


def serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def elsewhere() -> Iterator[str]:
    Recorder.seen = []
    yield from serve(Recorder)


@pytest.fixture
def server(elsewhere: str) -> Iterator[str]:
    yield from serve(redirecting_to(elsewhere))


def test_a_redirect_to_another_port_arrives_without_the_token(server: str, elsewhere: str) -> None:
    answer = ApiClient(server, TOKEN).request("GET", "/api/problems")
    assert answer == {"path": "/api/problems"}  # it was followed, to the other server
    (headers,) = Recorder.seen
    assert headers["host"] == elsewhere.removeprefix("http://")
    assert "authorization" not in headers and "cookie" not in headers
    assert TOKEN not in json.dumps(headers)


def test_the_event_stream_does_not_carry_the_token_elsewhere_either(server: str) -> None:
    events = list(ApiClient(server, TOKEN).events("/api/submissions/1/events", timeout=5))
    assert events == [("done", {"status": "done"})]
    (headers,) = Recorder.seen
    assert "authorization" not in headers


def test_a_redirect_within_the_same_origin_keeps_the_token(server: str) -> None:
    answer = ApiClient(server, TOKEN).request("GET", "/same/courses")
    assert answer == {"path": "/courses"}
    (headers,) = Recorder.seen
    assert headers["host"] == server.removeprefix("http://")
    assert headers["authorization"] == f"Bearer {TOKEN}"
