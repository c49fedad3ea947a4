"""SAML 2.0 sign-in, the service provider's side, with pysaml2 (its XML signatures
checked by xmlsec1): our metadata, the AuthnRequest (HTTP-Redirect), and the
assertion consumer (HTTP-POST).

A sign-in starts here and is kept on the server (a SignInRequest: the AuthnRequest's
ID, a random RelayState stored hashed, ten minutes, used once). The IdP's answer
arrives as a cross-site POST that brings no session cookie, so the pending request is
found by its RelayState alone and the response must answer that request's ID
(InResponseTo): IdP-initiated (unsolicited) responses are refused. Assertions must be
signed by the key in the IdP's metadata, be for our entity id (audience), to our ACS
(Recipient, Destination), in time (60 s of skew), and new: an assertion's ID is kept
until its NotOnOrAfter and refused a second time. Each refusal is one sentence for
the person (SamlRefusedError) and changes nothing but spending the pending request.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.data.external_identities import Asserted
from app.models import SeenAssertion, SignInRequest, utcnow
from app.sso import saml_keys, saml_providers
from app.sso.saml_providers import SamlProvider
from app.vocabulary import SignInProtocol

with warnings.catch_warnings():  # pysaml2 names a cipher mode cryptography has moved
    warnings.filterwarnings("ignore", message="CFB has been moved")
    from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
    from saml2.client import Saml2Client
    from saml2.config import SPConfig
    from saml2.metadata import entity_descriptor
    from saml2.response import StatusError, UnsolicitedResponse
    from saml2.saml import NAMEID_FORMAT_PERSISTENT
    from saml2.sigver import SigverError
    from saml2.validate import ResponseLifetimeExceed, ToEarly

log = logging.getLogger("jaxjudge.saml")

REQUEST_MINUTES = 10
SKEW_SECONDS = 60
# base64 characters; a signed response with attributes is ~10 KB. Under the 64 KiB of
# JAXJUDGE_MAX_REQUEST_BYTES, which answers 413 past it.
RESPONSE_LIMIT = 60_000
XMLSEC = "/usr/bin/xmlsec1"

EPPN = ("eduPersonPrincipalName", "urn:oid:1.3.6.1.4.1.5923.1.1.1.6")
MAIL = ("mail", "urn:oid:0.9.2342.19200300.100.1.3", "email", "emailAddress")
DISPLAY_NAME = ("displayName", "urn:oid:2.16.840.1.113730.3.1.241", "cn", "urn:oid:2.5.4.3")
GIVEN_NAME = ("givenName", "urn:oid:2.5.4.42")
SURNAME = ("sn", "surname", "urn:oid:2.5.4.4")


class SamlRefusedError(Exception):
    """An answer from an IdP that signs nobody in; the message says why, to a person."""


@dataclass(frozen=True)
class Finished:
    asserted: Asserted
    next_path: str
    link_user_id: int | None


def entity_id(base: str) -> str:
    return f"{base}/sso/saml/metadata"


def acs_url(base: str) -> str:
    return f"{base}/sso/saml/acs"


def _config(base: str, idp_metadata: str | None) -> SPConfig:
    pair = saml_keys.sp_key_pair()
    keys = {"key_file": str(pair.key_file), "cert_file": str(pair.cert_file)}
    config = SPConfig()
    config.load(
        {
            "entityid": entity_id(base),
            **keys,
            "encryption_keypairs": [keys],
            "xmlsec_binary": XMLSEC,
            "metadata": {"inline": [idp_metadata]} if idp_metadata else {},
            "accepted_time_diff": SKEW_SECONDS,
            "service": {
                "sp": {
                    "name": "jaxjudge",
                    "endpoints": {
                        "assertion_consumer_service": [(acs_url(base), BINDING_HTTP_POST)]
                    },
                    "want_assertions_signed": True,
                    "want_response_signed": False,  # the assertion's signature is what counts
                    "authn_requests_signed": True,
                    "allow_unsolicited": False,
                    "allow_unknown_attributes": True,
                    "name_id_format": NAMEID_FORMAT_PERSISTENT,
                    "name_id_format_allow_create": True,
                }
            },
        }
    )
    return config


def sp_metadata(base: str) -> str:
    """Our metadata, unsigned: the IdP's operator fetches it over HTTPS from our URL (or
    pins it as a file); a signature by the key it carries would prove nothing more."""
    return str(entity_descriptor(_config(base, None)))


def _hash(relay_state: str) -> str:
    return hashlib.sha256(relay_state.encode()).hexdigest()


def start(
    *,
    session: Session,
    provider: SamlProvider,
    base: str,
    next_path: str,
    link_user_id: int | None = None,
) -> str:
    """The IdP's address to send the browser to, with our signed AuthnRequest; the
    request kept as pending (ProviderUnavailableError when the IdP's metadata is not
    readable)."""
    xml, idp = saml_providers.metadata(provider)
    client = Saml2Client(config=_config(base, xml))
    relay_state = secrets.token_urlsafe(32)
    request_id, info = client.prepare_for_authenticate(
        entityid=idp, relay_state=relay_state, binding=BINDING_HTTP_REDIRECT
    )
    session.add(
        SignInRequest(
            state_hash=_hash(relay_state),
            protocol=SignInProtocol.SAML,
            provider=provider.name,
            request_id=str(request_id),
            next_path=next_path[:2000],
            link_user_id=link_user_id,
            expires_at=utcnow() + timedelta(minutes=REQUEST_MINUTES),
        )
    )
    session.flush()
    return str(dict(info["headers"])["Location"])


def _pending(session: Session, relay_state: str) -> SignInRequest:
    """The pending request this RelayState names, spent. Found by the RelayState alone
    (not app/data/sign_in_requests.take, which needs the provider): one ACS serves every
    IdP, and the provider is what the request says."""
    found = session.scalar(
        select(SignInRequest)
        .where(
            SignInRequest.state_hash == _hash(relay_state),
            SignInRequest.protocol == SignInProtocol.SAML,
        )
        .with_for_update()
    )
    if found is None or found.used_at is not None or found.expires_at < utcnow():
        raise SamlRefusedError(
            "This sign-in is unknown, already used or expired; start again from the sign-in page."
        )
    found.used_at = utcnow()  # spent by any answer, good or bad: one try per request
    session.flush()
    return found


def finish(*, session: Session, base: str, saml_response: str, relay_state: str) -> Finished:
    """Check the IdP's answer to one of our pending requests; what it asserts."""
    if not saml_response or len(saml_response) > RESPONSE_LIMIT or not 0 < len(relay_state) <= 200:
        raise SamlRefusedError("The identity provider's answer is missing or too large.")
    try:
        base64.b64decode(saml_response, validate=True)
    except ValueError:
        raise SamlRefusedError("The identity provider's answer is not a SAML response.") from None
    pending = _pending(session, relay_state)
    provider = saml_providers.find(pending.provider)
    if provider is None:
        raise SamlRefusedError("This identity provider is no longer configured here.")
    try:
        xml, idp = saml_providers.metadata(provider)
    except saml_providers.ProviderUnavailableError as error:
        raise SamlRefusedError(str(error)) from None
    client = Saml2Client(config=_config(base, xml))
    try:
        response = client.parse_authn_request_response(
            saml_response, BINDING_HTTP_POST, outstanding={pending.request_id: pending.next_path}
        )
    except Exception as error:  # pysaml2 and xmlsec1 refuse with many exception types
        raise SamlRefusedError(_why(error, provider)) from None
    if response is None or response.assertion is None:
        # pysaml2 answers None (and logs why) for a Destination that is not our ACS
        raise SamlRefusedError(
            f"{provider.label}'s answer is not addressed to this site (its Destination or"
            " Recipient); it was refused."
        )
    # The assertion is checked against the key of the issuer it names, which may be any IdP
    # in the metadata (an aggregate): it must be the configured one, as the response's.
    issuer = response.assertion.issuer
    if response.issuer() != idp or issuer is None or (issuer.text or "").strip() != idp:
        raise SamlRefusedError(
            f"The answer comes from another identity provider than {provider.label}."
        )
    _first_time(session, response.assertion, idp)
    asserted = _asserted(provider, idp, response)
    return Finished(asserted, pending.next_path, pending.link_user_id)


