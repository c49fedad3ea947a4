"""An LTI 1.3 platform (an LMS, as far as a tool can tell) for the tests: a real HTTP
server on 127.0.0.1 with its own RSA keys.

It publishes its JWKS, answers OIDC authorization requests with a page that posts a
signed id_token to the tool (as Canvas and Moodle do), grants access tokens only for
a client assertion signed by a key of the tool's JWKS, and records what arrives at
its AGS line-item and score endpoints; it serves an NRPS roster (paged), an OpenID
configuration and a Dynamic Registration endpoint. ``down`` makes every service
endpoint answer 503 (an outage).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
TEACHING_ASSISTANT = (
    "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"
)
CLIENT_ID = "jaxjudge-client"
DEPLOYMENT_ID = "deployment-1"
CONTEXT_ID = "course-101"


def _private_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@dataclass
class User:
    sub: str
    name: str
    email: str
    roles: list[str]


@dataclass
class Recorded:
    scores: list[dict[str, Any]] = field(default_factory=list)
    lineitems: list[dict[str, Any]] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    registrations: list[dict[str, Any]] = field(default_factory=list)
    deep_link_responses: list[dict[str, Any]] = field(default_factory=list)


class Platform:
    def __init__(
        self, tool_jwks: Callable[[], dict[str, Any]] | None = None, host: str = "127.0.0.1"
    ) -> None:
        self.key = _private_key()
        self.kid = "platform-key-1"
        self.old_keys: list[tuple[str, rsa.RSAPrivateKey]] = []
        self.tool_jwks = tool_jwks  # how the platform reads the tool's public keys
        self.recorded = Recorded()
        self.down = False
        self.jwks_fetches = 0
        self.on_score: Callable[[], None] | None = None  # runs as a score arrives
        self.tool_login_url = ""  # where the course page's activity link starts a launch
        self.members: list[User] = []
        self.page_size = 2
        self.users: dict[str, User] = {}
        self.launches: dict[str, dict[str, Any]] = {}  # lti_message_hint -> launch claims
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        # ``host``: the name the platform is reached by ("localhost" makes it another
        # site than a tool on 127.0.0.1, as an LMS is); it listens on loopback either way.
        self.url = f"http://{host}:{self._server.server_address[1]}"
        self.issuer = self.url
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # What an admin enters in jaxjudge for this platform.
    @property
    def login_url(self) -> str:
        return f"{self.url}/auth"

    @property
    def token_url(self) -> str:
        return f"{self.url}/token"

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/jwks"

    def rotate_key(self) -> None:
        self.old_keys.append((self.kid, self.key))
        self.key, self.kid = _private_key(), f"platform-key-{len(self.old_keys) + 1}"

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid, key in [(self.kid, self.key), *self.old_keys]:
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            keys.append({**jwk, "kid": kid, "alg": "RS256", "use": "sig"})
        return {"keys": keys}

    def id_token(
        self,
        *,
        key: rsa.RSAPrivateKey | None = None,
        kid: str | None = None,
        **claims: Any,
    ) -> str:
        """A launch's id_token signed RS256 by the platform's key (or ``key``)."""
        return jwt.encode(
            self.launch_claims(**claims),
            _pem(key or self.key),
            algorithm="RS256",
            headers={"kid": kid or self.kid},
        )

    def launch_claims(
        self,
        *,
        nonce: str,
        user: User,
        message_type: str = "LtiResourceLinkRequest",
        resource_link_id: str | None = "link-1",
        context_id: str | None = CONTEXT_ID,
        custom: dict[str, str] | None = None,
        lineitem: str | None = None,
        extra: dict[str, Any] | None = None,
        lifetime: int = 300,
    ) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": CLIENT_ID,
            "sub": user.sub,
            "iat": now,
            "exp": now + lifetime,
            "nonce": nonce,
            "name": user.name,
            "email": user.email,
            LTI + "message_type": message_type,
            LTI + "version": "1.3.0",
            LTI + "deployment_id": DEPLOYMENT_ID,
            LTI + "target_link_uri": "https://tool.example/lti/launch",
            LTI + "roles": user.roles,
            "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": {
                "context_memberships_url": f"{self.url}/contexts/{context_id}/memberships",
                "service_versions": ["2.0"],
            },
            "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": {
                "scope": [
                    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
                    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
                ],
                "lineitems": f"{self.url}/contexts/{context_id}/lineitems",
                **({"lineitem": lineitem} if lineitem else {}),
            },
        }
        if context_id is not None:
            claims[LTI + "context"] = {"id": context_id, "title": "Deep Learning 101"}
        if resource_link_id is not None:
            claims[LTI + "resource_link"] = {"id": resource_link_id}
        if custom:
            claims[LTI + "custom"] = custom
        if message_type == "LtiDeepLinkingRequest":
            claims["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = {
                "deep_link_return_url": f"{self.url}/deep-link-return",
                "accept_types": ["ltiResourceLink"],
                "accept_presentation_document_targets": ["iframe", "window"],
                "accept_multiple": True,
                "data": "opaque-platform-data",
            }
        claims.update(extra or {})
        return claims

    def initiation(self, user: User, hint: str = "link-1") -> dict[str, str]:
        """The third-party-initiated login request the platform sends the browser with."""
        self.users[user.sub] = user
        return {
            "iss": self.issuer,
            "login_hint": user.sub,
            "target_link_uri": "https://tool.example/lti/launch",
            "lti_message_hint": hint,
            "client_id": CLIENT_ID,
            "lti_deployment_id": DEPLOYMENT_ID,
        }

    def scores_for(self, sub: str) -> list[dict[str, Any]]:
        return [s for s in self.recorded.scores if s["body"]["userId"] == sub]

    def _verify_assertion(self, form: dict[str, str]) -> str | None:
        """Why a token request is refused (None: granted)."""
        if form.get("grant_type") != "client_credentials":
            return "unsupported_grant_type"
        assertion = form.get("client_assertion", "")
        if self.tool_jwks is None:
            return "no tool keys"
        keys = {k["kid"]: jwt.PyJWK(k).key for k in self.tool_jwks()["keys"]}
        try:
            kid = jwt.get_unverified_header(assertion).get("kid")
            jwt.decode(
                assertion,
                keys[kid],
                algorithms=["RS256"],
                audience=self.token_url,
                issuer=CLIENT_ID,
                options={"require": ["exp", "iat", "jti", "sub"]},
            )
        except (jwt.InvalidTokenError, KeyError) as error:
            return f"invalid_client: {error}"
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def _send(
                self,
                status: int,
                body: Any,
                content_type: str = "application/json",
                headers: dict[str, str] | None = None,
            ) -> None:
                raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length", 0)))

            def _authorized(self) -> bool:
                return self.headers.get("Authorization", "").startswith("Bearer platform-token-")

            def do_GET(self) -> None:
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/jwks":
                    platform.jwks_fetches += 1
                    self._send(200, platform.jwks())
                elif url.path == "/auth":
                    self._authorize(query)
                elif url.path == "/moved-configuration":  # a redirect to the real one
                    self._send(302, {}, headers={"Location": "/.well-known/openid-configuration"})
                elif url.path == "/.well-known/openid-configuration":
                    self._send(200, platform.openid_configuration())
                elif url.path == "/course":
                    self._course_page(query)
                elif url.path.endswith("/memberships"):
                    self._memberships(query)
                else:
                    self._send(404, {"error": "not found"})

            def _authorize(self, query: dict[str, str]) -> None:
                user = platform.users.get(query.get("login_hint", ""))
                if (
                    user is None
                    or query.get("client_id") != CLIENT_ID
                    or query.get("response_mode") != "form_post"
                    or query.get("scope") != "openid"
                ):
                    self._send(400, {"error": "invalid_request"})
                    return
                options = platform.launches.get(query.get("lti_message_hint", ""), {})
                token = platform.id_token(nonce=query["nonce"], user=user, **options)
                page = (
                    "<!doctype html><title>LMS</title><body>"
                    f'<form id="launch" method="post" action="{html.escape(query["redirect_uri"])}">'
                    f'<input type="hidden" name="id_token" value="{token}">'
                    f'<input type="hidden" name="state" value="{html.escape(query["state"])}">'
                    '<button type="submit">Continue</button></form>'
                    '<script>document.getElementById("launch").submit()</script></body>'
                )
                self._send(200, page, "text/html")

            def _course_page(self, query: dict[str, str]) -> None:
                """The LMS's course page as ``as`` sees it: one activity, opened by the
                third-party-initiated login (a link to the tool's login URL)."""
                user = platform.users[query["as"]]
                start = f"{platform.tool_login_url}?{urlencode(platform.initiation(user))}"
                if query.get("frame"):  # the activity shown inside the course page
                    activity = f'<iframe title="jaxjudge" src="{html.escape(start)}" width="900" height="600"></iframe>'
                else:
                    activity = (
                        f'<p><a href="{html.escape(start)}">Open the jaxjudge activity</a></p>'
                    )
                page = (
                    f"<!doctype html><title>LMS course</title><h1>Deep Learning 101</h1>{activity}"
                )
                self._send(200, page, "text/html")

            def _memberships(self, query: dict[str, str]) -> None:
                if platform.down:
                    self._send(503, {"error": "down"})
                    return
                if not self._authorized():
                    self._send(401, {"error": "unauthorized"})
                    return
                start = int(query.get("from", 0))
                page = platform.members[start : start + platform.page_size]
                headers = {}
                if start + platform.page_size < len(platform.members):
                    base = self.path.split("?", 1)[0]
                    nxt = f"{platform.url}{base}?from={start + platform.page_size}"
                    headers["Link"] = f'<{nxt}>; rel="next"'
                body = {
                    "id": platform.url + self.path,
                    "context": {"id": CONTEXT_ID},
                    "members": [
                        {
                            "user_id": m.sub,
                            "name": m.name,
                            "email": m.email,
                            "roles": m.roles,
                            "status": "Active",
                        }
                        for m in page
                    ],
                }
                self._send(
                    200, body, "application/vnd.ims.lti-nrps.v2.membershipcontainer+json", headers
                )

            def do_POST(self) -> None:
                url = urlparse(self.path)
                raw = self._body()
                if url.path == "/token":
                    form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                    platform.recorded.token_requests.append(form)
                    if platform.down:
                        self._send(503, {"error": "down"})
                        return
                    refused = platform._verify_assertion(form)
                    if refused:
                        self._send(400, {"error": refused})
                        return
                    token = "platform-token-" + secrets.token_hex(8)
                    self._send(
                        200,
                        {
                            "access_token": token,
                            "token_type": "Bearer",
                            "expires_in": 3600,
                            "scope": form.get("scope", ""),
                        },
                    )
                elif url.path.endswith("/scores") and url.path.startswith("/contexts/"):
                    if platform.down:
                        self._send(503, {"error": "down"})
                        return
                    if not self._authorized():
                        self._send(401, {"error": "unauthorized"})
                        return
                    if platform.on_score is not None:
                        platform.on_score()
                    platform.recorded.scores.append(
                        {
                            "lineitem": platform.url + url.path.removesuffix("/scores"),
                            "content_type": self.headers.get("Content-Type"),
                            "body": json.loads(raw),
                        }
                    )
                    self._send(204, "", "text/plain")
                elif url.path.endswith("/lineitems"):
                    if not self._authorized():
                        self._send(401, {"error": "unauthorized"})
                        return
                    item = json.loads(raw)
                    item["id"] = f"{platform.url}{url.path}/{len(platform.recorded.lineitems) + 1}"
                    platform.recorded.lineitems.append(item)
                    self._send(201, item, "application/vnd.ims.lis.v2.lineitem+json")
                elif url.path == "/register":
                    if self.headers.get("Authorization") != "Bearer registration-token":
                        self._send(401, {"error": "bad registration token"})
                        return
                    request = json.loads(raw)
                    platform.recorded.registrations.append(request)
                    self._send(
                        200,
                        {
                            **request,
                            "client_id": CLIENT_ID,
                            "https://purl.imsglobal.org/spec/lti-tool-configuration": {
                                **request["https://purl.imsglobal.org/spec/lti-tool-configuration"],
                                "deployment_id": DEPLOYMENT_ID,
                            },
                        },
                    )
                elif url.path == "/deep-link-return":
                    form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                    platform.recorded.deep_link_responses.append(form)
                    self._send(
                        200, "<!doctype html><title>LMS</title><p id='added'>Added</p>", "text/html"
                    )
                else:
                    self._send(404, {"error": "not found"})

        return Handler

    def openid_configuration(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.login_url,
            "token_endpoint": self.token_url,
            "jwks_uri": self.jwks_url,
            "registration_endpoint": f"{self.url}/register",
            "https://purl.imsglobal.org/spec/lti-platform-configuration": {
                "product_family_code": "testlms",
                "version": "1.0",
                "messages_supported": [
                    {"type": "LtiResourceLinkRequest"},
                    {"type": "LtiDeepLinkingRequest"},
                ],
            },
        }

    def decode_deep_link_response(self, token: str) -> dict[str, Any]:
        assert self.tool_jwks is not None
        keys = {k["kid"]: jwt.PyJWK(k).key for k in self.tool_jwks()["keys"]}
        kid = jwt.get_unverified_header(token)["kid"]
        decoded: dict[str, Any] = jwt.decode(
            token, keys[kid], algorithms=["RS256"], audience=self.issuer, issuer=CLIENT_ID
        )
        return decoded


def forge(header: dict[str, Any], claims: dict[str, Any], secret: bytes | None) -> str:
    """A JWT an attacker writes by hand: ``alg: none`` (no signature) or an HMAC keyed
    with bytes they know (the platform's public key), which JWT libraries refuse to make."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    signing_input = f"{part(header)}.{part(claims)}"
    if secret is None:
        return signing_input + "."
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def public_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
