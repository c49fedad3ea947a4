"""What a validated launch creates or finds: the account (by issuer and ``sub``), the
course (by the LMS's context, created on the first staff launch), the member's role,
and the problem a resource link points to (assigned in the course).

An account made by a launch has the LMS's name and email and no password: it signs
in through the LMS. It is otherwise a normal account (its submissions, courses and
pages are everyone's). A learner launching from an LMS course that no instructor
has opened jaxjudge from yet is refused: a course is never made by a learner.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core import names
from app.data import accounts, assignments, catalog, course_problems, courses, lti_scores, members
from app.data.course_submissions import within
from app.errors import ConflictError, InvalidInputError
from app.lti.claims import Launch, Services
from app.lti.launch import LaunchError
from app.models import (
    Assignment,
    Course,
    CourseMember,
    LtiAccount,
    LtiContext,
    LtiPlatform,
    LtiResourceLink,
    Submission,
    User,
)
from app.vocabulary import IdSource, MemberRole, Role, SubmissionStatus

NO_PASSWORD = (
    "!lti"  # not an Argon2 hash: no password ever verifies against it (as accounts.NO_PASSWORD)
)

CUSTOM_PROBLEM = "problem"
CUSTOM_DUE = "due_at"
CUSTOM_POINTS = "points"  # the column's maximum, as deep linking made it


def same_authority(*, session: Session, platform_id: int) -> list[int]:
    """The registrations whose tokens name the same people as ``platform_id``'s: the same
    issuer *and* the same signing keys (JWKS URL). A user is (issuer, sub), but only a
    registration trusted with the same keys may speak for that issuer's users: a second
    LMS claiming a known issuer (a self-hosted Canvas keeps canvas.instructure.com) with
    keys of its own gets accounts of its own."""
    platform = session.get(LtiPlatform, platform_id)
    if platform is None:
        return []
    return list(
        session.scalars(
            select(LtiPlatform.id).where(
                LtiPlatform.issuer == platform.issuer, LtiPlatform.jwks_url == platform.jwks_url
            )
        )
    )


def linked_user(
    *,
    session: Session,
    platform_id: int,
    sub: str,
    email: str,
    full_name: str,
    student_id: str = "",
) -> User:
    """The user the platform's ``sub`` is linked to, made (with no password) the first
    time the platform names them, at a launch or in its roster. An email or student id
    the LMS fills in is marked as the LMS's (``IdSource.LMS``); the LMS's student id
    also replaces one the learner typed, never one from the university's sign-in."""
    linked = session.scalar(
        select(LtiAccount)
        .where(
            LtiAccount.platform_id.in_(same_authority(session=session, platform_id=platform_id)),
            LtiAccount.sub == sub,
        )
        .order_by(LtiAccount.id)
        .limit(1)
    )
    if linked is not None:
        user = session.get(User, linked.user_id)
        if user is None or user.disabled_at is not None:
            raise LaunchError("This jaxjudge account is disabled; ask an administrator.")
        linked.email, linked.full_name = email or linked.email, full_name or linked.full_name
        if not user.email and email:
            user.email, user.email_source = email[:254], IdSource.LMS
        user.display_name = user.display_name or full_name[:120]
        _lms_student_id(user, student_id)
        return user
    try:
        name = accounts.unused_name(
            session=session, email=email, full_name=full_name, subject=sub, prefix="lms"
        )
    except ConflictError as error:
        raise LaunchError("No free user name could be made for this LMS account.") from error
    user = User(
        name=name,
        canonical_name=names.canonical(name),
        password_hash=NO_PASSWORD,
        role=Role.LEARNER,
        email=email[:254],
        email_source=IdSource.LMS if email else IdSource.NONE,
        display_name=full_name[:120],
    )
    _lms_student_id(user, student_id)
    session.add(user)
    session.flush()
    session.add(
        LtiAccount(
            platform_id=platform_id, sub=sub, user_id=user.id, email=email, full_name=full_name
        )
    )
    session.flush()
    return user


def _lms_student_id(user: User, student_id: str) -> None:
    if student_id and user.student_id_source != IdSource.SSO:
        user.student_id, user.student_id_source = student_id, IdSource.LMS


def account(*, session: Session, launch: Launch) -> User:
    return linked_user(
        session=session,
        platform_id=launch.platform_id,
        sub=launch.sub,
        email=launch.email,
        full_name=launch.name,
        student_id=launch.student_id,
    )


def _remember_services(context: LtiContext, services: Services) -> None:
    if services.memberships_url:
        context.memberships_url = services.memberships_url
    if services.lineitems_url:
        context.lineitems_url = services.lineitems_url
    if services.scopes:
        context.scopes = " ".join(services.scopes)


