"""Accounts at identity providers (OpenID Connect, SAML): an identity is (issuer,
subject), and nothing else finds an account. An email a provider asserts never links
it to an existing account (anyone can register that address at some provider); linking
happens only from a signed-in session (``link``), or by making a new account at the
first sign-in (``sign_in``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.data import accounts
from app.errors import ConflictError, ForbiddenError
from app.models import ExternalIdentity, User, utcnow
from app.vocabulary import IdSource, Role, SignInProtocol

EMAIL_LIMIT = 254
STUDENT_ID_LIMIT = 64


@dataclass(frozen=True)
class Asserted:
    """What a provider said of the person signing in, validated by its protocol."""

    protocol: SignInProtocol
    provider: str  # the operator's name for the provider (a button, a setting)
    issuer: str
    subject: str
    email: str = ""  # only where the provider says it is verified
    full_name: str = ""
    student_id: str = ""


def _take_attributes(user: User, asserted: Asserted) -> None:
    """The provider's email and student id over what the learner typed; never over an
    instructor's mapping (kept per course) or an empty value."""
    if asserted.email and len(asserted.email) <= EMAIL_LIMIT:
        user.email, user.email_source = asserted.email, IdSource.SSO
        user.email_verified_at = user.email_verified_at or utcnow()
    if asserted.student_id and len(asserted.student_id) <= STUDENT_ID_LIMIT:
        user.student_id, user.student_id_source = asserted.student_id, IdSource.SSO
    if asserted.full_name and not user.display_name:
        user.display_name = asserted.full_name[:120]


def identity_of(*, session: Session, issuer: str, subject: str) -> ExternalIdentity | None:
    return session.scalar(
        select(ExternalIdentity).where(
            ExternalIdentity.issuer == issuer, ExternalIdentity.subject == subject
        )
    )


def _same_provider(identity: ExternalIdentity, asserted: Asserted) -> None:
    """An issuer is a string the provider chooses (a SAML IdP its entity id): a provider
    configured here under another name or protocol that claims the same issuer is not the
    one the identity was made with (ForbiddenError)."""
    if (identity.protocol, identity.provider) != (asserted.protocol, asserted.provider):
        raise ForbiddenError(
            "This identity was linked through another sign-in provider; sign in with that one."
        )


def sign_in(*, session: Session, asserted: Asserted) -> User:
    """The account linked to this identity, its attributes refreshed; or a new learner
    account (no password) made for it. A disabled account is refused."""
    identity = identity_of(session=session, issuer=asserted.issuer, subject=asserted.subject)
    if identity is not None:
        _same_provider(identity, asserted)
        user = session.get(User, identity.user_id)
        if user is None or user.disabled_at is not None:
            raise ForbiddenError("This account is disabled; ask an administrator.")
        identity.last_used_at = utcnow()
        _take_attributes(user, asserted)
        session.flush()
        return user
    name = accounts.unused_name(
        session=session,
        email=asserted.email,
        full_name=asserted.full_name,
        subject=f"{asserted.issuer} {asserted.subject}",
        prefix="sso",
    )
    user = accounts.new_account_without_password(session=session, name=name, role=Role.LEARNER)
    _take_attributes(user, asserted)
    _add(session, user, asserted)
    return user


def link(*, session: Session, user: User, asserted: Asserted) -> ExternalIdentity:
    """Link the identity to ``user``, signed in on the browser that started the sign-in.
    An identity already linked to another account stays there (ConflictError)."""
    identity = identity_of(session=session, issuer=asserted.issuer, subject=asserted.subject)
    if identity is not None:
        if identity.user_id != user.id:
            raise ConflictError(
                "This identity already signs in to another jaxjudge account; ask an"
                " administrator to move it."
            )
        _same_provider(identity, asserted)
        return identity
    _take_attributes(user, asserted)
    return _add(session, user, asserted)


def _add(session: Session, user: User, asserted: Asserted) -> ExternalIdentity:
    identity = ExternalIdentity(
        user_id=user.id,
        protocol=asserted.protocol,
        provider=asserted.provider,
        issuer=asserted.issuer,
        subject=asserted.subject,
    )
    session.add(identity)
    session.flush()
    return identity


def identities_of(*, session: Session, user: User) -> list[ExternalIdentity]:
    return list(
        session.scalars(
            select(ExternalIdentity)
            .where(ExternalIdentity.user_id == user.id)
            .order_by(ExternalIdentity.id)
        )
    )


def unlink(*, session: Session, user: User, identity_id: int) -> None:
    """Remove one of ``user``'s identities; never the last way in (no password, no
    other identity)."""
    identity = session.get(ExternalIdentity, identity_id)
    if identity is None or identity.user_id != user.id:
        raise ForbiddenError("That identity is not linked to your account.")
    others = [i for i in identities_of(session=session, user=user) if i.id != identity.id]
    if not others and not accounts.has_password(user):
        raise ConflictError(
            "This is your only way to sign in: set a password first (a reset link), then unlink."
        )
    session.delete(identity)
    session.flush()
