"""OpenID Connect sign-in: the Authorization Code flow with PKCE (S256), ``state`` and
``nonce`` kept on the server (app/data/sign_in_requests.py), the code exchanged at the
token endpoint with the client's secret, and the ID token validated with PyJWT against
the provider's published keys. What it asserts becomes ``Asserted``.

The ID token is checked for: a signature by one of the provider's RSA or EC keys (RS256
or ES256 only: never ``none``, never an HMAC with a public key as its secret), ``iss``
equal to the discovered issuer, ``aud`` holding our client id (and ``azp`` naming us
where there are several audiences), ``exp`` and ``iat`` within a minute's leeway, and
the ``nonce`` this browser's request was given. An email counts only where the provider
says it is verified (``email_verified``)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
from typing import Any
from urllib.parse import quote, urlencode

import jwt
from sqlalchemy.orm import Session

from app.data import sign_in_requests
from app.data.external_identities import Asserted
from app.errors import DomainError, ForbiddenError, InvalidInputError
from app.models import User
from app.sso import oidc_discovery
from app.sso.http import ProviderCallError, call_json
from app.sso.oidc_providers import OidcProvider
from app.vocabulary import SignInProtocol

ALGORITHMS = ("RS256", "ES256")
KEY_TYPES = {"RS256": "RSA", "ES256": "EC"}
LEEWAY_SECONDS = 60
SUBJECT_LIMIT = 255
_log = logging.getLogger("jaxjudge.sso")


class ProviderUnavailableError(DomainError):
    """The identity provider did not answer usefully (down, 5xx, garbage)."""

    status = 502


def _unavailable(provider: OidcProvider, error: ProviderCallError) -> ProviderUnavailableError:
    _log.warning("oidc %s: %s", provider.name, error)
    return ProviderUnavailableError(
        f"{provider.label} is not answering properly just now; try again in a few minutes."
    )


def _refused(provider: OidcProvider, why: str) -> InvalidInputError:
    _log.warning("oidc %s: refused an ID token: %s", provider.name, why)
    return InvalidInputError(
        f"{provider.label} sent a sign-in that jaxjudge cannot trust; start again from the"
        " sign-in page, and tell an administrator if it happens again."
    )


def redirect_uri(base_url: str, provider: OidcProvider) -> str:
    """Where the provider sends the browser back: register exactly this address there."""
    return f"{base_url.rstrip('/')}/sso/oidc/{quote(provider.name)}/callback"


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def start(
    *,
    session: Session,
    provider: OidcProvider,
    redirect_to: str,
    next_path: str,
    link_user: User | None = None,
) -> str:
    """The provider's authorization URL for a new sign-in (its request kept here).

    Discovery runs first: a provider that is down writes nothing."""
    try:
        found = oidc_discovery.discovery(provider.issuer)
    except ProviderCallError as error:
        raise _unavailable(provider, error) from None
    nonce = secrets.token_urlsafe(32)
    verifier = secrets.token_urlsafe(64)  # 86 characters: RFC 7636 asks for 43 to 128
    state = sign_in_requests.start(
        session=session,
        protocol=SignInProtocol.OIDC,
        provider=provider.name,
        next_path=next_path,
        nonce=nonce,
        code_verifier=verifier,
        link_user=link_user,
    )
    query = urlencode(
        {
            "response_type": "code",
            "client_id": provider.client_id,
            "redirect_uri": redirect_to,
            "scope": provider.scopes,
            "state": state,
            "nonce": nonce,
            "code_challenge": _challenge(verifier),
            "code_challenge_method": "S256",
        }
    )
    separator = "&" if "?" in found.authorization_endpoint else "?"
    return f"{found.authorization_endpoint}{separator}{query}"


def _exchange(
    provider: OidcProvider,
    found: oidc_discovery.Discovery,
    code: str,
    redirect_to: str,
    verifier: str,
) -> str:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_to,
        "code_verifier": verifier,
    }
    headers: dict[str, str] = {}
    if found.token_auth == "client_secret_basic":  # RFC 6749 2.3.1: each part form-encoded
        pair = f"{quote(provider.client_id, safe='')}:{quote(provider.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    else:
        form |= {"client_id": provider.client_id, "client_secret": provider.client_secret}
    try:
        answer = call_json("POST", found.token_endpoint, form=form, headers=headers)
    except ProviderCallError as error:
        raise _unavailable(provider, error) from None
    id_token = answer.get("id_token")
    if not isinstance(id_token, str) or not id_token:
        raise _unavailable(provider, ProviderCallError("the token answer has no id_token"))
    return id_token


def _claims(
    provider: OidcProvider, found: oidc_discovery.Discovery, id_token: str, nonce: str
) -> dict[str, Any]:
    try:
        header = jwt.get_unverified_header(id_token)
    except jwt.PyJWTError as error:
        raise _refused(provider, f"unreadable header: {error}") from None
    algorithm = header.get("alg")
    if algorithm not in ALGORITHMS:
        raise _refused(provider, f"algorithm {str(algorithm)[:20]!r} is not RS256 or ES256")
    kid = header.get("kid") or ""
    try:
        key = oidc_discovery.signing_key(found.jwks_uri, str(kid))
    except ProviderCallError as error:
        raise _unavailable(provider, error) from None
    if key is None or key.key_type != KEY_TYPES[str(algorithm)]:
        raise _refused(provider, f"no {algorithm} key {str(kid)[:80]!r} in the provider's JWKS")
    try:
        claims: dict[str, Any] = jwt.decode(
            id_token,
            key=key.key,
            algorithms=[str(algorithm)],
            audience=provider.client_id,
            issuer=found.issuer,
            leeway=LEEWAY_SECONDS,
            options={"require": ["iss", "sub", "aud", "exp", "iat"]},
        )
    except jwt.PyJWTError as error:
        raise _refused(provider, f"{type(error).__name__}: {error}") from None
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    azp = claims.get("azp")
    if (len(audiences) > 1 or azp is not None) and azp != provider.client_id:
        raise _refused(provider, f"azp {str(azp)[:80]!r} is not our client id")
    if not isinstance(claims.get("nonce"), str) or not hmac.compare_digest(
        claims["nonce"].encode(), nonce.encode()
    ):
        raise _refused(provider, "the nonce is not the one this sign-in sent")
    subject = claims["sub"]
    if not isinstance(subject, str) or not subject or len(subject) > SUBJECT_LIMIT:
        raise _refused(provider, "sub is not a string of 1 to 255 characters")
    return claims


def _text(value: object) -> str:
    return (
        str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
    )


def _asserted(provider: OidcProvider, claims: dict[str, Any]) -> Asserted:
    verified = claims.get("email_verified") in (True, "true")
    email = _text(claims.get("email")) if verified else ""
    if "@" not in email:
        email = ""
    if not provider.allows(email):
        raise ForbiddenError(
            f"{provider.label} did not vouch for an email at "
            + ", ".join(provider.allowed_domains)
            + "; only those accounts may sign in here."
        )
    full_name = _text(claims.get("name")) or " ".join(
        part for part in (_text(claims.get("given_name")), _text(claims.get("family_name"))) if part
    )
    student_id = _text(claims.get(provider.student_id_claim)) if provider.student_id_claim else ""
    return Asserted(
        protocol=SignInProtocol.OIDC,
        provider=provider.name,
        issuer=str(claims["iss"]),
        subject=str(claims["sub"]),
        email=email,
        full_name=full_name,
        student_id=student_id,
    )


def finish(
    *, provider: OidcProvider, redirect_to: str, code: str, nonce: str, code_verifier: str
) -> Asserted:
    """Exchange the code and validate the ID token of a sign-in this site started (its
    state already taken); no database work, so the caller holds no transaction open
    during the provider's calls."""
    try:
        found = oidc_discovery.discovery(provider.issuer)
    except ProviderCallError as error:
        raise _unavailable(provider, error) from None
    id_token = _exchange(provider, found, code, redirect_to, code_verifier)
    return _asserted(provider, _claims(provider, found, id_token, nonce))
