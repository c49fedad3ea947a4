"""Calls jaxjudge makes to an LMS: bounded in time and size, JSON in and out.

Every call has a timeout and reads at most ``MAX_BODY`` bytes; any failure
(refused, timed out, a 4xx or 5xx, a body that is not JSON) is one
``PlatformCallError`` whose message says what the platform answered, so the
outbox can show it to instructors.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

TIMEOUT_SECONDS = 10.0
MAX_BODY = 1024 * 1024


class PlatformCallError(Exception):
    """A call to the platform failed; ``status`` is its HTTP status, if it answered."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    @property
    def permanent(self) -> bool:
        """A 4xx other than 401, 408 and 429 will not change by retrying."""
        return (
            self.status is not None
            and 400 <= self.status < 500
            and self.status
            not in {
                401,
                408,
                429,
            }
        )


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    headers: dict[str, str]


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx itself is the answer (an HTTPError)


_without_redirects = urllib.request.build_opener(_NoRedirects)


def call(
    method: str,
    url: str,
    *,
    json_body: Any = None,
    form: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
    follow_redirects: bool = True,
) -> Answer:
    if not url.startswith(("https://", "http://")):
        raise PlatformCallError(f"not an http(s) URL: {url[:200]!r}")
    data = None
    sent = {"Accept": "application/json", **(headers or {})}
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    elif json_body is not None:
        data = json.dumps(json_body).encode()
        sent["Content-Type"] = content_type
    try:
        request = urllib.request.Request(url, data=data, method=method, headers=sent)
        opener = urllib.request.urlopen if follow_redirects else _without_redirects.open
        with opener(request, timeout=TIMEOUT_SECONDS) as response:
            raw = response.read(MAX_BODY + 1)
            status = response.status
            answer_headers = {k.lower(): v for k, v in response.headers.items()}
    except urllib.error.HTTPError as error:
        detail = error.read(2000).decode("utf-8", "replace").strip()
        raise PlatformCallError(
            f"{method} {url} answered {error.code}: {detail[:500] or error.reason}", error.code
        ) from None
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise PlatformCallError(f"{method} {url} failed: {reason}") from None
    except (http.client.HTTPException, ValueError) as error:  # garbage answers, bad URLs
        raise PlatformCallError(f"{method} {url} failed: {type(error).__name__}") from None
    if len(raw) > MAX_BODY:
        raise PlatformCallError(f"{method} {url} answered more than {MAX_BODY} bytes", status)
    if not raw.strip():
        return Answer(status, None, answer_headers)
    try:
        return Answer(status, json.loads(raw), answer_headers)
    except ValueError:
        raise PlatformCallError(
            f"{method} {url} answered something that is not JSON", status
        ) from None
