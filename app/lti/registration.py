"""LTI Dynamic Registration 1.0: the LMS admin pastes one URL, jaxjudge reads the
platform's OpenID configuration, registers itself at the platform's registration
endpoint, and records the platform with the client id and deployment it was given.

The URL carries an invitation a jaxjudge admin made (``invitation``, signed, seven
days): without one anybody could register a platform of their own and launch into
jaxjudge as its instructors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy.orm import Session

from app.core.sessions import secret_key
from app.lti import claims
from app.lti.http import PlatformCallError, call
from app.lti.platforms import PlatformIn, add
from app.models import LtiPlatform

INVITATION_SECONDS = 7 * 24 * 3600
PLATFORM_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-platform-configuration"
TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"


class RegistrationError(Exception):
    """Registration cannot go on; the message says why, for the LMS admin."""


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret_key(), salt="jaxjudge-lti-registration")


def invitation(note: str = "") -> str:
    return str(_serializer().dumps({"note": note[:100]}))


def check_invitation(token: str) -> None:
    try:
        _serializer().loads(token, max_age=INVITATION_SECONDS)
    except SignatureExpired:
        raise RegistrationError("This registration link has expired; ask for a new one.") from None
    except BadSignature:
        raise RegistrationError("This registration link is not one jaxjudge made.") from None


@dataclass(frozen=True)
class PlatformConfiguration:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    registration_endpoint: str
    product: str


def read_configuration(url: str) -> PlatformConfiguration:
    try:
        body = call("GET", url).body
    except PlatformCallError as error:
        raise RegistrationError(f"The LMS's configuration could not be read: {error}") from None
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
        if not isinstance(value, str) or not value.startswith(("https://", "http://")):
            raise RegistrationError(f"The LMS's OpenID configuration has no valid {name!r}.")
        fields[name] = value
    # The configuration must come from its issuer (the spec's rule against a
    # configuration that claims someone else's issuer).
    if (
        not url.startswith(fields["issuer"].rstrip("/"))
        and urlparse(url).netloc != urlparse(fields["issuer"]).netloc
    ):
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
    session: Session, *, configuration: PlatformConfiguration, token: str | None, base_url: str
) -> LtiPlatform:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        answer = call(
            "POST",
            configuration.registration_endpoint,
            json_body=tool_registration(base_url),
            headers=headers,
        ).body
    except PlatformCallError as error:
        raise RegistrationError(f"The LMS refused the registration: {error}") from None
    if not isinstance(answer, dict) or not isinstance(answer.get("client_id"), str):
        raise RegistrationError("The LMS's answer to the registration has no client_id.")
    tool = answer.get(TOOL_CONFIGURATION, {})
    deployment = tool.get("deployment_id") if isinstance(tool, dict) else None
    return add(
        session=session,
        platform=PlatformIn(
            issuer=configuration.issuer,
            client_id=answer["client_id"],
            auth_login_url=configuration.authorization_endpoint,
            token_url=configuration.token_endpoint,
            jwks_url=configuration.jwks_uri,
            deployment_ids=(deployment,) if isinstance(deployment, str) else (),
            name=configuration.product or configuration.issuer,
        ),
    )
