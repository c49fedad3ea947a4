"""The platforms' public keys, fetched from their JWKS URLs and cached.

A key is found by the token's ``kid``. A kid not in the cached set makes one
fresh fetch (the platform rotated its keys), at most once every
``REFETCH_AFTER`` per URL so that tokens with made-up kids cannot make us hammer
the platform; cached sets expire after ``CACHE_SECONDS``. Only RSA keys are
used (LTI 1.3 signs with RS256).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import jwt

from app.lti.http import PlatformCallError, call

CACHE_SECONDS = 3600.0
REFETCH_AFTER = 2.0


class UnknownKeyError(Exception):
    """No key of the platform's set matches the token."""


@dataclass
class _Cached:
    keys: dict[str, Any]
    fetched_at: float


_cache: dict[str, _Cached] = {}
_lock = threading.Lock()


def _fetch(url: str) -> dict[str, Any]:
    body = call("GET", url).body
    if not isinstance(body, dict) or not isinstance(body.get("keys"), list):
        raise PlatformCallError(f"{url} is not a JWK set")
    keys: dict[str, Any] = {}
    for entry in body["keys"][:100]:
        if not isinstance(entry, dict) or entry.get("kty") != "RSA":
            continue
        if entry.get("use", "sig") != "sig":
            continue
        try:
            keys[str(entry.get("kid", ""))] = jwt.PyJWK(entry, algorithm="RS256").key
        except (jwt.PyJWKError, ValueError, TypeError):
            continue  # one bad key does not spoil the set
    return keys


_attempted: dict[str, float] = {}  # the last fetch tried per URL, failed ones included


def _refreshed(url: str, cached: _Cached | None, now: float) -> _Cached:
    """A fresh set, fetched at most once every ``REFETCH_AFTER`` per URL (failures
    count: an LMS that is down is not asked on every launch); while the LMS cannot be
    reached, the set it last published stands."""
    with _lock:
        if now - _attempted.get(url, -REFETCH_AFTER) < REFETCH_AFTER:
            if cached is None:
                raise PlatformCallError(f"{url} could not be read a moment ago")
            return cached
        _attempted[url] = now
    try:
        fresh = _Cached(_fetch(url), now)
    except PlatformCallError:
        if cached is None:
            raise
        return cached
    with _lock:
        _cache[url] = fresh
    return fresh


def key_for(url: str, kid: str | None) -> Any:
    """The public key ``kid`` names in the set at ``url`` (the only key, if no kid)."""
    now = time.monotonic()
    with _lock:
        cached = _cache.get(url)
    if cached is None or now - cached.fetched_at >= CACHE_SECONDS or kid not in cached.keys:
        cached = _refreshed(url, cached, now)
    if kid is None and len(cached.keys) == 1:
        return next(iter(cached.keys.values()))
    if kid is None or kid not in cached.keys:
        raise UnknownKeyError(f"the platform's key set has no key {kid!r}")
    return cached.keys[kid]


def forget() -> None:
    """Drop every cached set (tests; an admin changing a platform's JWKS URL)."""
    with _lock:
        _cache.clear()
        _attempted.clear()
