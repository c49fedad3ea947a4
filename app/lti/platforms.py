"""Registered platforms (an LMS's issuer and the client id it gave jaxjudge) and their
deployments: adding, listing, removing, finding (keyword-only data functions)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.errors import InvalidInputError, NotFoundError
from app.models import LtiDeployment, LtiPlatform


@dataclass(frozen=True)
class PlatformIn:
    """What an admin enters (or Dynamic Registration learns) about a platform."""

    issuer: str
    client_id: str
    auth_login_url: str
    token_url: str
    jwks_url: str
    deployment_ids: tuple[str, ...] = ()
    name: str = ""


def _url_problem(field: str, url: str, limit: int = 500) -> str | None:
    if (
        not url.startswith(("https://", "http://"))
        or len(url) > limit
        or any(c.isspace() or ord(c) < 0x20 for c in url)
    ):
        return f"{field} must be an http(s) URL of at most {limit} characters"
    return None


def add(*, session: Session, platform: PlatformIn) -> LtiPlatform:
    """Register a platform; for one already registered, set its URLs and name and add
    the deployment ids."""
    problems = [
        p
        for p in (
            _url_problem("the issuer", platform.issuer, limit=255),
            _url_problem("the login URL", platform.auth_login_url),
            _url_problem("the token URL", platform.token_url),
            _url_problem("the JWKS URL", platform.jwks_url),
        )
        if p
    ]
    if (
        not platform.client_id.strip()
        or len(platform.client_id) > 255
        or "\x00" in platform.client_id
    ):
        problems.append("the client id is 1-255 characters")
    if any(not d.strip() or len(d) > 255 or "\x00" in d for d in platform.deployment_ids):
        problems.append("a deployment id is 1-255 characters")
    if problems:
        raise InvalidInputError("; ".join(problems))
    found = find(session=session, issuer=platform.issuer, client_id=platform.client_id)
    if found is None:
        found = LtiPlatform(issuer=platform.issuer, client_id=platform.client_id)
        session.add(found)
    # Registering again corrects the URLs (an admin's typo, a moved LMS) and adds
    # deployments; removing and re-adding would lose the accounts' and courses' links.
    found.name = platform.name[:120] or found.name or platform.issuer[:120]
    found.auth_login_url, found.token_url = platform.auth_login_url, platform.token_url
    found.jwks_url = platform.jwks_url
    session.flush()
    for deployment in platform.deployment_ids:
        if deployment not in deployments_of(session=session, platform=found):
            session.add(LtiDeployment(platform_id=found.id, deployment_id=deployment))
    session.flush()
    return found


def find(*, session: Session, issuer: str, client_id: str | None) -> LtiPlatform | None:
    """The registration for ``issuer`` and ``client_id``; with no client id (a login
    initiation may omit it), the issuer's only registration."""
    query = select(LtiPlatform).where(LtiPlatform.issuer == issuer)
    if client_id:
        return session.scalar(query.where(LtiPlatform.client_id == client_id))
    found = list(session.scalars(query.limit(2)))
    return found[0] if len(found) == 1 else None


def deployments_of(*, session: Session, platform: LtiPlatform) -> list[str]:
    return list(
        session.scalars(
            select(LtiDeployment.deployment_id)
            .where(LtiDeployment.platform_id == platform.id)
            .order_by(LtiDeployment.id)
        )
    )


def all_platforms(*, session: Session) -> list[LtiPlatform]:
    return list(session.scalars(select(LtiPlatform).order_by(LtiPlatform.id)))


def remove(*, session: Session, platform_id: int) -> LtiPlatform:
    """Forget a platform: its launches stop working. Its courses and accounts stay in
    jaxjudge, but their links to the LMS go (contexts, accounts' subs, links, grades not
    yet sent): registering it again starts those afresh. To fix a URL, ``add`` again."""
    platform = session.get(LtiPlatform, platform_id)
    if platform is None:
        raise NotFoundError(f"no LTI platform {platform_id}")
    session.execute(delete(LtiPlatform).where(LtiPlatform.id == platform_id))
    session.flush()
    return platform
