"""The mails an account gets about itself: a password-reset link and an email
verification link, each a single-use link (app/data/one_time_links.py) queued in the
caller's transaction. Links are made when the mail is queued, from ``base_url``:
JAXJUDGE_PUBLIC_URL where set, else the address the request came to."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.core import mail_templates
from app.data import mail, one_time_links
from app.models import OneTimeLink, User, utcnow
from app.vocabulary import IdSource, MailKind, OneTimeLinkPurpose

RESET_PATH = "/password/reset/"
VERIFY_PATH = "/email/verify/"


def reset_link(*, session: Session, user: User, base_url: str) -> str:
    """A new password-reset link for ``user`` (older unused ones stop working)."""
    token = one_time_links.issue(
        session=session, user=user, purpose=OneTimeLinkPurpose.RESET_PASSWORD
    )
    return f"{base_url.rstrip('/')}{RESET_PATH}{token}"


def _minutes(purpose: OneTimeLinkPurpose) -> int:
    return int(one_time_links.LIFETIMES[purpose].total_seconds() // 60)


def mail_reset_link(*, session: Session, user: User, base_url: str) -> bool:
    """Mail ``user`` a reset link, if they have an address that may be mailed (verified,
    or given by their identity provider); returns whether a mail was queued."""
    address = mail.mail_address(user)
    if address is None or user.disabled_at is not None:
        return False
    mail.queue(
        session=session,
        kind=MailKind.PASSWORD_RESET,
        to_address=address,
        template="password-reset",
        user=user,
        link=reset_link(session=session, user=user, base_url=base_url),
        minutes=_minutes(OneTimeLinkPurpose.RESET_PASSWORD),
    )
    return True


def render_decoy(user_name: str) -> None:
    """The rendering a reset mail costs, for a name with no mailable account: the
    answer then takes about as long either way."""
    decoy = User(name=user_name, display_name="", email="")
    mail_templates.render(
        "password-reset",
        user=decoy,
        link="https://example.invalid" + RESET_PATH + "x" * 43,
        minutes=_minutes(OneTimeLinkPurpose.RESET_PASSWORD),
    )


def mail_verification(*, session: Session, user: User, base_url: str) -> None:
    """Mail a link that verifies ``user``'s current (self-declared) email to that address."""
    token = one_time_links.issue(
        session=session, user=user, purpose=OneTimeLinkPurpose.VERIFY_EMAIL, email=user.email
    )
    mail.queue(
        session=session,
        kind=MailKind.EMAIL_VERIFICATION,
        to_address=user.email,
        template="verify-email",
        user=user,
        address=user.email,
        link=f"{base_url.rstrip('/')}{VERIFY_PATH}{token}",
        days=one_time_links.LIFETIMES[OneTimeLinkPurpose.VERIFY_EMAIL].days,
    )


def needs_verification(user: User) -> bool:
    return bool(user.email) and user.email_source == IdSource.SELF_DECLARED


def verify(*, session: Session, user: User, link: OneTimeLink) -> bool:
    """Mark ``user``'s email verified by ``link``, only if it is still the address the
    link was mailed to; False (nothing changes) otherwise."""
    if user.email != link.email or not link.email:
        return False
    if not one_time_links.use(session=session, link=link):
        return False
    user.email_source = IdSource.VERIFIED
    user.email_verified_at = utcnow()
    session.flush()
    return True
