"""LTI Advantage services: an OAuth 2 access token, scores (AGS) and the roster (NRPS).

The token comes from the platform's token URL by the client-credentials grant with a
JWT client assertion signed by the tool's key (IMS Security Framework 4.1), and is
cached per (token URL, client id, scopes) until a minute before it expires.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.lti import keys
from app.lti.http import PlatformCallError, call
from app.models import LtiPlatform

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
LINEITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
MEMBERSHIP_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
MAX_ROSTER_PAGES = 50

_tokens: dict[tuple[str, str, str], tuple[str, float]] = {}
_lock = threading.Lock()


def access_token(platform: LtiPlatform, scopes: tuple[str, ...]) -> str:
    scope = " ".join(sorted(scopes))
    key = (platform.token_url, platform.client_id, scope)
    with _lock:
        cached = _tokens.get(key)
    if cached is not None and cached[1] > time.monotonic():
        return cached[0]
    now = int(time.time())
    assertion = keys.sign(
        {
            "iss": platform.client_id,
            "sub": platform.client_id,
            "aud": platform.token_url,
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_urlsafe(16),
        },
    )
    body = call(
        "POST",
        platform.token_url,
        form={
            "grant_type": "client_credentials",
            "client_assertion_type": ASSERTION_TYPE,
            "client_assertion": assertion,
            "scope": scope,
        },
    ).body
    if not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
        raise PlatformCallError(f"{platform.token_url} gave no access token")
    lifetime = body.get("expires_in", 3600)
    lifetime = lifetime if isinstance(lifetime, int | float) else 3600
    with _lock:
        _tokens[key] = (body["access_token"], time.monotonic() + max(0.0, lifetime - 60))
    return str(body["access_token"])


def forget_tokens() -> None:
    with _lock:
        _tokens.clear()


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass(frozen=True)
class Score:
    user_sub: str
    score_given: float
    score_maximum: float
    activity_progress: str  # Initialized | Started | InProgress | Submitted | Completed
    grading_progress: str  # FullyGraded | Pending | PendingManual | Failed | NotReady
    timestamp: datetime
    comment: str = ""


def post_score(token: str, lineitem_url: str, score: Score) -> None:
    """POST the score to ``{lineitem}/scores`` (the query string kept after the path)."""
    base, _, query = lineitem_url.partition("?")
    url = base.rstrip("/") + "/scores" + (f"?{query}" if query else "")
    body: dict[str, Any] = {
        "userId": score.user_sub,
        "scoreGiven": score.score_given,
        "scoreMaximum": score.score_maximum,
        "activityProgress": score.activity_progress,
        "gradingProgress": score.grading_progress,
        "timestamp": score.timestamp.replace(tzinfo=UTC).isoformat(timespec="milliseconds"),
    }
    if score.comment:
        body["comment"] = score.comment
    call("POST", url, json_body=body, headers=_bearer(token), content_type=SCORE_TYPE)


def create_lineitem(
    token: str,
    lineitems_url: str,
    *,
    label: str,
    score_maximum: float,
    resource_link_id: str,
    tag: str,
) -> str:
    """A grade-book column for a link that came without one; returns its URL."""
    body = call(
        "POST",
        lineitems_url,
        json_body={
            "label": label,
            "scoreMaximum": score_maximum,
            "resourceLinkId": resource_link_id,
            "tag": tag,
        },
        headers={**_bearer(token), "Accept": LINEITEM_TYPE},
        content_type=LINEITEM_TYPE,
    ).body
    made = body.get("id") if isinstance(body, dict) else None
    if (
        not isinstance(made, str)
        or not made.startswith(("https://", "http://"))
        or len(made) > 1000
    ):
        # Permanent (422): retrying would make another column each time.
        raise PlatformCallError(f"{lineitems_url} did not answer a usable line item id", 422)
    return made


@dataclass(frozen=True)
class Member:
    sub: str
    name: str
    email: str
    roles: list[str]
    active: bool


def roster(token: str, memberships_url: str) -> list[Member]:
    """Every member of the context, following ``rel="next"`` links."""
    members: list[Member] = []
    url: str | None = memberships_url
    for _ in range(MAX_ROSTER_PAGES):
        if url is None:
            break
        answer = call("GET", url, headers={**_bearer(token), "Accept": MEMBERSHIP_TYPE})
        page = answer.body if isinstance(answer.body, dict) else {}
        for entry in page.get("members", []) if isinstance(page.get("members"), list) else []:
            if not isinstance(entry, dict):
                continue
            sub = entry.get("user_id")
            if not isinstance(sub, str) or not 1 <= len(sub) <= 255 or "\x00" in sub:
                continue  # not a user id jaxjudge can keep: skipped, not cut
            roles = entry.get("roles", [])
            members.append(
                Member(
                    sub=sub,
                    name=_text(entry.get("name")),
                    email=_text(entry.get("email")),
                    roles=[r for r in roles if isinstance(r, str)]
                    if isinstance(roles, list)
                    else [],
                    active=entry.get("status", "Active") == "Active",
                )
            )
        url = _next_link(answer.headers.get("link", ""))
    return members


def _text(value: object) -> str:
    return value.replace("\x00", "")[:255] if isinstance(value, str) else ""


def _next_link(header: str) -> str | None:
    for part in header.split(","):
        if 'rel="next"' in part and "<" in part and ">" in part:
            return part[part.index("<") + 1 : part.index(">")]
    return None
