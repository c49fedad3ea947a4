"""An OpenID provider for the tests (a university's IdP, Google or Keycloak, as far as a
relying party can tell): a real HTTP server on 127.0.0.1 with its own RSA key.

It serves discovery, its JWKS, an authorization endpoint that signs in ``user`` at once
and redirects back with a code (or ``error=access_denied`` when ``deny``), and a token
endpoint that checks the client's secret, the redirect URI, the PKCE verifier and that a
code is used once. ``next_token`` makes the next ID token misbehave (a wrong nonce, key,
audience or issuer, ``alg: none``, expired); ``broken`` makes an endpoint answer a status
or garbage."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlparse

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.lti_platform import _pem, forge, public_pem

CLIENT_ID = "jaxjudge-oidc"
CLIENT_SECRET = "s3cret: with/odd+characters"


@dataclass
class Person:
    sub: str = "uni-4711"
    name: str = "Ada Lovelace"
    email: str = "ada@uni.example"
    email_verified: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    nonce: str
    challenge: str
    person: Person
    used: bool = False


class Provider:
    def __init__(self, token_auth: str = "client_secret_basic") -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "idp-key-1"
        self.token_auth = token_auth
        self.person = Person()
        self.redirect_uris: set[str] = set()
        self.deny = False
        self.next_token: dict[str, Any] = {}  # what the next ID token gets wrong
        self.broken: dict[str, Any] = {}  # path -> a status (int) or a body (str) to answer
        self.token_requests: list[dict[str, str]] = []
        self.jwks_fetches = 0
        self._codes: dict[str, _Code] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = self.issuer = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def setting(self, name: str = "uni", **more: Any) -> dict[str, Any]:
        """The entry an operator puts in JAXJUDGE_OIDC_PROVIDERS for this provider."""
        return {
            "name": name,
            "label": "University account",
            "issuer": self.issuer,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            **more,
        }

    def configuration(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "jwks_uri": f"{self.url}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [self.token_auth],
        }

    def jwks(self) -> dict[str, Any]:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**jwk, "kid": self.kid, "alg": "RS256", "use": "sig"}]}

    def rotate_key(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = f"idp-key-{secrets.token_hex(4)}"

    def id_token(self, code: _Code) -> str:
        wrong, now = self.next_token, int(time.time())
        self.next_token = {}
        person = code.person
        claims: dict[str, Any] = {
            "iss": wrong.get("iss", self.issuer),
            "sub": person.sub,
            "aud": wrong.get("aud", code.client_id),
            "iat": now - wrong.get("age", 0),
            "exp": now + 300 - wrong.get("age", 0),
            "nonce": wrong.get("nonce", code.nonce),
            "name": person.name,
            "email": person.email,
            "email_verified": person.email_verified,
            **person.extra,
            **wrong.get("claims", {}),
        }
        header = {"kid": self.kid}
        if wrong.get("alg") == "none":
            return forge({"alg": "none", "typ": "JWT", "kid": self.kid}, claims, None)
        if wrong.get("alg") == "HS256":  # the provider's public key as an HMAC secret
            return forge(
                {"alg": "HS256", "typ": "JWT", "kid": self.kid}, claims, public_pem(self.key)
            )
        key = self.key
        if wrong.get("key") == "other":  # a key the provider never published, under its kid
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return jwt.encode(claims, _pem(key), algorithm="RS256", headers=header)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                broken = provider.broken.get(urlparse(self.path).path)
                if isinstance(broken, int):
                    status, body = broken, {"error": "server_error"}
                elif isinstance(broken, str):
                    status, body = 200, broken
                raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/.well-known/openid-configuration":
                    self._send(200, provider.configuration())
                elif url.path == "/jwks":
                    provider.jwks_fetches += 1
                    self._send(200, provider.jwks())
                elif url.path == "/authorize":
                    self._authorize(query)
                else:
                    self._send(404, {"error": "not found"})

            def _authorize(self, query: dict[str, str]) -> None:
                redirect_uri = query.get("redirect_uri", "")
                if (
                    query.get("client_id") != CLIENT_ID
                    or redirect_uri not in provider.redirect_uris
                    or query.get("response_type") != "code"
                    or query.get("code_challenge_method") != "S256"
                    or not query.get("code_challenge")
                    or not query.get("nonce")
                    or "openid" not in query.get("scope", "").split()
                ):
                    self._send(400, {"error": "invalid_request", "query": query})
                    return
                back = {"state": query.get("state", "")}
                if provider.deny:
                    back["error"] = "access_denied"
                else:
                    code = secrets.token_urlsafe(16)
                    provider._codes[code] = _Code(
                        CLIENT_ID,
                        redirect_uri,
                        query["nonce"],
                        query["code_challenge"],
                        provider.person,
                    )
                    back["code"] = code
                self._send(302, {}, headers={"Location": f"{redirect_uri}?{urlencode(back)}"})

            def do_POST(self) -> None:
                if urlparse(self.path).path != "/token":
                    self._send(404, {"error": "not found"})
                    return
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                form = {k: v[0] for k, v in parse_qs(raw).items()}
                provider.token_requests.append(form)
                if not self._client_ok(form):
                    self._send(401, {"error": "invalid_client"})
                    return
                code = provider._codes.get(form.get("code", ""))
                verifier = form.get("code_verifier", "")
                challenge = (
                    base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
                    .rstrip(b"=")
                    .decode()
                )
                if (
                    code is None
                    or code.used
                    or form.get("grant_type") != "authorization_code"
                    or form.get("redirect_uri") != code.redirect_uri
                    or challenge != code.challenge
                ):
                    self._send(400, {"error": "invalid_grant"})
                    return
                code.used = True
                self._send(
                    200,
                    {
                        "access_token": secrets.token_urlsafe(16),
                        "token_type": "Bearer",
                        "expires_in": 300,
                        "id_token": provider.id_token(code),
                    },
                )

            def _client_ok(self, form: dict[str, str]) -> bool:
                if provider.token_auth == "client_secret_post":
                    return (
                        form.get("client_id") == CLIENT_ID
                        and form.get("client_secret") == CLIENT_SECRET
                    )
                basic = self.headers.get("Authorization", "")
                if not basic.startswith("Basic "):
                    return False
                pair = base64.b64decode(basic[6:]).decode()
                client_id, _, secret = pair.partition(":")
                return unquote(client_id) == CLIENT_ID and unquote(secret) == CLIENT_SECRET

        return Handler
