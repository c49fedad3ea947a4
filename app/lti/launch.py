"""The LTI 1.3 launch (IMS Security Framework, OpenID Connect third-party login).

1. The platform sends the browser to ``/lti/login`` (GET or POST) with its issuer,
   a login hint and where the launch goes. ``start_login`` records a state and a
   nonce (ten minutes, used once) and a secret for the browser's cookie, and
   answers the platform's authorization URL to redirect to.
2. The platform posts an ``id_token`` and the state back to ``/lti/launch``.
   ``finish_login`` checks, in this order: the state names a login in flight,
   unexpired and unused; the browser holds that login's secret; the token is
   RS256 (never ``none``, never an HMAC with a public key) signed by a key of the
   platform's JWKS; ``iss`` is the platform's, ``aud`` holds the client id (with
   ``azp`` equal to it when there are several audiences); ``exp`` and ``iat`` hold
   within ``LEEWAY_SECONDS``; the nonce is the login's; the deployment is
   registered; the message type and version are ones jaxjudge handles. Only then
   is the login marked used (atomically: a replay finds it used).

Every refusal is a ``LaunchError`` whose message is one sentence for the page.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import jwt
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from app.lti import claims, platform_keys
from app.lti.http import PlatformCallError
from app.lti.platforms import deployments_of, find
from app.models import LtiLogin, LtiPlatform, utcnow

LOGIN_MINUTES = 10
LEEWAY_SECONDS = 60
MAX_TOKEN_BYTES = 64 * 1024


class LaunchError(Exception):
    """A launch refused; the message says why in one sentence."""


def _hash(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def state_cookie_name(state: str) -> str:
    """One cookie per login (two tabs launching at once keep their own)."""
    return "jaxjudge_lti_" + _hash(state)[:16]


@dataclass(frozen=True)
class LoginStart:
    redirect_url: str  # the platform's authorization endpoint, with the request
    state: str
    browser_secret: str  # for the state cookie


def start_login(*, session: Session, params: dict[str, str], redirect_uri: str) -> LoginStart:
    """The authentication request for a third-party-initiated login."""
    if any("\x00" in value for value in params.values()):
        raise LaunchError("The LMS's login request holds a NUL character.")
    issuer, login_hint = params.get("iss", ""), params.get("login_hint", "")
    target = params.get("target_link_uri", "")
    if not issuer or not login_hint or not target:
        raise LaunchError("The LMS's login request lacks iss, login_hint or target_link_uri.")
    platform = find(session=session, issuer=issuer, client_id=params.get("client_id"))
    if platform is None:
        raise LaunchError(
            f"No LMS with issuer {issuer[:200]!r} is registered with this jaxjudge"
            " (an administrator adds it: docs/lti.md)."
        )
    deployment = params.get("lti_deployment_id")
    if deployment and deployment not in deployments_of(session=session, platform=platform):
        raise LaunchError(f"The deployment {deployment[:100]!r} is not registered for this LMS.")
    state, nonce, browser = (secrets.token_urlsafe(32) for _ in range(3))
    now = utcnow()
    # Logins are kept a day after they expire (a late post still says "expired").
    session.execute(delete(LtiLogin).where(LtiLogin.expires_at < now - timedelta(days=1)))
    relaunch = {k: v for k, v in params.items() if k in _INITIATION_PARAMS}
    session.add(
        LtiLogin(
            state_hash=_hash(state),
            nonce=nonce,
            platform_id=platform.id,
            target_link_uri=target[:2000],
            browser_hash=_hash(browser),
            relaunch_query=urlencode(relaunch),
            created_at=now,
            expires_at=now + timedelta(minutes=LOGIN_MINUTES),
        )
    )
    session.flush()
    request = {
        "scope": "openid",
        "response_type": "id_token",
        "response_mode": "form_post",
        "prompt": "none",
        "client_id": platform.client_id,
        "redirect_uri": redirect_uri,
        "login_hint": login_hint,
        "state": state,
        "nonce": nonce,
    }
    if "lti_message_hint" in params:
        request["lti_message_hint"] = params["lti_message_hint"]
    separator = "&" if "?" in platform.auth_login_url else "?"
    return LoginStart(
        redirect_url=platform.auth_login_url + separator + urlencode(request),
        state=state,
        browser_secret=browser,
    )


_INITIATION_PARAMS = (
    "iss",
    "login_hint",
    "target_link_uri",
    "lti_message_hint",
    "client_id",
    "lti_deployment_id",
)


def login_in_flight(*, session: Session, state: str) -> LtiLogin | None:
    if not state or len(state) > 200:
        return None
    return session.scalar(select(LtiLogin).where(LtiLogin.state_hash == _hash(state)))


def _check_login(login: LtiLogin | None, browser_secret: str | None) -> LtiLogin:
    if login is None:
        raise LaunchError("This launch names no login in progress; start it again from the LMS.")
    if login.used_at is not None:
        raise LaunchError("This launch was already used; start it again from the LMS.")
    if login.expires_at <= utcnow():
        raise LaunchError("This launch took too long and expired; start it again from the LMS.")
    if not browser_secret or not secrets.compare_digest(
        _hash(browser_secret).encode(), login.browser_hash.encode()
    ):
        raise BrowserNotBoundError(
            "This browser does not hold the cookie of the launch it is finishing (browsers"
            " keep cookies out of an LMS's frame, and a launch started elsewhere has none)."
        )
    return login


class BrowserNotBoundError(LaunchError):
    """The state cookie is missing or wrong: a forged launch, or a browser that blocks
    cookies in the LMS's frame (the page offers a new window)."""


