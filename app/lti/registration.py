"""LTI Dynamic Registration 1.0: the LMS admin pastes one URL, jaxjudge reads the
platform's OpenID configuration, registers itself at the platform's registration
endpoint, and records the platform with the client id and deployment it was given.

The URL carries an invitation a jaxjudge admin made (``invitation``, signed, seven
days): without one anybody could register a platform of their own and launch into
jaxjudge as its instructors; each invitation registers one platform. The calls go over
https (or to this machine), and a failed one reports the LMS's status, never its answer.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy.orm import Session

from app.core.sessions import secret_key
from app.lti import claims
from app.lti.http import PlatformCallError, call
from app.lti.platforms import PlatformIn, add
from app.models import LtiInvitationUse, LtiPlatform

INVITATION_SECONDS = 7 * 24 * 3600
PLATFORM_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-platform-configuration"
TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"


class RegistrationError(Exception):
    """Registration cannot go on; the message says why, for the LMS admin."""


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret_key(), salt="jaxjudge-lti-registration")


def invitation(note: str = "") -> str:
    return str(_serializer().dumps({"id": secrets.token_urlsafe(16), "note": note[:100]}))


def check_invitation(session: Session, token: str) -> str:
    """The invitation's id, if jaxjudge made it, it is fresh and no platform used it."""
    try:
        found = _serializer().loads(token, max_age=INVITATION_SECONDS)
    except SignatureExpired:
        raise RegistrationError("This registration link has expired; ask for a new one.") from None
    except BadSignature:
        raise RegistrationError("This registration link is not one jaxjudge made.") from None
    invitation_id = found.get("id") if isinstance(found, dict) else None
    if not isinstance(invitation_id, str):
        raise RegistrationError("This registration link is not one jaxjudge made.")
    if session.get(LtiInvitationUse, invitation_id) is not None:
        raise RegistrationError("This registration link was used already; ask for a new one.")
    return invitation_id


def _loopback(url: str) -> bool:
    return urlparse(url).hostname in {"localhost", "127.0.0.1", "::1"}


def _acceptable(url: str) -> bool:
    """https, or http to this machine only (an LMS on the same host, the tests): keys and
    tokens must not travel where a network could swap them."""
    return url.startswith("https://") or (url.startswith("http://") and _loopback(url))


def _call(method: str, url: str, **kwargs: Any) -> Any:
    """The LMS's answer; on failure, only its status, never its body: an invitation's
    holder must not read other machines' pages through jaxjudge. Redirects are not
    followed: the checks above hold for the URL that answers."""
    if not _acceptable(url):
        raise RegistrationError(f"jaxjudge registers only over https ({url[:200]!r}).")
    try:
        return call(method, url, follow_redirects=False, **kwargs).body
    except PlatformCallError as error:
        answered = f"answered HTTP {error.status}" if error.status else "could not be reached"
        raise RegistrationError(f"{urlparse(url).netloc} {answered}.") from None


@dataclass(frozen=True)
class PlatformConfiguration:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    registration_endpoint: str
    product: str


def read_configuration(url: str) -> PlatformConfiguration:
    body = _call("GET", url)
    if not isinstance(body, dict):
        raise RegistrationError("The LMS's OpenID configuration is not a JSON object.")
    fields = {}
    for name in (
        "issuer",
        "authorization_endpoint",
        "token_endpoint",
        "jwks_uri",
        "registration_endpoint",
    ):
        value = body.get(name)
        limit = 255 if name == "issuer" else 500
        if not isinstance(value, str) or not _acceptable(value) or len(value) > limit:
            raise RegistrationError(f"The LMS's OpenID configuration has no valid {name!r}.")
        fields[name] = value
    # The configuration must come from its issuer's own host (the spec's rule against a
    # configuration that claims someone else's issuer): same scheme, host and port.
    served, issuer = urlparse(url), urlparse(fields["issuer"])
    if (served.scheme, served.netloc) != (issuer.scheme, issuer.netloc):
        raise RegistrationError("The OpenID configuration is not served by its issuer.")
    platform = body.get(PLATFORM_CONFIGURATION, {})
    product = platform.get("product_family_code", "") if isinstance(platform, dict) else ""
    return PlatformConfiguration(product=str(product)[:60], **fields)


def tool_registration(base_url: str) -> dict[str, Any]:
    """What jaxjudge asks the platform to register (the client metadata)."""
    host = urlparse(base_url).netloc
    return {
        "application_type": "web",
        "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": f"{base_url}/lti/login",
        "redirect_uris": [f"{base_url}/lti/launch"],
        "client_name": "jaxjudge",
        "jwks_uri": f"{base_url}/lti/jwks",
        "token_endpoint_auth_method": "private_key_jwt",
        "scope": " ".join(claims.TOOL_SCOPES),
        TOOL_CONFIGURATION: {
            "domain": host,
            "target_link_uri": f"{base_url}/lti/launch",
            "claims": ["iss", "sub", "name", "given_name", "family_name", "email"],
            "messages": [
                {"type": claims.DEEP_LINKING_REQUEST, "label": "jaxjudge problems"},
                {"type": claims.RESOURCE_LINK_REQUEST},
            ],
            "description": "Graded JAX, Flax and Optax exercises.",
        },
    }


def register(
    session: Session,
    *,
    configuration: PlatformConfiguration,
    token: str | None,
    base_url: str,
    invitation_id: str,
) -> LtiPlatform:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        answer = _call(
            "POST",
            configuration.registration_endpoint,
            json_body=tool_registration(base_url),
            headers=headers,
        )
    except RegistrationError as error:
        raise RegistrationError(f"The LMS refused the registration: {error}") from None
    client_id = answer.get("client_id") if isinstance(answer, dict) else None
    if not isinstance(client_id, str) or not 1 <= len(client_id) <= 255:
        raise RegistrationError("The LMS's answer to the registration has no valid client_id.")
    tool = answer.get(TOOL_CONFIGURATION, {})
    deployment = tool.get("deployment_id") if isinstance(tool, dict) else None
    if session.get(LtiInvitationUse, invitation_id) is not None:
        raise RegistrationError("This registration link was used already; ask for a new one.")
    session.add(LtiInvitationUse(invitation_id=invitation_id, issuer=configuration.issuer[:255]))
    session.flush()  # two confirmations at once: the second fails here (the key is unique)
    return add(
        session=session,
        platform=PlatformIn(
            issuer=configuration.issuer,
            client_id=client_id,
            auth_login_url=configuration.authorization_endpoint,
            token_url=configuration.token_endpoint,
            jwks_url=configuration.jwks_uri,
            deployment_ids=(deployment,) if isinstance(deployment, str) and deployment else (),
            name=configuration.product or configuration.issuer,
        ),
    )
