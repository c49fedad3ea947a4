"""Registration: LTI Dynamic Registration against the platform server (behind an admin's
invitation), and an admin registering an LMS by hand on the page."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.core.db import session_scope
from app.lti import registration
from app.lti.platforms import all_platforms, deployments_of
from app.models import LtiPlatform
from tests.app.conftest import sign_in, token_for
from tests.app.lti.conftest import ADA, SLUG, launch
from tests.lti_platform import CLIENT_ID, DEPLOYMENT_ID, Platform

TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"


@pytest.fixture
def lms(database: str) -> Iterator[Platform]:
    """A platform server that is *not* registered yet."""
    from tests.app.lti.conftest import tool_jwks

    platform = Platform(tool_jwks=tool_jwks)
    yield platform
    platform.stop()


def platforms_count() -> int:
    with session_scope() as session:
        return session.scalar(select(func.count()).select_from(LtiPlatform)) or 0


def opened(
    client: TestClient, invitation: str, configuration: str, token: str = ""
) -> httpx.Response:
    """The LMS opens the registration link (its configuration's URL and token added)."""
    params = {"invitation": invitation, "openid_configuration": configuration}
    if token:
        params["registration_token"] = token
    return client.get("/lti/register", params=params)


def registration_page(client: TestClient, lms: Platform, invitation: str) -> str:
    answer = opened(
        client, invitation, f"{lms.url}/.well-known/openid-configuration", "registration-token"
    )
    assert answer.status_code == 200, answer.text
    return str(answer.text)


def confirm(client: TestClient, page: str) -> str:
    fields = dict(re.findall(r'name="([a-z_]+)" value="([^"]*)"', page))
    return client.post("/lti/register", data=fields).text


def test_dynamic_registration_registers_and_launches_work(
    client: TestClient, lms: Platform
) -> None:
    page = registration_page(client, lms, registration.invitation("maths"))
    assert "testlms" in page and lms.issuer in page
    assert platforms_count() == 0  # nothing before the admin confirms
    done = confirm(client, page)
    assert "jaxjudge is registered" in done and 'id="lti-registered"' in done
    (sent,) = lms.recorded.registrations
    base = "http://testserver"
    assert sent["initiate_login_uri"] == f"{base}/lti/login"
    assert sent["redirect_uris"] == [f"{base}/lti/launch"]
    assert sent["jwks_uri"] == f"{base}/lti/jwks"
    assert sent["token_endpoint_auth_method"] == "private_key_jwt"
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in sent["scope"]
    messages = [m["type"] for m in sent[TOOL_CONFIGURATION]["messages"]]
    assert messages == ["LtiDeepLinkingRequest", "LtiResourceLinkRequest"]
    with session_scope() as session:
        (platform,) = all_platforms(session=session)
        assert (platform.issuer, platform.client_id) == (lms.issuer, CLIENT_ID)
        assert platform.auth_login_url == lms.login_url and platform.jwks_url == lms.jwks_url
        assert deployments_of(session=session, platform=platform) == [DEPLOYMENT_ID]
    assert launch(client, lms, ADA, custom={"problem": SLUG}).status_code == 303


def test_registration_needs_an_invitation_jaxjudge_made(client: TestClient, lms: Platform) -> None:
    for invitation in ["", "forged", registration.invitation()[:-2] + "xx"]:
        answer = opened(client, invitation, f"{lms.url}/.well-known/openid-configuration")
        assert answer.status_code == 400 and "not one jaxjudge made" in answer.text
    assert lms.recorded.registrations == [] and platforms_count() == 0


def test_a_refused_registration_registers_nothing(client: TestClient, lms: Platform) -> None:
    page = registration_page(client, lms, registration.invitation())
    done = confirm(client, page.replace('value="registration-token"', 'value="wrong"'))
    assert "refused the registration" in done and "HTTP 401" in done
    assert "bad registration token" not in done  # the LMS's status, never its answer
    assert platforms_count() == 0


def test_an_invitation_registers_one_lms(client: TestClient, lms: Platform) -> None:
    invitation = registration.invitation()
    page = registration_page(client, lms, invitation)
    assert "jaxjudge is registered" in confirm(client, page)
    again = opened(client, invitation, f"{lms.url}/.well-known/openid-configuration")
    assert again.status_code == 400 and "used already" in again.text
    assert "used already" in confirm(client, page) and platforms_count() == 1


def test_registration_follows_no_redirect(client: TestClient, lms: Platform) -> None:
    """The https and issuer checks hold for the URL that answers: a redirect is refused."""
    answer = opened(client, registration.invitation(), f"{lms.url}/moved-configuration")
    assert answer.status_code == 400 and "answered HTTP 302" in answer.text


def test_registration_goes_over_https_only(client: TestClient, lms: Platform) -> None:
    answer = opened(
        client, registration.invitation(), "http://lms.uni.example/.well-known/openid-configuration"
    )
    assert answer.status_code == 400 and "only over https" in answer.text


def test_a_configuration_claiming_another_issuer_is_refused(
    client: TestClient, lms: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = lms.openid_configuration()
    # Another site's issuer; and one the serving URL merely starts with (the host
    # without the port, as "https://canvas.instructure.com" begins
    # "https://canvas.instructure.com.evil.example").
    for claimed in ["https://canvas.example", "http://127.0.0.1"]:
        monkeypatch.setattr(lms, "openid_configuration", lambda c=claimed: {**real, "issuer": c})
        answer = opened(
            client, registration.invitation(), f"{lms.url}/.well-known/openid-configuration"
        )
        assert answer.status_code == 400 and "not served by its issuer" in answer.text, claimed


def test_an_admin_registers_an_lms_by_hand(client: TestClient, lms: Platform) -> None:
    token_for("root", role="admin")
    csrf = sign_in(client, "root")
    fields = {
        "csrf_token": csrf,
        "name": "Moodle",
        "issuer": lms.issuer,
        "client_id": CLIENT_ID,
        "deployment_ids": f"{DEPLOYMENT_ID} other-deployment",
        "auth_login_url": lms.login_url,
        "token_url": lms.token_url,
        "jwks_url": lms.jwks_url,
    }
    bad = client.post("/admin/lti/platforms", data={**fields, "jwks_url": "ftp://x"})
    assert bad.status_code == 400 and "JWKS URL" in bad.text and platforms_count() == 0
    assert client.post("/admin/lti/platforms", data=fields).status_code == 200
    page = client.get("/admin/lti").text
    assert lms.issuer in page and "other-deployment" in page
    assert "http://testserver/lti/login" in page and "http://testserver/lti/jwks" in page
    link = client.post("/admin/lti/registration-link", data={"csrf_token": csrf, "note": "x"})
    found = re.search(r'id="registration-link">([^<]+)<', link.text)
    assert found and "/lti/register?invitation=" in found[1]
    assert launch(client, lms, ADA, custom={"problem": SLUG}).status_code == 303
