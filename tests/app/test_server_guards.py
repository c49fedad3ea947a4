"""Request guards through a real `jaxjudge serve`: a 50 MB body costs the server no
memory, and client addresses come from X-Forwarded-For only behind a named proxy."""

from __future__ import annotations

import http.cookiejar
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.server import Server, server_env

# Each server prepares the problems at start (trusted runs in grading children).
pytestmark = [pytest.mark.slow, pytest.mark.server, pytest.mark.sandbox]

MIB = 2**20


@pytest.fixture
def quiet_env(tmp_path: Path) -> dict[str, str]:
    """A server with no problems: nothing prepares in the background while we measure."""
    (tmp_path / "no-content" / "problems").mkdir(parents=True)
    return {**server_env(tmp_path), "JAXJUDGE_CONTENT_DIR": str(tmp_path / "no-content")}


@pytest.fixture
def server(quiet_env: dict[str, str]) -> Iterator[Server]:
    running = Server(quiet_env, 0)
    yield running
    running.stop()


def rss_bytes(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmRSS:\s+(\d+) kB", status)
    assert found
    return int(found[1]) * 1024


def post_raw(server: Server, head: bytes, body_chunks: Iterator[bytes]) -> bytes:
    """Send a request by hand (the body as it is produced); the first line of the answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head)
        try:
            for chunk in body_chunks:
                sock.sendall(chunk)
        except OSError:
            pass  # the server answered and closed before the body ended: as it should
        return sock.recv(4096).split(b"\r\n", 1)[0]


def fifty_megabytes(chunked: bool) -> Iterator[bytes]:
    block = b"x" * MIB
    for _ in range(50):
        yield (b"%x\r\n" % len(block) + block + b"\r\n") if chunked else block
    if chunked:
        yield b"0\r\n\r\n"


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_50_mb_body_is_refused_without_the_server_growing(server: Server, chunked: bool) -> None:
    framing = (
        b"Transfer-Encoding: chunked\r\n" if chunked else b"Content-Length: %d\r\n" % (50 * MIB)
    )
    head = (
        b"POST /api/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\n" + framing + b"\r\n"
    )
    small = b"2\r\n{}\r\n0\r\n\r\n" if chunked else b"{}"
    post_raw(server, head, iter([small]))  # warm every code path once
    before = rss_bytes(server.process.pid)
    started = time.monotonic()
    status = post_raw(server, head, fifty_megabytes(chunked))
    assert status == b"HTTP/1.1 413 Request Entity Too Large" or b" 413 " in status, status
    assert time.monotonic() - started < 10
    grown = rss_bytes(server.process.pid) - before
    assert grown < 5 * MIB, f"the server grew by {grown / MIB:.1f} MiB"


def sign_up(server: Server, name: str, forwarded_for: str) -> int:
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    form = opener.open(f"{server.url}/signup", timeout=30).read().decode()
    token = re.search(r'name="csrf_token" value="([^"]+)"', form)
    assert token
    data = urllib.parse.urlencode(
        {"name": name, "password": "long test password", "csrf_token": token[1]}
    ).encode()
    request = urllib.request.Request(f"{server.url}/signup", data=data)
    request.add_header("X-Forwarded-For", forwarded_for)
    try:
        with opener.open(request, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_a_client_cannot_choose_its_address_with_x_forwarded_for(server: Server) -> None:
    codes = [sign_up(server, f"user{i}", f"203.0.113.{i}") for i in range(7)]
    assert codes[:5] == [200] * 5  # each signed up (and followed the redirect home)
    assert codes[5:] == [429, 429]  # one address, whatever the header says


def test_behind_a_named_proxy_the_forwarded_address_counts(quiet_env: dict[str, str]) -> None:
    behind_proxy = Server(quiet_env, 0, "--forwarded-allow-ips", "127.0.0.1")
    try:
        codes = [sign_up(behind_proxy, f"user{i}", f"203.0.113.{i}") for i in range(7)]
    finally:
        behind_proxy.stop()
    assert codes == [200] * 7  # seven clients behind the proxy, one sign-up each
