"""The LTI 1.3 claims jaxjudge reads, and what a validated launch says, typed.

Claim names are the IMS specification's URIs; nothing downstream reads the raw
id_token. Roles are the LIS vocabulary: context roles decide a member's role
in the course; a teaching assistant is staff of the course (instructor) until
jaxjudge has a TA role of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.vocabulary import MemberRole

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
DEEP_LINKING = "https://purl.imsglobal.org/spec/lti-dl/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"

MESSAGE_TYPE = LTI + "message_type"
VERSION = LTI + "version"
DEPLOYMENT_ID = LTI + "deployment_id"
TARGET_LINK_URI = LTI + "target_link_uri"
RESOURCE_LINK = LTI + "resource_link"
CONTEXT = LTI + "context"
ROLES = LTI + "roles"
CUSTOM = LTI + "custom"
LIS = LTI + "lis"  # person_sourcedid: the learner's id in the student information system
DEEP_LINKING_SETTINGS = DEEP_LINKING + "deep_linking_settings"

RESOURCE_LINK_REQUEST = "LtiResourceLinkRequest"
DEEP_LINKING_REQUEST = "LtiDeepLinkingRequest"
MESSAGE_TYPES = (RESOURCE_LINK_REQUEST, DEEP_LINKING_REQUEST)

SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_RESULT = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
SCOPE_MEMBERSHIPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
TOOL_SCOPES = (SCOPE_LINEITEM, SCOPE_SCORE, SCOPE_RESULT, SCOPE_MEMBERSHIPS)

_MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
# Who sees a course's submissions and grades. Not a Mentor (Canvas sends observers, a
# parent or an advisor, as mentors) nor a ContentDeveloper (a course designer, who in
# Canvas sees no grades): they learn.
_INSTITUTION_ADMIN = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator"


def member_role(roles: list[str]) -> MemberRole:
    """A course role from LIS role URIs: administrators and instructors teach, teaching
    assistants assist, everyone else learns. Canvas sends a TA both
    "...membership#Instructor" and the sub-role
    "...membership/Instructor#TeachingAssistant": the sub-role decides. The account's
    own role never changes: an LMS vouches for one course, not for the platform."""
    names = [_context_role(role) for role in roles]
    if _INSTITUTION_ADMIN in roles or "Administrator" in {main for main, _sub in names}:
        return MemberRole.INSTRUCTOR
    if any("TeachingAssistant" in (main, sub) for main, sub in names):
        return MemberRole.TEACHING_ASSISTANT
    if any(main == "Instructor" for main, _sub in names):
        return MemberRole.INSTRUCTOR
    return MemberRole.LEARNER


def _context_role(role: str) -> tuple[str, str]:
    """("Instructor", "TeachingAssistant") from "...membership/Instructor#TeachingAssistant",
    ("Instructor", "") from "...membership#Instructor" or the short name the spec
    allows ("Instructor")."""
    if role.startswith(_MEMBERSHIP):
        return role.removeprefix(_MEMBERSHIP), ""
    name = role.removeprefix(_MEMBERSHIP[:-1] + "/")
    main, _hash, sub = name.partition("#")
    return main, sub


@dataclass(frozen=True)
class Services:
    """What the platform lets the tool call for this context."""

    lineitems_url: str | None = None
    lineitem_url: str | None = None  # the link's own column, when the platform made one
    scopes: tuple[str, ...] = ()
    memberships_url: str | None = None


@dataclass(frozen=True)
class DeepLinkingSettings:
    return_url: str
    accept_multiple: bool
    data: str | None


@dataclass(frozen=True)
class Launch:
    """A validated launch: who, from where, into which context, asking for what."""

    platform_id: int
    issuer: str
    deployment_id: str
    message_type: str
    sub: str
    name: str
    email: str
    roles: list[str]
    context_id: str | None
    context_title: str
    resource_link_id: str | None
    target_link_uri: str
    custom: dict[str, str] = field(default_factory=dict)
    services: Services = Services()
    deep_linking: DeepLinkingSettings | None = None
    student_id: str = ""  # the LIS claim's person_sourcedid, where the LMS sends one

    @property
    def role(self) -> MemberRole:
        return member_role(self.roles)


class ClaimError(ValueError):
    """A claim is missing or malformed: the message names it."""


def text(payload: dict[str, Any], key: str, *, required: bool = True, limit: int = 1000) -> str:
    value = payload.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value or len(value) > limit or "\x00" in value:
        raise ClaimError(f"the id_token's {key.rsplit('/', 1)[-1]!r} claim is missing or invalid")
    return value


def mapping(payload: dict[str, Any], key: str) -> dict[str, Any]:
    value = payload.get(key, {})
    if not isinstance(value, dict):
        raise ClaimError(f"the id_token's {key.rsplit('/', 1)[-1]!r} claim is not an object")
    return value


def read(platform_id: int, payload: dict[str, Any]) -> Launch:
    """The typed launch of a payload whose signature and registered claims were checked."""
    message_type = text(payload, MESSAGE_TYPE)
    if message_type not in MESSAGE_TYPES:
        raise ClaimError(f"jaxjudge does not handle {message_type!r} messages")
    if text(payload, VERSION) != "1.3.0":
        raise ClaimError("only LTI version 1.3.0 launches are accepted")
    roles = payload.get(ROLES)
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        raise ClaimError("the id_token's 'roles' claim is missing or invalid")
    context = mapping(payload, CONTEXT)
    link = mapping(payload, RESOURCE_LINK)
    if message_type == RESOURCE_LINK_REQUEST and not isinstance(link.get("id"), str):
        raise ClaimError("a resource link launch needs the 'resource_link' claim's id")
    ags, nrps = mapping(payload, AGS_CLAIM), mapping(payload, NRPS_CLAIM)
    scopes = ags.get("scope", [])
    services = Services(
        lineitems_url=_url(ags.get("lineitems")),
        lineitem_url=_url(ags.get("lineitem")),
        scopes=tuple(s for s in scopes if isinstance(s, str)) if isinstance(scopes, list) else (),
        memberships_url=_url(nrps.get("context_memberships_url")),
    )
    deep = None
    if message_type == DEEP_LINKING_REQUEST:
        dl = mapping(payload, DEEP_LINKING_SETTINGS)
        return_url = _url(dl.get("deep_link_return_url"))
        if return_url is None:
            raise ClaimError("a deep-linking request needs 'deep_link_return_url'")
        data = dl.get("data")
        deep = DeepLinkingSettings(
            return_url=return_url,
            accept_multiple=dl.get("accept_multiple") is True,
            data=data if isinstance(data, str) else None,
        )
    custom = {
        k: v[:1000]
        for k, v in mapping(payload, CUSTOM).items()
        if isinstance(v, str) and "\x00" not in v
    }
    return Launch(
        platform_id=platform_id,
        issuer=text(payload, "iss"),
        deployment_id=text(payload, DEPLOYMENT_ID, limit=255),
        message_type=message_type,
        sub=text(payload, "sub", limit=255),
        name=_short(payload.get("name")) or _short(payload.get("given_name")),
        email=_short(payload.get("email")),
        roles=list(roles),
        context_id=_identifier(context.get("id"), "context"),
        context_title=_short(context.get("title")) or _short(context.get("label")),
        resource_link_id=_identifier(link.get("id"), "resource_link"),
        target_link_uri=text(payload, TARGET_LINK_URI, required=False, limit=2000),
        custom=custom,
        services=services,
        deep_linking=deep,
        student_id=_short(mapping(payload, LIS).get("person_sourcedid"), limit=64).strip(),
    )


def _identifier(value: object, claim: str) -> str | None:
    """An id the LMS chose (a context's, a link's): kept as sent, so bounded, not cut."""
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= 255 or "\x00" in value:
        raise ClaimError(f"the id_token's {claim!r} id is not 1-255 characters of text")
    return value


def _short(value: object, limit: int = 255) -> str:
    """Display text (a name, an email, a title): cut to fit, NUL characters dropped."""
    return value.replace("\x00", "")[:limit] if isinstance(value, str) else ""


def _url(value: object) -> str | None:
    if isinstance(value, str) and value.startswith(("https://", "http://")) and len(value) <= 1000:
        return value
    return None
