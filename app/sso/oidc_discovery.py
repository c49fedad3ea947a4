"""What jaxjudge knows of an OpenID provider: its discovery document
(``ISSUER/.well-known/openid-configuration``, kept an hour) and its signing keys (the
JWKS, kept an hour, fetched again when a token names a key it does not hold, at most
once every ``REFRESH_SECONDS``: a rotated key works at once, a forged kid cannot make us
hammer the provider). A failed fetch is never kept."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from jwt import PyJWK
from jwt.exceptions import PyJWKError

from app.sso.http import ProviderCallError, call_json

KEEP_SECONDS = 3600.0
REFRESH_SECONDS = 30.0
SIGNING_KEY_TYPES = {"RSA", "EC"}


@dataclass(frozen=True)
class Discovery:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    token_auth: str  # client_secret_basic or client_secret_post


def _endpoint(document: dict[str, Any], field: str) -> str:
    value = document.get(field)
    if not isinstance(value, str) or not value.startswith(("https://", "http://")):
        raise ProviderCallError(f"the discovery document has no usable {field}")
    return value


def _discover(issuer: str) -> Discovery:
    document = call_json("GET", issuer.rstrip("/") + "/.well-known/openid-configuration")
    if document.get("issuer") != issuer:  # OpenID Connect Discovery 1.0, section 4.3
        raise ProviderCallError(
            f"the discovery document names issuer {str(document.get('issuer'))[:200]!r},"
            f" not {issuer!r}"
        )
    methods = document.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    if not isinstance(methods, list):
        methods = ["client_secret_basic"]
    if "client_secret_basic" in methods:
        token_auth = "client_secret_basic"
    elif "client_secret_post" in methods:
        token_auth = "client_secret_post"
    else:
        raise ProviderCallError("the provider takes neither client_secret_basic nor _post")
    return Discovery(
        issuer=issuer,
        authorization_endpoint=_endpoint(document, "authorization_endpoint"),
        token_endpoint=_endpoint(document, "token_endpoint"),
        jwks_uri=_endpoint(document, "jwks_uri"),
        token_auth=token_auth,
    )


def _keys(jwks_uri: str) -> dict[str, PyJWK]:
    """The provider's signing keys by kid (a key without a kid is kept under "")."""
    document = call_json("GET", jwks_uri)
    listed = document.get("keys")
    if not isinstance(listed, list):
        raise ProviderCallError("the JWKS has no keys list")
    keys: dict[str, PyJWK] = {}
    for entry in listed:
        if not isinstance(entry, dict) or entry.get("kty") not in SIGNING_KEY_TYPES:
            continue  # symmetric keys are never a provider's signature
        if entry.get("use", "sig") != "sig":
            continue
        try:
            keys[str(entry.get("kid", ""))] = PyJWK(entry)
        except (PyJWKError, ValueError, TypeError, json.JSONDecodeError):
            continue  # one key we cannot read spoils none of the others
    return keys


class _Cache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._discovered: dict[str, tuple[float, Discovery]] = {}
        self._keys: dict[str, tuple[float, dict[str, PyJWK]]] = {}

    def discovery(self, issuer: str) -> Discovery:
        with self._lock:
            kept = self._discovered.get(issuer)
        if kept and time.monotonic() - kept[0] < KEEP_SECONDS:
            return kept[1]
        found = _discover(issuer)
        with self._lock:
            self._discovered[issuer] = (time.monotonic(), found)
        return found

    def key(self, jwks_uri: str, kid: str) -> PyJWK | None:
        """The key ``kid`` names; a token without a kid gets the provider's only key."""
        with self._lock:
            kept = self._keys.get(jwks_uri)
        age = time.monotonic() - kept[0] if kept else None
        if kept and age is not None and age < KEEP_SECONDS and _pick(kept[1], kid):
            return _pick(kept[1], kid)
        if kept and age is not None and age < REFRESH_SECONDS:
            return _pick(kept[1], kid)  # fetched a moment ago: the kid is not the provider's
        keys = _keys(jwks_uri)
        with self._lock:
            self._keys[jwks_uri] = (time.monotonic(), keys)
        return _pick(keys, kid)

    def forget(self) -> None:
        with self._lock:
            self._discovered.clear()
            self._keys.clear()


def _pick(keys: dict[str, PyJWK], kid: str) -> PyJWK | None:
    if kid:
        return keys.get(kid)
    return next(iter(keys.values())) if len(keys) == 1 else None


_cache = _Cache()
discovery = _cache.discovery
signing_key = _cache.key
forget = _cache.forget  # tests, and an operator's reload
