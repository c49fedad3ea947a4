"""Deep Linking 2.0: the instructor picks problems in jaxjudge while adding an activity
in the LMS; they go back as LTI resource links, each with a grade-book line item and
the custom parameters that name the problem (and ask the LMS for the due date).

The response is a JWT signed with the tool's key (``iss``/``aud`` swapped from the
request, the request's ``data`` echoed), posted by the browser to the platform's
return URL.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from app.lti import keys
from app.lti.claims import DEEP_LINKING, LTI, DeepLinkingSettings
from app.lti.provisioning import CUSTOM_DUE, CUSTOM_POINTS, CUSTOM_PROBLEM
from app.models import LtiPlatform

DEFAULT_MAXIMUM = 100.0


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
