"""Signing in with an OpenID provider (app/sso/oidc.py): the button's start, the
provider's callback, and linking a provider to the signed-in account. Anything wrong in
a callback (a forged, reused or stale state, the provider's own error, a token we cannot
trust, a provider that is down) is one page with one sentence, and no session, account
or identity comes of it; the state is spent either way."""

from __future__ import annotations

import hashlib
import hmac
import logging
from urllib.parse import parse_qs, urlsplit

from fastapi import APIRouter, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.core import throttle
from app.core.config import settings
from app.core.request_db import SessionDep
from app.core.throttle import client_address
from app.data import external_identities, sign_in_requests
from app.errors import DomainError, ForbiddenError, NotFoundError
from app.models import User
from app.sso import oidc, oidc_providers
from app.sso.oidc_providers import OidcProvider
from app.vocabulary import SignInProtocol
from app.web.auth import safe_next, start_session
from app.web.guards import CsrfChecked, PageUser, SignedInUser
from app.web.render import page

router = APIRouter(include_in_schema=False)
CODE_LIMIT = 4096
_log = logging.getLogger("jaxjudge.sso")


def _failed(request: Request, user: User | None, code: int, message: str) -> Response:
    return page(request, "error.html", user, code, title="Sign-in did not work", message=message)


def _provider(name: str) -> OidcProvider:
    provider = oidc_providers.named(name)
    if provider is None:
        raise NotFoundError("There is no such sign-in provider here.")
    return provider


def _too_many(request: Request, user: User | None) -> Response | None:
    """Each start writes a pending request: per address, as many as a class behind one
    NAT needs (throttle.sso_sign_ins, shared with SAML), not what a script would make."""
    address = client_address(request)
    if wait := throttle.sso_sign_ins.wait_seconds(address):
        return _failed(request, user, 429, f"Too many sign-ins from here; try again in {wait} s.")
    throttle.sso_sign_ins.record(address)
    return None


# The states this browser started, hashed, in its signed session cookie: a callback
# carrying a state that another browser started (an attacker's own sign-in, sent to a
# victim to sign them in to the attacker's account: login CSRF) is refused unspent.
STARTED_KEY = "oidc_started"
STARTED_KEPT = 5  # sign-ins started in other tabs stay valid


def _state_digest(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def _remember_started(request: Request, url: str) -> None:
    state = parse_qs(urlsplit(url).query).get("state", [""])[0]
    started = [d for d in request.session.get(STARTED_KEY, []) if isinstance(d, str)]
    request.session[STARTED_KEY] = [*started, _state_digest(state)][-STARTED_KEPT:]


def _started_here(request: Request, state: str) -> bool:
    digest = _state_digest(state)
    started = request.session.get(STARTED_KEY, [])
    return isinstance(started, list) and any(
        isinstance(d, str) and hmac.compare_digest(d, digest) for d in started
    )


def _redirect_to(request: Request, provider: OidcProvider) -> str:
    return oidc.redirect_uri(settings.public_url or str(request.base_url), provider)


def _begin(
    request: Request,
    session: SessionDep,
    user: User | None,
    name: str,
    next_path: str,
    link_user: User | None = None,
) -> Response:
    """Send the browser to the provider, this browser's state remembered."""
    if refused := _too_many(request, user):
        return refused
    try:
        provider = _provider(name)
        url = oidc.start(
            session=session,
            provider=provider,
            redirect_to=_redirect_to(request, provider),
            next_path=next_path,
            link_user=link_user,
        )
    except DomainError as error:
        return _failed(request, user, error.status, str(error))
    _remember_started(request, url)
    return RedirectResponse(url, status_code=status.HTTP_303_SEE_OTHER)


@router.get("/sso/oidc/{name}/start")
def start(
    request: Request, session: SessionDep, user: PageUser, name: str, next: str = "/"
) -> Response:
    return _begin(request, session, user, name, safe_next(next))


@router.post("/sso/oidc/{name}/link")
def link(
    request: Request, session: SessionDep, user: SignedInUser, _csrf: CsrfChecked, name: str
) -> Response:
    return _begin(request, session, user, name, "/account", link_user=user)


@router.get("/sso/oidc/{name}/callback", response_class=HTMLResponse)
def callback(
    request: Request,
    session: SessionDep,
    user: PageUser,
    name: str,
    state: str = "",
    code: str = "",
    error: str = "",
) -> Response:
    provider = oidc_providers.named(name)
    if provider is None:
        return _failed(request, user, 404, "There is no such sign-in provider here.")
    if not _started_here(request, state):
        return _failed(
            request,
            user,
            400,
            "This sign-in was not started in this browser (or its cookie was lost);"
            " start again from the sign-in page.",
        )
    try:
        sent = sign_in_requests.take(
            session=session, protocol=SignInProtocol.OIDC, provider=provider.name, state=state
        )
    except DomainError as refused:
        return _failed(request, user, refused.status, str(refused))
    nonce, verifier, next_path, link_user_id = (
        sent.nonce,
        sent.code_verifier,
        sent.next_path,
        sent.link_user_id,
    )
    # The state is spent whatever happens next, and no transaction stays open while the
    # provider is called.
    session.commit()
    if error:
        _log.info("oidc %s: the provider answered error=%s", provider.name, error[:100])
        message = (
            "You cancelled the sign-in, or the provider refused it."
            if error == "access_denied"
            else f"{provider.label} did not sign you in ({error[:60]})."
        )
        return _failed(request, user, 400, message + " Start again from the sign-in page.")
    if not code or len(code) > CODE_LIMIT:
        return _failed(
            request,
            user,
            400,
            f"{provider.label} sent you back without a sign-in code; start again.",
        )
    try:
        asserted = oidc.finish(
            provider=provider,
            redirect_to=_redirect_to(request, provider),
            code=code,
            nonce=nonce,
            code_verifier=verifier,
        )
        if link_user_id is not None:
            if user is None or user.id != link_user_id:
                raise ForbiddenError(
                    "Linking must finish in the browser, and the account, that started it;"
                    " sign in and link again from your account page."
                )
            external_identities.link(session=session, user=user, asserted=asserted)
            return RedirectResponse("/account", status_code=status.HTTP_303_SEE_OTHER)
        found = external_identities.sign_in(session=session, asserted=asserted)
    except DomainError as refused:
        session.rollback()
        return _failed(request, user, refused.status, str(refused))
    start_session(request, session, found)
    return RedirectResponse(safe_next(next_path), status_code=status.HTTP_303_SEE_OTHER)


@router.post("/account/identities/{identity_id}/unlink")
def unlink(
    request: Request, session: SessionDep, user: SignedInUser, _csrf: CsrfChecked, identity_id: int
) -> Response:
    try:
        external_identities.unlink(session=session, user=user, identity_id=identity_id)
    except DomainError as refused:
        return _failed(request, user, refused.status, str(refused))
    return RedirectResponse("/account", status_code=status.HTTP_303_SEE_OTHER)