def _why(error: Exception, provider: SamlProvider) -> str:
    log.info("SAML response from %s refused: %r", provider.name, error)
    if "AudienceRestriction" in str(error):
        return (
            f"{provider.label}'s answer is meant for another site (its audience); it was refused."
        )
    if isinstance(error, ResponseLifetimeExceed | ToEarly) or str(error) == "Condition not OK":
        return f"{provider.label}'s answer has expired (or is not valid yet); sign in again."
    if isinstance(error, UnsolicitedResponse):
        return f"{provider.label}'s answer does not answer a sign-in started here; sign in again."
    if isinstance(error, StatusError):
        return f"{provider.label} did not sign you in ({error}); sign in again."
    if isinstance(error, SigverError) or "signed" in str(error).lower():
        return f"{provider.label}'s answer is not signed with its key; it was refused."
    return f"{provider.label}'s answer is not valid for this site (audience, recipient or form); it was refused."


def _first_time(session: Session, assertion: Any, issuer: str) -> None:
    """Refuse an assertion seen before; keep this one until it would expire anyway."""
    now = utcnow()
    session.execute(delete(SeenAssertion).where(SeenAssertion.expires_at < now))
    assertion_id = str(assertion.id or "")[:255]
    if not assertion_id or session.get(SeenAssertion, assertion_id) is not None:
        raise SamlRefusedError("This answer was already used to sign in; sign in again.")
    until = now + timedelta(minutes=REQUEST_MINUTES)
    conditions = getattr(assertion, "conditions", None)
    if conditions is not None and conditions.not_on_or_after:
        until = max(until, _parse_instant(conditions.not_on_or_after))
    session.add(SeenAssertion(assertion_id=assertion_id, issuer=issuer[:500], expires_at=until))
    session.flush()


