"""Notifications by email: a staff comment on a learner's submission, a regrade that
changed their verdict or score, an extension granted to them (the daily digest of
due assignments is app/reports/deadline_digest.py).

Each is queued in the transaction of the event that caused it (app/data/mail.py), so a
mail exists exactly when the comment, regrade or extension was committed; it goes only
to an account with an address it may be written to (verified, or given by SSO) whose
switch for that kind is on. Every mail carries an unsubscribe link: a token signed with
the server's secret key naming the account and the kind, which turns that one switch
off without signing in (``unsubscribe``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from itsdangerous import BadSignature, URLSafeSerializer
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.config import settings
from app.core.sessions import secret_key
from app.data.mail import USABLE_SOURCES, mail_address, queue
from app.errors import InvalidInputError
from app.models import Course, CourseMember, Extension, Regrade, Submission, SubmissionComment, User
from app.vocabulary import MailKind, NotificationKind

SWITCHES: dict[NotificationKind, str] = {
    NotificationKind.COMMENT: "notify_comment",
    NotificationKind.REGRADE: "notify_regrade",
    NotificationKind.EXTENSION: "notify_extension",
    NotificationKind.DEADLINE: "notify_deadline",
}
# What each switch is called on the account page and the unsubscribe page.
DESCRIPTIONS: dict[NotificationKind, str] = {
    NotificationKind.COMMENT: "a staff comment on one of your submissions",
    NotificationKind.REGRADE: "a regrade that changed your verdict or score",
    NotificationKind.EXTENSION: "an extension granted to you",
    NotificationKind.DEADLINE: "a daily digest of assignments due within 24 hours",
}
_SALT = "jaxjudge.notifications.unsubscribe"
FALLBACK_URL = "http://localhost:8000"


def base_url() -> str:
    """Where links in mails point: JAXJUDGE_PUBLIC_URL (mails leave outside any request)."""
    return (settings.public_url or FALLBACK_URL).rstrip("/")


def is_on(user: User, kind: NotificationKind) -> bool:
    return bool(getattr(user, SWITCHES[kind]))


def set_switches(*, session: Session, user: User, on: Iterable[NotificationKind]) -> None:
    """Turn on exactly the kinds in ``on`` for ``user``, the others off."""
    wanted = set(on)
    for kind, column in SWITCHES.items():
        setattr(user, column, kind in wanted)
    session.flush()


def _serializer() -> URLSafeSerializer:
    return URLSafeSerializer(secret_key(), salt=_SALT)


def unsubscribe_token(user: User, kind: NotificationKind) -> str:
    return _serializer().dumps([user.id, str(kind)])


def unsubscribe_url(user: User, kind: NotificationKind) -> str:
    return f"{base_url()}/notifications/unsubscribe/{unsubscribe_token(user, kind)}"


def read_token(*, session: Session, token: str) -> tuple[User, NotificationKind]:
    """The account and kind an unsubscribe token names; InvalidInputError for any
    token this server did not sign, or one naming an account that is gone."""
    refused = InvalidInputError(
        "This unsubscribe link is not valid; copy the whole link from the mail, or turn"
        " notifications off on your account page."
    )
    try:
        payload = _serializer().loads(token[:500])
    except BadSignature:
        raise refused from None
    if (
        not isinstance(payload, list)
        or len(payload) != 2
        or not isinstance(payload[0], int)
        or payload[1] not in {str(kind) for kind in NotificationKind}
    ):
        raise refused
    user = session.get(User, payload[0])
    if user is None:
        raise refused
    return user, NotificationKind(payload[1])


def unsubscribe(*, session: Session, token: str) -> tuple[User, NotificationKind]:
    """Turn off the one switch the token names."""
    user, kind = read_token(session=session, token=token)
    setattr(user, SWITCHES[kind], False)
    session.flush()
    return user, kind


def _recipients(
    session: Session, course_id: int, user_ids: Iterable[int], kind: NotificationKind
) -> dict[int, User]:
    """Of ``user_ids`` (members of the course), the accounts that want ``kind`` and may
    be mailed: one query however many, so a 5,000-row extension upload stays a few
    statements."""
    wanted = set(user_ids)
    eligible = session.scalars(
        select(User)
        .join(CourseMember, CourseMember.user_id == User.id)
        .where(
            CourseMember.course_id == course_id,
            getattr(User, SWITCHES[kind]).is_(True),
            User.disabled_at.is_(None),
            User.email != "",
            User.email_source.in_(USABLE_SOURCES),
        )
    )
    return {user.id: user for user in eligible if user.id in wanted}


def _send(
    session: Session,
    user: User,
    notification: NotificationKind,
    mail: MailKind,
    template: str,
    **context: object,
) -> bool:
    address = mail_address(user)
    if address is None or not is_on(user, notification) or user.disabled_at is not None:
        return False
    queue(
        session=session,
        kind=mail,
        to_address=address,
        template=template,
        user=user,
        unsubscribe_url=unsubscribe_url(user, notification),
        account_url=f"{base_url()}/account",
        **context,
    )
    return True


def comment_added(
    *, session: Session, comment: SubmissionComment, submission: Submission, course: Course
) -> bool:
    """Tell the submission's learner of a staff comment (not one they wrote themselves)."""
    learner = session.get(User, submission.user_id)
    if learner is None or learner.id == comment.author_id:
        return False
    return _send(
        session,
        learner,
        NotificationKind.COMMENT,
        MailKind.COMMENT,
        "comment",
        course=course,
        comment=comment,
        submission=submission,
        link=f"{base_url()}/problems/{submission.problem}#submission-{submission.id}",
    )


def extensions_granted(
    *, session: Session, course: Course, granted: list[Extension], learners: dict[int, list[int]]
) -> int:
    """Tell each learner of their extensions (``learners``: each extension's id to the
    learners it covers: one, or a group's); one mail per learner. Returns how many."""
    per_learner: dict[int, list[Extension]] = defaultdict(list)
    for extension in granted:
        for user_id in learners.get(extension.id, []):
            per_learner[user_id].append(extension)
    recipients = _recipients(session, course.id, per_learner, NotificationKind.EXTENSION)
    sent = 0
    for user_id, theirs in sorted(per_learner.items()):
        learner = recipients.get(user_id)
        if learner is None:
            continue
        sent += _send(
            session,
            learner,
            NotificationKind.EXTENSION,
            MailKind.EXTENSION,
            "extension",
            course=course,
            extensions=sorted(theirs, key=lambda e: e.problem),
            link=f"{base_url()}/courses/{course.id}",
        )
    return sent


@dataclass(frozen=True)
class Changed:
    """One submission whose verdict or score a regrade changed."""

    submission_id: int
    old_verdict: str | None
    old_score: float | None
    new_verdict: str | None
    new_score: float | None


def regrade_applied(
    *, session: Session, regrade: Regrade, changed: dict[int, list[Changed]]
) -> int:
    """Tell each learner whose verdict or score moved (``changed``: by user id), one
    mail per learner listing their changed submissions. Returns how many."""
    course = session.get(Course, regrade.course_id)
    if course is None:
        return 0
    recipients = _recipients(session, course.id, changed, NotificationKind.REGRADE)
    sent = 0
    for user_id, theirs in sorted(changed.items()):
        learner = recipients.get(user_id)
        if learner is None or not theirs:
            continue
        sent += _send(
            session,
            learner,
            NotificationKind.REGRADE,
            MailKind.REGRADE,
            "regrade",
            course=course,
            problem=regrade.problem,
            changes=sorted(theirs, key=lambda c: c.submission_id),
            link=f"{base_url()}/courses/{course.id}",
        )
    return sent
