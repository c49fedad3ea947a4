"""SAML 2.0 sign-in pages (app/sso/saml.py does the protocol; docs/deployment.md,
Sign-in, says what an IdP's operator enters).

``/sso/saml/metadata`` is our SP metadata (and our entity id); ``/sso/saml/{name}/start``
sends the browser to the IdP; ``/sso/saml/{name}/link`` (a signed-in POST with CSRF,
from the account page) does the same to link the identity to this account;
``/sso/saml/acs`` receives the IdP's POST. That POST is cross-site and carries no
session cookie (SameSite=Lax) and no CSRF token: its authority is the signed
assertion answering a request we made, found by its RelayState. A link is finished
only on a browser signed in to the account that asked for it: the ACS hands the
checked identity, signed and for two minutes, to ``/sso/saml/linked`` (a top-level
GET that brings the cookie), which links it to that account alone.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import RedirectResponse, Response
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy.exc import IntegrityError

from app.core import throttle
from app.core.request_db import SessionDep
from app.core.sessions import secret_key
from app.core.throttle import client_address
from app.data import external_identities
from app.data.external_identities import Asserted
from app.errors import ConflictError, ForbiddenError
from app.models import User
from app.sso import saml, saml_providers
from app.sso.saml_providers import ProviderUnavailableError
from app.vocabulary import SignInProtocol
from app.web.auth import safe_next, start_session
from app.web.guards import CsrfChecked, PageUser, SignedInUser
from app.web.lti_answers import base_url
from app.web.render import page

router = APIRouter(include_in_schema=False)
LINK_SECONDS = 120


def refused(request: Request, message: str, code: int = 400) -> Response:
    return page(request, "saml_refused.html", None, code, message=message)


def _linker() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret_key(), salt="jaxjudge-saml-link")


@router.get("/sso/saml/metadata")
def metadata(request: Request) -> Response:
    return Response(saml.sp_metadata(base_url(request)), media_type="application/samlmetadata+xml")


def _begin(
    request: Request, session: SessionDep, name: str, next_path: str, link_user_id: int | None
) -> Response:
    address = client_address(request)
    if wait := throttle.sso_sign_ins.wait_seconds(address):
        return refused(request, f"Too many sign-ins from here; try again in {wait} s.", 429)
    throttle.sso_sign_ins.record(address)
    try:
        provider = saml_providers.find(name)
    except saml_providers.SamlSettingsError:
        return refused(
            request, "SAML sign-in is not set up correctly here; tell the administrators.", 503
        )
    if provider is None:
        return refused(request, "There is no such sign-in here.", 404)
    try:
        location = saml.start(
            session=session,
            provider=provider,
            base=base_url(request),
            next_path=next_path,
            link_user_id=link_user_id,
        )
    except ProviderUnavailableError as error:
        session.rollback()
        return refused(request, str(error), 503)
    return RedirectResponse(location, status_code=status.HTTP_303_SEE_OTHER)


@router.get("/sso/saml/{name}/start")
def start(request: Request, session: SessionDep, name: str, next: str = "/") -> Response:
    return _begin(request, session, name, safe_next(next), None)


@router.post("/sso/saml/{name}/link")
def start_link(
    request: Request, session: SessionDep, user: SignedInUser, _csrf: CsrfChecked, name: str
) -> Response:
    return _begin(request, session, name, "/account", user.id)


@router.post("/sso/saml/acs")
def acs(
    request: Request,
    session: SessionDep,
    # Bounded by hand, not by Form(max_length=...): too long is a page, not a 422.
    SAMLResponse: Annotated[str, Form()] = "",  # noqa: N803 (the binding's field name)
    RelayState: Annotated[str, Form()] = "",  # noqa: N803
) -> Response:
    try:
        finished = saml.finish(
            session=session,
            base=base_url(request),
            saml_response=SAMLResponse,
            relay_state=RelayState,
        )
    except saml.SamlRefusedError as error:
        session.commit()  # the pending request stays spent; nothing else was written
        return refused(request, str(error))
    if finished.link_user_id is not None:
        asserted = finished.asserted
        token = _linker().dumps(
            [
                finished.link_user_id,
                asserted.provider,
                asserted.issuer,
                asserted.subject,
                asserted.email,
                asserted.full_name,
                asserted.student_id,
            ]
        )
        return RedirectResponse(f"/sso/saml/linked?token={token}", status.HTTP_303_SEE_OTHER)
    try:
        user = external_identities.sign_in(session=session, asserted=finished.asserted)
    except ForbiddenError as error:
        session.commit()  # refused before writing: the request and the assertion stay spent
        return refused(request, str(error), 403)
    try:
        start_session(request, session, user)
        session.commit()
    except IntegrityError:  # a second post of the same answer made the same account at once
        session.rollback()
        return refused(request, "This answer was already used to sign in; sign in again.")
    return RedirectResponse(safe_next(finished.next_path), status.HTTP_303_SEE_OTHER)


@router.get("/sso/saml/linked")
def linked(request: Request, session: SessionDep, user: PageUser, token: str = "") -> Response:
    try:
        fields = _linker().loads(token[:4000], max_age=LINK_SECONDS)
        user_id, provider, issuer, subject, email, full_name, student_id = fields
    except (BadSignature, ValueError, TypeError):
        return refused(request, "This link to your account has expired; start it again.")
    if user is None or user.id != user_id:
        return refused(
            request, "Sign in to the account that asked for this link, then start it again.", 403
        )
    asserted = Asserted(
        protocol=SignInProtocol.SAML,
        provider=str(provider),
        issuer=str(issuer),
        subject=str(subject),
        email=str(email),
        full_name=str(full_name),
        student_id=str(student_id),
    )
    target = session.get(User, user.id)
    assert target is not None
    try:
        external_identities.link(session=session, user=target, asserted=asserted)
    except ConflictError as error:
        session.rollback()
        return refused(request, str(error), 409)
    return RedirectResponse("/account", status.HTTP_303_SEE_OTHER)
