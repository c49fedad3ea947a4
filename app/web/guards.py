"""Who may see a page, as dependencies a route declares in its signature (what guards
every request before any route, body limits and security headers, is
app/core/body_limits_and_headers.py).

    def course_page(access: CourseMember) -> Response: ...

`PageUser` is the signed-in user or None; `SignedInUser` sends everyone else to
sign in (app/server/error_handlers.py turns `SignInRequiredError` into a redirect that comes back);
`Staff`, `Publisher` and `Admin` require an account role; `CourseMember` and
`CourseStaff` (instructors and teaching assistants) and `CourseInstructor` resolve the path's ``course_id`` for a member (other courses do
not exist for you: 404); `CsrfChecked` requires the form's ``csrf_token``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Form, Request

from app.core.request_db import SessionDep
from app.core.sessions import browser_session_id, check_csrf
from app.data import courses, web_sessions
from app.data.courses import CourseAccess
from app.errors import ForbiddenError
from app.models import User
from app.vocabulary import PREVIEW_ROLES, PUBLISH_ROLES, Role


@dataclass(frozen=True)
class Viewer:
    """What a page's header shows of the signed-in user."""

    name: str
    role: Role


class SignInRequiredError(Exception):
    """A page that needs a signed-in user was asked for without one."""


def _optional_user(request: Request, session: SessionDep) -> User | None:
    found = web_sessions.find(session=session, sid=browser_session_id(request))
    if found is None:
        return None
    user, web_session = found
    request.state.web_session_id = web_session.id  # the account page's "this browser"
    # For an error page's header (app/server/error_handlers.py), after the session ends.
    request.state.viewer = Viewer(name=user.name, role=Role(user.role))
    return user


PageUser = Annotated[User | None, Depends(_optional_user)]


def _signed_in_user(user: PageUser) -> User:
    if user is None:
        raise SignInRequiredError
    return user


SignedInUser = Annotated[User, Depends(_signed_in_user)]


class RequireRole:
    """A dependency admitting accounts with one of the given roles (403 otherwise)."""

    def __init__(self, *roles: Role) -> None:
        self.roles = roles

    def __call__(self, user: SignedInUser) -> User:
        if user.role not in self.roles:
            raise ForbiddenError(f"Only {', '.join(self.roles)} accounts can do this.")
        return user


Staff = Annotated[User, Depends(RequireRole(*PREVIEW_ROLES))]
Publisher = Annotated[User, Depends(RequireRole(*PUBLISH_ROLES))]
Admin = Annotated[User, Depends(RequireRole(Role.ADMIN))]


def _course_member(course_id: int, user: SignedInUser, session: SessionDep) -> CourseAccess:
    return courses.access(session=session, course_id=course_id, user=user)


CourseMember = Annotated[CourseAccess, Depends(_course_member)]


def _course_instructor(found: CourseMember) -> CourseAccess:
    return courses.as_instructor(found)


CourseInstructor = Annotated[CourseAccess, Depends(_course_instructor)]


def _course_staff(found: CourseMember) -> CourseAccess:
    return courses.as_staff(found)


CourseStaff = Annotated[CourseAccess, Depends(_course_staff)]


def _csrf_form(request: Request, csrf_token: Annotated[str, Form()] = "") -> None:
    check_csrf(request, csrf_token)


CsrfChecked = Annotated[None, Depends(_csrf_form)]
