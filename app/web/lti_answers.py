"""What the LTI pages share: the address jaxjudge is reached at, whether the request
came over TLS, and the refusal page. The pages a launch answers with (a refusal, the
new-window offer, Dynamic Registration) may be framed by any site: they hold links,
and forms whose authority is what they carry (an invitation), not a session."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import Response

from app.core.body_limits_and_headers import content_security_policy
from app.core.config import settings
from app.web.render import page

# Pages a launch answers with may be shown in the LMS's frame; they hold no action
# but links and forms back to jaxjudge.
FRAMEABLE_POLICY = content_security_policy(frame_ancestors="*")


def base_url(request: Request) -> str:
    return (settings.public_url or str(request.base_url)).rstrip("/")


def is_secure(request: Request) -> bool:
    return settings.secure_cookies or request.url.scheme == "https"


def refused(request: Request, message: str, code: int = 400, **context: object) -> Response:
    response = page(request, "lti_error.html", None, code, message=message, **context)
    frameable(response)
    return response


def frameable(response: Response) -> None:
    response.headers["content-security-policy"] = FRAMEABLE_POLICY
    response.headers["x-frame-options"] = "ALLOWALL"
