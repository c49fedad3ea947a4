"""The HTTP client every jaxjudge command uses (this package's, and the full
platform's `jaxjudge submit`, `courses`, `grades`...).

Every failure is one line (``CommandError``) that says what to do, never a
traceback: an error answer with or without a JSON body, a server that cannot be
reached, a timeout. Busy answers (503, 429 with Retry-After) and timeouts are
retried a few times; a POST carries an Idempotency-Key, so a retry after a
timeout returns the submission the first attempt stored instead of storing a
second. A redirect to another origin (scheme, host or port) is followed without
the token: urllib would send every header on to wherever a server points.
Standard library only.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

from jaxjudge_client.errors import CommandError

RETRIES = 3
# socket.timeout is TimeoutError from Python 3.10 on, its own class before.
TIMEOUTS = (TimeoutError, socket.timeout)
# What proves who the caller is: never sent to an origin the server did not live at.
CREDENTIALS = ("Authorization", "Cookie")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)


class _CredentialsStayHome(urllib.request.HTTPRedirectHandler):
    """Follows a redirect as urllib does, less the credentials when it leaves the origin.
    Once dropped they stay dropped, even if a later redirect comes back."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(new.full_url) != _origin(req.full_url):
            for name in CREDENTIALS:
                new.remove_header(name)
        return new


_opener = urllib.request.build_opener(_CredentialsStayHome)


def _detail(error: urllib.error.HTTPError) -> str:
    with error:
        raw = error.read()[:4096] if error.fp is not None else b""
    try:
        detail = json.loads(raw).get("detail", error.reason)
    except (ValueError, AttributeError):
        text = raw.decode("utf-8", "replace").strip()
        detail = text.splitlines()[0][:200] if text else error.reason
    return detail if isinstance(detail, str) else json.dumps(detail)[:300]


def _advice(code: int, server: str) -> str:
    """What the person can do about an error answer."""
    if code == 401:
        return f" Make a new API token on {server}/account and set JAXJUDGE_TOKEN."
    if code == 429:
        return " Wait a little, then try again."
    return ""


class Upload:
    """A multipart/form-data body: text fields and one file."""

    def __init__(self, fields: dict[str, str], name: str, filename: str, content: bytes) -> None:
        self.fields, self.name, self.filename, self.content = fields, name, filename, content

    def encoded(self) -> tuple[bytes, str]:
        boundary = uuid.uuid4().hex
        parts = []
        for key, value in self.fields.items():
            parts.append(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n'
                f"{value}\r\n".encode()
            )
        safe = self.filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{self.name}";'
            f' filename="{safe}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
            + self.content
            + f"\r\n--{boundary}--\r\n".encode()
        )
        return b"".join(parts), f"multipart/form-data; boundary={boundary}"


class ApiClient:
    def __init__(self, server: str, token: str, *, timeout: float = 30.0) -> None:
        self.server, self.token, self.timeout = server.rstrip("/"), token, timeout

    def request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        text: bool = False,
        csv_body: str | None = None,
        upload: Upload | None = None,
    ) -> Any:
        """The answer's JSON (``text``: its body as text, for CSV exports); ``csv_body``
        is sent as text/csv instead of a JSON body (CSV uploads), ``upload`` as
        multipart/form-data (a notebook)."""
        url = f"{self.server}{path}"
        data = json.dumps(body).encode() if body is not None else None
        kind = "application/json"
        if csv_body is not None:
            data, kind = csv_body.encode("utf-8"), "text/csv"
        if upload is not None:
            data, kind = upload.encoded()
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": kind}
        if method == "POST":
            headers["Idempotency-Key"] = uuid.uuid4().hex  # the same for every retry
        for attempt in range(1, RETRIES + 1):
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                with _opener.open(request, timeout=self.timeout) as response:
                    raw = response.read()
                    if text:
                        return raw.decode("utf-8")
                    return json.loads(raw) if raw else None
            except urllib.error.HTTPError as error:
                if error.code in (429, 503) and attempt < RETRIES:
                    wait = min(10.0, float(error.headers.get("Retry-After") or 2))
                    error.close()
                    time.sleep(wait)
                    continue
                raise CommandError(
                    f"the server answered {error.code}: {_detail(error)}"
                    + _advice(error.code, self.server)
                ) from None
            except urllib.error.URLError as error:
                if not isinstance(error.reason, TIMEOUTS):
                    raise CommandError(
                        f"cannot reach {self.server}: {error.reason}. Is the address right"
                        " (--server or JAXJUDGE_SERVER) and the server running?"
                    ) from None
                if attempt < RETRIES:
                    continue
                raise CommandError(self._no_answer(url)) from None
            except TIMEOUTS:
                if attempt < RETRIES:
                    continue
                raise CommandError(self._no_answer(url)) from None
            except OSError as error:  # the connection broke mid-answer
                raise CommandError(f"{url}: the connection failed ({error})") from None
            except ValueError:
                raise CommandError(f"{url}: the answer is not JSON") from None
        raise CommandError(f"{url}: the server stayed busy ({RETRIES} tries)")

    def events(self, path: str, *, timeout: float) -> Iterator[tuple[str, Any]]:
        """A Server-Sent Events stream at ``path``: each event's name and its data (JSON),
        until the stream ends. Whatever fails (refused with 503, a proxy that buffers,
        a broken connection) raises ``OSError`` or ``ValueError``: the caller polls."""
        request = urllib.request.Request(
            f"{self.server}{path}",
            headers={"Authorization": f"Bearer {self.token}", "Accept": "text/event-stream"},
        )
        with _opener.open(request, timeout=timeout) as stream:
            kind = "message"
            for raw in stream:
                line = raw.decode("utf-8").rstrip("\r\n")
                if line.startswith("event:"):
                    kind = line.removeprefix("event:").strip()
                elif line.startswith("data:"):
                    yield kind, json.loads(line.removeprefix("data:").strip())

    def _no_answer(self, url: str) -> str:
        return f"{url}: no answer within {self.timeout:g} s ({RETRIES} tries)"