def _parse_instant(text: str) -> datetime:
    """An xs:dateTime as the database keeps times: naive, UTC."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC).replace(tzinfo=None)


def _values(response: Any) -> dict[str, list[str]]:
    """Every attribute by its name and friendly name, and pysaml2's friendly mapping."""
    found: dict[str, list[str]] = {}
    for statement in response.assertion.attribute_statement or []:
        for attribute in statement.attribute or []:
            values = [str(v.text).strip() for v in attribute.attribute_value or [] if v.text]
            for key in (attribute.name, attribute.friendly_name):
                if key:
                    found.setdefault(key, values)
    for key, values in (response.ava or {}).items():
        found.setdefault(key, [str(v).strip() for v in values])
    return found


def _first(values: dict[str, list[str]], names: tuple[str, ...]) -> str:
    return next((values[n][0] for n in names if values.get(n) and values[n][0]), "")


def _asserted(provider: SamlProvider, idp: str, response: Any) -> Asserted:
    values = _values(response)
    subject = _first(values, EPPN)
    name_id = response.name_id
    if not subject and name_id is not None and name_id.format == NAMEID_FORMAT_PERSISTENT:
        subject = str(name_id.text or "").strip()
    if not subject or len(subject) > 255:
        raise SamlRefusedError(
            f"{provider.label} sent neither an eduPersonPrincipalName nor a persistent NameID;"
            " ask its administrators to release one to this site."
        )
    full_name = _first(values, DISPLAY_NAME) or " ".join(
        part for part in (_first(values, GIVEN_NAME), _first(values, SURNAME)) if part
    )
    student_id_names = (provider.student_id_attribute,) if provider.student_id_attribute else ()
    return Asserted(
        protocol=SignInProtocol.SAML,
        provider=provider.name,
        issuer=idp,
        subject=subject,
        email=_first(values, MAIL),
        full_name=full_name,
        student_id=_first(values, student_id_names),
    )
