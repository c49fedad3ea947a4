"""An LMS (tests/lti_platform.py) registered with an in-process jaxjudge, and a
learner's or instructor's trip through a launch."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient

from app.core.db import session_scope
from app.lti import keys, platform_keys, services
from app.lti.platforms import PlatformIn, add
from tests.app.lti.probed import Probed
from tests.lti_platform import (
    CLIENT_ID,
    DEPLOYMENT_ID,
    INSTRUCTOR,
    LEARNER,
    Platform,
    User,
)

ADA = User("sub-ada", "Ada Lovelace", "ada@uni.example", [INSTRUCTOR])
GRACE = User("sub-grace", "Grace Hopper", "grace@uni.example", [LEARNER])
ALAN = User("sub-alan", "Alan Turing", "alan@uni.example", [LEARNER])
SLUG = "scan-microbatched-grads"


def tool_jwks() -> dict[str, Any]:
    return keys.public_jwks()


@pytest.fixture
def platform(database: str) -> Iterator[Platform]:
    """A running LMS, registered with jaxjudge (issuer, client id, deployment, URLs)."""
    lms = Platform(tool_jwks=tool_jwks)
    with session_scope() as session:
        add(
            session=session,
            platform=PlatformIn(
                issuer=lms.issuer,
                client_id=CLIENT_ID,
                auth_login_url=lms.login_url,
                token_url=lms.token_url,
                jwks_url=lms.jwks_url,
                deployment_ids=(DEPLOYMENT_ID,),
                name="Test LMS",
            ),
        )
    yield lms
    lms.stop()
    platform_keys.forget()
    services.forget_tokens()


@pytest.fixture
def probed() -> Iterator[Probed]:
    """A web server on 127.0.0.1 that records the requests reaching it."""
    server = Probed()
    yield server
    server.stop()


@pytest.fixture
def probed_tls(tmp_path: Path) -> Iterator[Probed]:
    """The same over TLS, with a certificate for ``localhost``."""
    server = Probed(tls_folder=tmp_path)
    yield server
    server.stop()


@dataclass(frozen=True)
class Login:
    state: str
    nonce: str
    redirect_uri: str


def start_login(client: TestClient, lms: Platform, user: User, *, method: str = "GET") -> Login:
    """The browser follows the LMS's login initiation to jaxjudge, which sends it on to
    the LMS's authorization endpoint (and sets the state cookie)."""
    params = lms.initiation(user)
    if method == "GET":
        answer = client.get("/lti/login", params=params, follow_redirects=False)
    else:
        answer = client.post("/lti/login", data=params, follow_redirects=False)
    assert answer.status_code == 302, answer.text
    location = urlparse(answer.headers["location"])
    assert location.geturl().startswith(lms.login_url)
    query = {k: v[0] for k, v in parse_qs(location.query).items()}
    assert query["client_id"] == CLIENT_ID and query["response_mode"] == "form_post"
    return Login(query["state"], query["nonce"], query["redirect_uri"])


def launch(client: TestClient, lms: Platform, user: User, **claims: Any) -> httpx.Response:
    """A whole launch: login, the LMS's signed id_token, the form post to jaxjudge."""
    login = start_login(client, lms, user)
    token = lms.id_token(nonce=login.nonce, user=user, **claims)
    return client.post(
        "/lti/launch", data={"id_token": token, "state": login.state}, follow_redirects=False
    )