def course(*, session: Session, launch: Launch, user: User) -> Course:
    """The course linked to the launch's context (made on a staff member's first launch),
    with ``user`` a member in the role the LMS gives them."""
    if launch.context_id is None:
        raise LaunchError("This launch comes from outside an LMS course (no context).")
    role = launch.role
    context = session.scalar(
        select(LtiContext).where(
            LtiContext.platform_id == launch.platform_id,
            LtiContext.context_id == launch.context_id,
        )
    )
    if context is None:
        if role is not MemberRole.INSTRUCTOR:
            raise LaunchError(
                "This LMS course is not linked to jaxjudge yet: your instructor links it by"
                " opening jaxjudge from the course once."
            )
        found = Course(
            name=(launch.context_title or f"LMS course {launch.context_id}")[:120],
            join_code=courses.new_join_code(),
        )
        session.add(found)
        session.flush()
        context = LtiContext(
            platform_id=launch.platform_id,
            context_id=launch.context_id,
            course_id=found.id,
            deployment_id=launch.deployment_id,
            title=launch.context_title,
        )
        session.add(context)
    elif context.deployment_id != launch.deployment_id:
        # A context id is unique within its deployment only (LTI core, 5.4.1): one
        # registration serving several institutions must not merge their courses.
        raise LaunchError(
            "This LMS course is linked to jaxjudge through another deployment of the tool."
        )
    _remember_services(context, launch.services)
    found_course = session.get(Course, context.course_id)
    assert found_course is not None
    set_member(session=session, course=found_course, user=user, role=role)
    session.flush()
    return found_course


def set_member(*, session: Session, course: Course, user: User, role: MemberRole) -> None:
    """``user`` in ``course`` as ``role``: the LMS's word is the latest, except that it
    never demotes the course's last instructor (who may teach from jaxjudge alone).
    The LMS vouches for the enrolment, so all of the learner's work in the window
    counts, as if they had joined by code."""
    member = session.scalar(
        select(CourseMember).where(
            CourseMember.course_id == course.id, CourseMember.user_id == user.id
        )
    )
    courses.enrol(session=session, course=course, user=user, how="lms")
    if member is None:
        session.add(CourseMember(course_id=course.id, user_id=user.id, role=role))
        return
    last_instructor = (
        member.role == MemberRole.INSTRUCTOR
        and members.instructor_count(session=session, course=course) <= 1
    )
    if member.role != role and not last_instructor:
        member.role = role


def context_of(*, session: Session, course: Course) -> LtiContext | None:
    return session.scalar(select(LtiContext).where(LtiContext.course_id == course.id))


def _points(value: str | None) -> float | None:
    try:
        points = float(value) if value else None
    except ValueError:
        return None
    return points if points is not None and 0 < points <= 10_000 else None


def _due(value: str | None) -> datetime | None:
    if not value or value.startswith("$"):  # an LMS substitution it did not fill
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return assignments.course_date(moment, "due date")
    except (ValueError, InvalidInputError):  # not a date, or one outside the years we keep
        return None


def resource_link(
    *,
    session: Session,
    course: Course,
    resource_link_id: str,
    chosen: str | None = None,
    named: str | None = None,
    lineitem_url: str | None = None,
    due_at: str | None = None,
    points: str | None = None,
) -> LtiResourceLink | None:
    """The LMS link's problem: ``chosen`` (an instructor just picked it), else the one
    already linked, else ``named`` (the link's custom ``problem`` parameter, which deep
    linking sets). None: the link points nowhere yet. The problem is assigned in the
    course, with the due date the LMS sent (``due_at``, ISO 8601), if any."""
    context = context_of(session=session, course=course)
    assert context is not None
    link = session.scalar(
        select(LtiResourceLink).where(
            LtiResourceLink.context_id == context.id,
            LtiResourceLink.resource_link_id == resource_link_id,
        )
    )
    slug = chosen or (link.problem if link else None) or named
    if slug is None:
        return None
    if catalog.live_version(session=session, slug=slug) is None or not (
        course_problems.in_course_scope(session=session, slug=slug, course_id=course.id)
    ):  # another course's own problem does not exist for this one
        raise LaunchError(
            f"This link names the problem {slug[:100]!r}, which jaxjudge does not have."
        )
    new_column = link is None or link.problem != slug
    if link is None:
        link = LtiResourceLink(
            context_id=context.id, resource_link_id=resource_link_id, problem=slug
        )
        session.add(link)
    link.problem = slug
    if lineitem_url:
        link.lineitem_url = lineitem_url
    maximum = _points(points)
    if maximum is not None:
        link.score_maximum = maximum
    existing = session.scalar(
        select(Assignment).where(Assignment.course_id == course.id, Assignment.problem == slug)
    )
    due = _due(due_at)
    if existing is None or existing.removed_at is not None:
        assignments.assign(session=session, course=course, problem=slug, due_at=due)
    elif due is not None and existing.due_at != due:
        assignments.move_due(assignment=existing, due_at=due)  # its late policy is kept
    session.flush()
    if new_column:  # learners who solved it before the link existed get their scores sent
        graded = within(course, Submission.user_id).where(
            Submission.problem == slug, Submission.status == SubmissionStatus.DONE
        )
        for user_id in set(session.scalars(graded)):
            lti_scores.arm(session=session, link_id=link.id, user_id=user_id)
    return link
