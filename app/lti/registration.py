"""LTI Dynamic Registration 1.0: the LMS admin pastes one URL, jaxjudge reads the
platform's OpenID configuration, registers itself at the platform's registration
endpoint, and records the platform with the client id and deployment it was given.

The URL carries an invitation a jaxjudge admin made (``invitation``, signed, seven
days): without one anybody could register a platform of their own and launch into
jaxjudge as its instructors; each invitation registers one platform.

Whoever holds an invitation chooses the URLs jaxjudge calls, so the calls go through
app/lti/registration_calls.py (public addresses only, unless listed; no redirects;
bounded), each invitation makes one read of a configuration and one registration call,
each spent before it is made (``LtiRegistrationAttempt``), and every failure shows the
one message ``FAILED``, whatever the far side answered: the page tells nothing about
other machines. The detail goes to the log, for jaxjudge's admin.
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlparse

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy import update
from sqlalchemy.orm import Session

from app.core.config import settings
from app.core.sessions import secret_key
from app.errors import DomainError
from app.lti import claims, registration_calls
from app.lti.platforms import PlatformIn, add
from app.models import LtiInvitationUse, LtiPlatform, LtiRegistrationAttempt, utcnow

INVITATION_SECONDS = 7 * 24 * 3600
PLATFORM_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-platform-configuration"
TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"
MAX_URL = 1000

FAILED = (
    "jaxjudge could not register with this LMS; jaxjudge's administrator finds why in its"
    " log. Trying again needs a new registration link."
)
USED = "This registration link was used already; ask for a new one."

log = logging.getLogger("jaxjudge.lti")


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
        raise RegistrationError(USED)
    return invitation_id


def _failed(invitation_id: str, detail: str) -> RegistrationError:
    """The one message the page shows; the detail is for the log alone."""
    log.warning("LTI registration with invitation %s failed: %s", invitation_id, detail)
    return RegistrationError(FAILED)


def _call(invitation_id: str, method: str, url: str, **kwargs: Any) -> Any:
    try:
        return registration_calls.call(
            method, url, private_networks=settings.registration_private_networks, **kwargs
        )
    except registration_calls.CallError as error:
        raise _failed(invitation_id, str(error)) from None


@dataclass(frozen=True)
class PlatformConfiguration:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    registration_endpoint: str
    product: str


def stored_configuration(
    session: Session, *, invitation_id: str, url: str
) -> PlatformConfiguration | None:
    """The configuration this invitation read from ``url`` already (the page shown again,
    nothing called); None if it has read nothing yet; RegistrationError if its one read
    went elsewhere, failed, or the registration call was made."""
    attempt = session.get(LtiRegistrationAttempt, invitation_id)
    if attempt is None:
        return None
    if (
        attempt.configuration_url != url
        or attempt.configuration is None
        or attempt.registering_at is not None
    ):
        raise RegistrationError(USED)
    return PlatformConfiguration(**json.loads(attempt.configuration))


def spend_reading(session: Session, *, invitation_id: str, url: str) -> None:
    """Records the invitation's one read of a configuration, before it is made; the
    caller commits (a second reading at once fails on the key, an IntegrityError)."""
    if len(url) > MAX_URL:
        raise _failed(invitation_id, f"a configuration URL of {len(url)} characters")
    session.add(LtiRegistrationAttempt(invitation_id=invitation_id, configuration_url=url))
    session.flush()


def read_configuration(session: Session, *, invitation_id: str, url: str) -> PlatformConfiguration:
    """The platform's configuration read from ``url`` (after ``spend_reading``), checked
    and kept for the confirmation."""
    configuration = _checked_configuration(invitation_id, url, _call(invitation_id, "GET", url))
    attempt = session.get_one(LtiRegistrationAttempt, invitation_id)
    attempt.configuration = json.dumps(asdict(configuration))
    return configuration


def spend_registering(session: Session, *, invitation_id: str, url: str) -> PlatformConfiguration:
    """The configuration to register with, the invitation's one registration call marked
    spent by one UPDATE (two confirmations at once: one goes on); the caller commits."""
    configuration = stored_configuration(session, invitation_id=invitation_id, url=url)
    spent = session.execute(
        update(LtiRegistrationAttempt)
        .where(
            LtiRegistrationAttempt.invitation_id == invitation_id,
            LtiRegistrationAttempt.registering_at.is_(None),
        )
        .values(registering_at=utcnow())
    )
    if configuration is None or getattr(spent, "rowcount", 0) != 1:
        raise RegistrationError(USED)
    return configuration


def _checked_configuration(invitation_id: str, url: str, body: Any) -> PlatformConfiguration:
    if not isinstance(body, dict):
        raise _failed(invitation_id, "the OpenID configuration is not a JSON object")
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
        if not isinstance(value, str) or len(value) > limit:
            raise _failed(invitation_id, f"the OpenID configuration has no valid {name!r}")
        fields[name] = value
    # The configuration must come from its issuer's own host (the spec's rule against a
    # configuration that claims someone else's issuer): same scheme, host and port.
    served, issuer = urlparse(url), urlparse(fields["issuer"])
    if (served.scheme, served.netloc) != (issuer.scheme, issuer.netloc):
        raise _failed(invitation_id, f"the configuration claims the issuer {fields['issuer']!r}")
    # Browsers, not jaxjudge, go to the authorization endpoint: https, unless the LMS
    # itself is a listed loopback one served over http.
    if urlparse(fields["authorization_endpoint"]).scheme not in {"https", served.scheme}:
        raise _failed(invitation_id, "the authorization_endpoint is not https")
    # jaxjudge calls the others (now, and for launches and grades later): they pass the
    # calls' address rules too.
    for name in ("token_endpoint", "jwks_uri", "registration_endpoint"):
        try:
            registration_calls.target(
                fields[name], private_networks=settings.registration_private_networks
            )
        except registration_calls.CallError as error:
            raise _failed(invitation_id, f"{name}: {error}") from None
    platform = body.get(PLATFORM_CONFIGURATION, {})
    product = platform.get("product_family_code", "") if isinstance(platform, dict) else ""
    return PlatformConfiguration(product=str(product)[:60], **fields)


DESCRIPTION = "Graded JAX, Flax and Optax exercises."


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
            "description": DESCRIPTION,
        },
    }


def canvas_configuration(base_url: str) -> dict[str, Any]:
    """The JSON an LMS admin pastes, or gives by URL (/lti/canvas.json), in Canvas's
    *Developer Keys → LTI Key → Method: Enter URL*: the same values as the manual entry
    of docs/lti.md, with jaxjudge's title and icon, both deep-linking placements, and the
    four services' scopes."""
    host = urlparse(base_url).netloc
    launch_url = f"{base_url}/lti/launch"
    icon = f"{base_url}/static/favicon.svg"
    placements = [
        {
            "placement": placement,
            "message_type": claims.DEEP_LINKING_REQUEST,
            "target_link_uri": launch_url,
            "text": "jaxjudge problems",
            "icon_url": icon,
        }
        for placement in ("assignment_selection", "link_selection")
    ]
    return {
        "title": "jaxjudge",
        "description": DESCRIPTION,
        "oidc_initiation_url": f"{base_url}/lti/login",
        "target_link_uri": launch_url,
        "public_jwk_url": f"{base_url}/lti/jwks",
        "scopes": list(claims.TOOL_SCOPES),
        "extensions": [
            {
                "domain": host,
                "tool_id": "jaxjudge",
                "platform": "canvas.instructure.com",
                "privacy_level": "public",
                "settings": {"text": "jaxjudge", "icon_url": icon, "placements": placements},
            }
        ],
        "custom_fields": {},
    }


def register(
    session: Session,
    *,
    configuration: PlatformConfiguration,
    token: str | None,
    base_url: str,
    invitation_id: str,
) -> LtiPlatform:
    """The registration call (after ``spend_registering``) and the platform it made."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = _call(
        invitation_id,
        "POST",
        configuration.registration_endpoint,
        json_body=tool_registration(base_url),
        headers=headers,
    )
    client_id = answer.get("client_id") if isinstance(answer, dict) else None
    if not isinstance(client_id, str) or not 1 <= len(client_id) <= 255:
        raise _failed(invitation_id, "the registration's answer has no valid client_id")
    tool = answer.get(TOOL_CONFIGURATION, {})
    deployment = tool.get("deployment_id") if isinstance(tool, dict) else None
    if session.get(LtiInvitationUse, invitation_id) is not None:
        raise RegistrationError(USED)
    session.add(LtiInvitationUse(invitation_id=invitation_id, issuer=configuration.issuer[:255]))
    session.flush()  # two confirmations at once: the second fails here (the key is unique)
    try:
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
    except DomainError as error:  # what the LMS answered is not a registration jaxjudge keeps
        raise _failed(invitation_id, str(error)) from None
