"""The ids a grade export carries: the keys an LMS matches its rows on.

Canvas matches a row on its SIS User ID (the student id) and SIS Login ID (the email);
Moodle on the ID number or the email address. A learner types their own student id
and email on the account page: nothing verifies them, and nothing stops a learner
typing a classmate's, whose grades the LMS would then give them. So, in one export:

- each key comes from the most trusted source that has one: the student id from the
  instructor's mapping (the ``user,student_id`` CSV on the people page) over the
  account's own, the email from the course's LMS (the account its launches and
  roster linked) over the account's own. The account's own says where it came from
  (``User.student_id_source``, ``User.email_source``): the university's sign-in
  (SSO), an LMS launch, a mailed link the learner followed (an email only), or
  typed by the learner (*unverified*).
- an email the learner typed and never verified is no key at all: its cell is blank
  and the companion says why (a typed student id is still exported, marked).
- a value more than one row holds (whatever its case) is withheld: its cell is left
  blank in every row holding it, so the LMS matches none of them to the wrong person;
  except that where exactly one of those rows holds it from a trusted source, that
  row keeps it (the mapping or the LMS wins over a learner's claim).
- the export's companion, ``grades-ids.csv`` (app/reports/exports.py, ``ids_csv``),
  lists every row's keys with their source and what became of them; the course page
  warns of each withheld one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Course, CourseMember, LtiAccount, LtiContext, LtiPlatform, User
from app.vocabulary import IdSource

COLUMNS = {"student_id": "student id", "email": "email"}


class Source(StrEnum):
    MAPPING = "instructor's mapping"
    LMS = "LMS"
    SSO = "university sign-in"
    VERIFIED = "verified by a mailed link"
    LEARNER = "set by the learner (unverified)"


TRUSTED = frozenset({Source.MAPPING, Source.LMS, Source.SSO, Source.VERIFIED})
# Where the account's own id came from (User.student_id_source, User.email_source).
_ACCOUNT_SOURCES: dict[str, Source] = {
    IdSource.SSO: Source.SSO,
    IdSource.LMS: Source.LMS,
    IdSource.VERIFIED: Source.VERIFIED,
}


@dataclass(frozen=True)
class Key:
    """One id of one row: its value, where it came from, and the other learners whose
    rows hold the same value (any: it is withheld, unless ``kept``)."""

    value: str
    source: Source
    shared_with: tuple[str, ...] = ()
    kept: bool = False  # shared, but the one trusted holder among them
    unverified: bool = False  # an email its owner typed and never verified: not a key

    @property
    def withheld(self) -> bool:
        return self.unverified or (bool(self.shared_with) and not self.kept)

    @property
    def exported(self) -> str:
        return "" if self.withheld else self.value

    @property
    def fate(self) -> str:
        """Whether the exports carry it, in words."""
        if self.unverified:
            return "no: its owner has not verified it (a link is mailed when it is set)"
        if self.withheld:
            return "no: also held by " + ", ".join(self.shared_with)
        if self.kept:
            return "yes: the trusted holder; withheld from " + ", ".join(self.shared_with)
        return "yes"


@dataclass(frozen=True)
class Withheld:
    learner: str
    id: str  # a label of COLUMNS
    value: str
    shared_with: tuple[str, ...]


def _lms_emails(session: Session, course: Course, user_ids: list[int]) -> dict[int, str]:
    """Each learner's email as the course's LMS gave it. The registrations with the same
    issuer and keys name the same people (app/lti/provisioning.py, ``same_authority``)."""
    linked = session.execute(
        select(LtiPlatform.issuer, LtiPlatform.jwks_url)
        .join(LtiContext, LtiContext.platform_id == LtiPlatform.id)
        .where(LtiContext.course_id == course.id)
    ).first()
    if linked is None:
        return {}
    same_authority = select(LtiPlatform.id).where(
        LtiPlatform.issuer == linked.issuer, LtiPlatform.jwks_url == linked.jwks_url
    )
    rows = session.execute(
        select(LtiAccount.user_id, LtiAccount.email)
        .where(
            LtiAccount.platform_id.in_(same_authority),
            LtiAccount.user_id.in_(user_ids),
            LtiAccount.email != "",
        )
        .order_by(LtiAccount.id)
    )
    found: dict[int, str] = {}
    for user_id, email in rows:
        found.setdefault(user_id, email.strip())
    return found


def _own(source: str) -> Source:
    """An account's own id's source; typed by the learner unless SSO, the LMS or a
    followed link vouches for it."""
    return _ACCOUNT_SOURCES.get(source, Source.LEARNER)  # a StrEnum key matches its str


def _found(session: Session, course: Course, learners: list[User]) -> dict[int, dict[str, Key]]:
    ids = [u.id for u in learners]
    mapped: dict[int, str] = {
        user_id: student_id
        for user_id, student_id in session.execute(
            select(CourseMember.user_id, CourseMember.student_id).where(
                CourseMember.course_id == course.id, CourseMember.user_id.in_(ids)
            )
        )
    }
    lms = _lms_emails(session, course, ids)
    found: dict[int, dict[str, Key]] = {}
    for user in learners:
        keys: dict[str, Key] = {}
        if mapped.get(user.id, "").strip():
            keys["student_id"] = Key(mapped[user.id].strip(), Source.MAPPING)
        elif user.student_id.strip():
            keys["student_id"] = Key(user.student_id.strip(), _own(user.student_id_source))
        if lms.get(user.id):
            keys["email"] = Key(lms[user.id], Source.LMS)
        elif user.email.strip():
            source = _own(user.email_source)
            keys["email"] = Key(user.email.strip(), source, unverified=source is Source.LEARNER)
        found[user.id] = keys
    return found


def keys_of(*, session: Session, course: Course, learners: list[User]) -> dict[int, dict[str, Key]]:
    """Per learner of one export, their keys by column (``COLUMNS``): absent where they
    have none, ``withheld`` where another row holds the same."""
    found = _found(session, course, learners)
    names = {u.id: u.name for u in learners}
    for column in COLUMNS:
        holders: dict[str, list[int]] = {}
        for user_id, keys in found.items():
            if column in keys and not keys[column].unverified:
                holders.setdefault(keys[column].value.casefold(), []).append(user_id)
        for same in holders.values():
            if len(same) < 2:
                continue
            trusted = [user_id for user_id in same if found[user_id][column].source in TRUSTED]
            for user_id in same:
                key = found[user_id][column]
                found[user_id][column] = Key(
                    key.value,
                    key.source,
                    shared_with=tuple(names[other] for other in same if other != user_id),
                    kept=trusted == [user_id],
                )
    return found


def withheld(*, session: Session, course: Course, learners: list[User]) -> list[Withheld]:
    """Every key left out of the exports, for the course page's warning."""
    names = {u.id: u.name for u in learners}
    return [
        Withheld(names[user_id], COLUMNS[column], key.value, key.shared_with)
        for user_id, keys in keys_of(session=session, course=course, learners=learners).items()
        for column, key in keys.items()
        if key.withheld and not key.unverified  # the companion lists those
    ]