def _verified_payload(token: str, platform: LtiPlatform) -> dict[str, Any]:
    if not token or len(token) > MAX_TOKEN_BYTES:
        raise LaunchError("The launch carries no id_token, or one too large.")
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError:  # not a JWT, or a header that is not what JWS allows
        raise LaunchError("The id_token is not a JWT with a valid header.") from None
    if header.get("alg") != "RS256":
        raise LaunchError(f"The id_token is signed with {header.get('alg')!r}; LTI needs RS256.")
    kid = header.get("kid")
    try:
        key = platform_keys.key_for(platform.jwks_url, kid if isinstance(kid, str) else None)
    except platform_keys.UnknownKeyError:
        raise LaunchError("The id_token's key is not in the LMS's published key set.") from None
    except PlatformCallError as error:
        raise LaunchError(f"The LMS's key set could not be read: {error}") from None
    try:
        payload: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=["RS256"],
            audience=platform.client_id,
            issuer=platform.issuer,
            leeway=LEEWAY_SECONDS,
            options={"require": ["exp", "iat", "iss", "aud", "sub", "nonce"]},
        )
    except jwt.ExpiredSignatureError:
        raise LaunchError("The id_token has expired.") from None
    except jwt.ImmatureSignatureError:
        raise LaunchError("The id_token was issued in the future.") from None
    except jwt.InvalidAudienceError:
        raise LaunchError("The id_token is meant for another tool (audience).") from None
    except jwt.InvalidIssuerError:
        raise LaunchError("The id_token comes from another issuer.") from None
    except jwt.MissingRequiredClaimError as error:
        raise LaunchError(f"The id_token lacks the {error.claim!r} claim.") from None
    except jwt.InvalidSignatureError:
        raise LaunchError("The id_token's signature does not verify.") from None
    except jwt.InvalidTokenError as error:
        raise LaunchError(f"The id_token is invalid: {error}.") from None
    audiences = payload["aud"] if isinstance(payload["aud"], list) else [payload["aud"]]
    azp = payload.get("azp")
    if (len(audiences) > 1 or azp is not None) and azp != platform.client_id:
        raise LaunchError("The id_token's authorized party (azp) is not this tool.")
    return payload


def finish_login(
    *, session: Session, id_token: str, state: str, browser_secret: str | None
) -> claims.Launch:
    """The validated launch, the login marked used; or ``LaunchError``."""
    login = _check_login(login_in_flight(session=session, state=state), browser_secret)
    platform = session.get(LtiPlatform, login.platform_id)
    if platform is None:
        raise LaunchError("The LMS of this launch is no longer registered.")
    payload = _verified_payload(id_token, platform)
    if not isinstance(payload.get("nonce"), str) or not secrets.compare_digest(
        payload["nonce"].encode(), login.nonce.encode()
    ):
        raise LaunchError("The id_token's nonce is not this launch's.")
    try:
        launch = claims.read(platform.id, payload)
    except claims.ClaimError as error:
        raise LaunchError(str(error).capitalize() + ".") from None
    if launch.deployment_id not in deployments_of(session=session, platform=platform):
        raise LaunchError(
            f"The deployment {launch.deployment_id[:100]!r} is not registered for this LMS."
        )
    used = session.execute(
        update(LtiLogin)
        .where(LtiLogin.id == login.id, LtiLogin.used_at.is_(None))
        .values(used_at=utcnow())
    )
    if getattr(used, "rowcount", 0) != 1:
        raise LaunchError("This launch was already used; start it again from the LMS.")
    return launch
