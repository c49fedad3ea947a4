"""The course roster from the LMS (Names and Role Provisioning Services): every active
member of the linked context becomes a member of the course, with an account made
for those who never launched (they appear on the grade book as not started). Synced
on each staff launch and on demand; members the LMS no longer lists are kept (their
work stays in the grade book)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.lti import claims, services
from app.lti.launch import LaunchError
from app.lti.provisioning import linked_user, set_member
from app.models import Course, LtiContext, LtiPlatform, utcnow


@dataclass(frozen=True)
class RosterSync:
    members: int
    skipped_inactive: int


def sync(session: Session, *, course: Course, context: LtiContext) -> RosterSync:
    """Raises ``PlatformCallError`` when the LMS cannot be reached."""
    platform = session.get(LtiPlatform, context.platform_id)
    if platform is None or not context.memberships_url:
        raise LaunchError("The LMS offers no roster for this course.")
    token = services.access_token(platform, (claims.SCOPE_MEMBERSHIPS,))
    members = services.roster(token, context.memberships_url)
    inactive = 0
    for member in members:
        if not member.active:
            inactive += 1
            continue
        try:
            user = linked_user(
                session=session,
                platform_id=platform.id,
                sub=member.sub,
                email=member.email,
                full_name=member.name,
            )
        except LaunchError:
            inactive += 1  # a disabled account stays out
            continue
        set_member(session=session, course=course, user=user, role=claims.member_role(member.roles))
    context.roster_synced_at = utcnow()
    session.flush()
    return RosterSync(members=len(members) - inactive, skipped_inactive=inactive)
