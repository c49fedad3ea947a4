"""Deep Linking 2.0: the instructor picks problems in jaxjudge while adding an activity
in the LMS; they go back as LTI resource links, each with a grade-book line item and
the custom parameters that name the problem (and ask the LMS for the due date).

The response is a JWT signed with the tool's key (``iss``/``aud`` swapped from the
request, the request's ``data`` echoed), posted by the browser to the platform's
return URL.

A signed response adds activities to the LMS course as the tool's word, so each
request yields at most one, and only to someone who still teaches the course. The
request waits on the server (``LtiDeepLinkRequest``); the browser's session holds
only a random id naming it, so an old copy of the cookie names a request that is
spent. Answering marks it used in one UPDATE whose row count decides (two answers at
once: one is signed), then reads the member's role of that moment; a launch in which
the LMS no longer calls them an instructor spends their waiting requests (``withdraw``;
the course's last instructor keeps the role in jaxjudge, not the request).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from app.data import courses
from app.lti import keys
from app.lti.claims import DEEP_LINKING, LTI, DeepLinkingSettings, Launch
from app.lti.provisioning import CUSTOM_DUE, CUSTOM_POINTS, CUSTOM_PROBLEM
from app.models import Course, LtiDeepLinkRequest, LtiPlatform, User, utcnow
from app.vocabulary import MemberRole

DEFAULT_MAXIMUM = 100.0
REQUEST_MINUTES = 60  # time to pick problems


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def wait_for_pick(*, session: Session, launch: Launch, user: User, course: Course) -> str:
    """Records the launch's deep-linking request (``launch.deep_linking`` is set); the
    random id that the browser's session keeps to name it."""
    assert launch.deep_linking is not None
    token, now = secrets.token_urlsafe(32), utcnow()
    # Requests are kept a day after they expire, like logins.
    session.execute(
        delete(LtiDeepLinkRequest).where(LtiDeepLinkRequest.expires_at < now - timedelta(days=1))
    )
    session.add(
        LtiDeepLinkRequest(
            token_hash=_hash(token),
            user_id=user.id,
            course_id=course.id,
            platform_id=launch.platform_id,
            deployment_id=launch.deployment_id,
            return_url=launch.deep_linking.return_url,
            accept_multiple=launch.deep_linking.accept_multiple,
            data=launch.deep_linking.data,
            created_at=now,
            expires_at=now + timedelta(minutes=REQUEST_MINUTES),
        )
    )
    session.flush()
    return token


def waiting(*, session: Session, token: object, user: User) -> LtiDeepLinkRequest | None:
    """The request ``token`` names, if it is ``user``'s, unused and unexpired."""
    if not isinstance(token, str) or not token or len(token) > 100:
        return None
    return session.scalar(
        select(LtiDeepLinkRequest).where(
            LtiDeepLinkRequest.token_hash == _hash(token),
            LtiDeepLinkRequest.user_id == user.id,
            LtiDeepLinkRequest.used_at.is_(None),
            LtiDeepLinkRequest.expires_at > utcnow(),
        )
    )


def spend(*, session: Session, request: LtiDeepLinkRequest) -> bool:
    """Marks ``request`` used; True for the one caller whose UPDATE did."""
    spent = session.execute(
        update(LtiDeepLinkRequest)
        .where(LtiDeepLinkRequest.id == request.id, LtiDeepLinkRequest.used_at.is_(None))
        .values(used_at=utcnow())
    )
    return getattr(spent, "rowcount", 0) == 1


def still_teaches(*, session: Session, request: LtiDeepLinkRequest) -> bool:
    """Whether the request's user is an instructor of its course now (not at the launch)."""
    course, user = session.get(Course, request.course_id), session.get(User, request.user_id)
    return (
        course is not None
        and user is not None
        and user.disabled_at is None
        and courses.membership(session=session, course=course, user=user) == MemberRole.INSTRUCTOR
    )


def withdraw(*, session: Session, user: User, course: Course) -> None:
    """The LMS launched ``user`` into ``course`` as something other than an instructor:
    their requests waiting there are spent."""
    session.execute(
        update(LtiDeepLinkRequest)
        .where(
            LtiDeepLinkRequest.user_id == user.id,
            LtiDeepLinkRequest.course_id == course.id,
            LtiDeepLinkRequest.used_at.is_(None),
        )
        .values(used_at=utcnow())
    )


def content_item(*, slug: str, title: str, launch_url: str, score_maximum: float) -> dict[str, Any]:
    return {
        "type": "ltiResourceLink",
        "title": title,
        "url": launch_url,
        "lineItem": {"scoreMaximum": score_maximum, "label": title, "tag": slug},
        "custom": {
            CUSTOM_PROBLEM: slug,
            CUSTOM_POINTS: f"{score_maximum:g}",
            # Filled by the LMS with the activity's due date (Canvas and Moodle support it).
            CUSTOM_DUE: "$ResourceLink.submission.endDateTime",
        },
    }


def response_jwt(
    *,
    platform: LtiPlatform,
    deployment_id: str,
    settings: DeepLinkingSettings,
    items: list[dict[str, Any]],
) -> str:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": platform.client_id,
        "aud": platform.issuer,
        "iat": now,
        "exp": now + 600,
        "nonce": secrets.token_urlsafe(16),
        LTI + "message_type": "LtiDeepLinkingResponse",
        LTI + "version": "1.3.0",
        LTI + "deployment_id": deployment_id,
        DEEP_LINKING + "content_items": items if settings.accept_multiple else items[:1],
    }
    if settings.data is not None:
        claims[DEEP_LINKING + "data"] = settings.data
    return keys.sign(claims)
