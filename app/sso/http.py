"""Calls jaxjudge makes to an identity provider (discovery, keys, tokens): bounded in
time and size, never following a redirect, JSON in. Any failure (refused, timed out, a
4xx or 5xx, a body that is not a JSON object) is one ``ProviderCallError`` whose message
says what the provider answered, for the log; people see one sentence about the provider.

(app/lti/http.py does the same for LMS calls; the layers keep app.sso from importing it.)
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

TIMEOUT_SECONDS = 10.0
MAX_BODY = 512 * 1024


class ProviderCallError(Exception):
    """A call to an identity provider failed."""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is an answer we refuse, never followed to another host


_opener = urllib.request.build_opener(_NoRedirects)


def call_json(
    method: str,
    url: str,
    *,
    form: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON object ``url`` answers with (2xx only)."""
    if not url.startswith(("https://", "http://")):
        raise ProviderCallError(f"not an http(s) URL: {url[:200]!r}")
    sent = {"Accept": "application/json", **(headers or {})}
    data = None
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        request = urllib.request.Request(url, data=data, method=method, headers=sent)
        with _opener.open(request, timeout=TIMEOUT_SECONDS) as response:
            raw = response.read(MAX_BODY + 1)
    except urllib.error.HTTPError as error:
        detail = error.read(500).decode("utf-8", "replace").strip()
        raise ProviderCallError(
            f"{method} {url} answered {error.code}: {detail or error.reason}"
        ) from None
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        raise ProviderCallError(
            f"{method} {url} failed: {getattr(error, 'reason', error)}"
        ) from None
    except (http.client.HTTPException, ValueError) as error:
        raise ProviderCallError(f"{method} {url} failed: {type(error).__name__}") from None
    if len(raw) > MAX_BODY:
        raise ProviderCallError(f"{method} {url} answered more than {MAX_BODY} bytes")
    try:
        body = json.loads(raw)
    except ValueError:
        raise ProviderCallError(f"{method} {url} answered something that is not JSON") from None
    if not isinstance(body, dict):
        raise ProviderCallError(f"{method} {url} answered JSON that is not an object")
    return body
