"""Registration: LTI Dynamic Registration against the platform server (behind an admin's
invitation), and an admin registering an LMS by hand on the page. Registration as a
way into jaxjudge's own network (SSRF): refused addresses, one read per invitation, one
message for every failure, against servers on 127.0.0.1 that record what reaches them."""

from __future__ import annotations

import html
import logging
import re
import socket
from collections.abc import Iterator

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.core.config import settings
from app.core.db import session_scope
from app.lti import registration
from app.lti.platforms import all_platforms, deployments_of
from app.models import LtiPlatform
from tests.app.conftest import sign_in, token_for
from tests.app.lti.conftest import ADA, SLUG, launch
from tests.app.lti.probed import Probed
from tests.lti_platform import CLIENT_ID, DEPLOYMENT_ID, Platform

TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"
LOOPBACK = "127.0.0.0/8 ::1/128"


@pytest.fixture
def loopback_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The setting that lets registration reach an LMS on this machine (the tests')."""
    monkeypatch.setattr(settings, "lti_registration_private_networks", LOOPBACK)


@pytest.fixture
def lms(database: str, loopback_allowed: None) -> Iterator[Platform]:
    """A platform server that is *not* registered yet, on loopback, which registration
    is allowed to reach."""
    from tests.app.lti.conftest import tool_jwks

    platform = Platform(tool_jwks=tool_jwks)
    yield platform
    platform.stop()


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.WARNING, logger="jaxjudge.lti")
    return caplog


def message(page: httpx.Response) -> str:
    """The refusal page's message, as the LMS admin reads it."""
    found = re.search(r'<p class="error" role="alert">(.*?)</p>', page.text, re.S)
    assert found, page.text
    return html.unescape(found[1]).strip()


def free_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return int(free.getsockname()[1])


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


def test_a_refused_registration_registers_nothing(
    client: TestClient, lms: Platform, logged: pytest.LogCaptureFixture
) -> None:
    page = registration_page(client, lms, registration.invitation())
    done = confirm(client, page.replace('value="registration-token"', 'value="wrong"'))
    assert registration.FAILED in html.unescape(done) and "401" not in done
    assert "bad registration token" not in done  # never the LMS's answer
    assert "answered HTTP 401" in logged.text  # the admin reads why in the log
    assert platforms_count() == 0


def test_an_invitation_registers_one_lms(client: TestClient, lms: Platform) -> None:
    invitation = registration.invitation()
    page = registration_page(client, lms, invitation)
    assert "jaxjudge is registered" in confirm(client, page)
    again = opened(client, invitation, f"{lms.url}/.well-known/openid-configuration")
    assert again.status_code == 400 and "used already" in again.text
    assert "used already" in confirm(client, page) and platforms_count() == 1


def test_an_invitation_makes_one_registration_call(client: TestClient, lms: Platform) -> None:
    """A refused confirmation spends the invitation: the next one calls nobody."""
    page = registration_page(client, lms, registration.invitation())
    confirm(client, page.replace('value="registration-token"', 'value="wrong"'))
    assert "used already" in confirm(client, page)  # the right token, too late
    assert lms.recorded.registrations == [] and platforms_count() == 0


def test_registration_follows_no_redirect(
    client: TestClient, probed: Probed, loopback_allowed: None, logged: pytest.LogCaptureFixture
) -> None:
    """The address checks hold for the URL that answers: a redirect is a failure."""
    answer = opened(client, registration.invitation(), f"{probed.url}/moved")
    assert answer.status_code == 400 and message(answer) == registration.FAILED
    assert probed.paths == ["/moved"] and "answered HTTP 302" in logged.text


def test_registration_goes_over_https_only(
    client: TestClient,
    probed: Probed,
    monkeypatch: pytest.MonkeyPatch,
    logged: pytest.LogCaptureFixture,
) -> None:
    """Plain http only to a listed loopback address: a listed campus network is https."""
    monkeypatch.setattr(settings, "lti_registration_private_networks", "10.0.0.0/8")
    answer = opened(client, registration.invitation(), "http://10.9.9.9/openid-configuration")
    assert message(answer) == registration.FAILED and "plain http" in logged.text


def test_a_configuration_claiming_another_issuer_is_refused(
    client: TestClient,
    lms: Platform,
    monkeypatch: pytest.MonkeyPatch,
    logged: pytest.LogCaptureFixture,
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
        assert answer.status_code == 400 and message(answer) == registration.FAILED, claimed
        assert f"claims the issuer {claimed!r}" in logged.text


def test_without_the_setting_registration_reaches_no_private_address(
    client: TestClient, probed: Probed, lms: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loopback by address, by name (``localhost``), IPv4-mapped, over https: refused
    before any connection. The test LMS itself, on loopback, cannot register."""
    monkeypatch.setattr(settings, "lti_registration_private_networks", "")
    port = probed.port
    for url in [
        f"http://127.0.0.1:{port}/config",
        f"http://localhost:{port}/config",
        f"http://[::ffff:127.0.0.1]:{port}/config",
        f"https://127.0.0.1:{port}/config",
        f"{lms.url}/.well-known/openid-configuration",
    ]:
        answer = opened(client, registration.invitation(), url)
        assert answer.status_code == 400 and message(answer) == registration.FAILED, url
    assert probed.paths == []


def test_every_failure_shows_one_message(
    client: TestClient,
    probed: Probed,
    monkeypatch: pytest.MonkeyPatch,
    logged: pytest.LogCaptureFixture,
) -> None:
    """Refused, unreachable, 404, a redirect, not JSON: the page says the same, so it
    cannot map the server's network; the log keeps the difference for the admin."""
    monkeypatch.setattr(settings, "lti_registration_private_networks", "")
    shown = {message(opened(client, registration.invitation(), f"{probed.url}/config"))}
    monkeypatch.setattr(settings, "lti_registration_private_networks", LOOPBACK)
    for url in [
        f"{probed.url}/missing",
        f"http://127.0.0.1:{free_port()}/config",
        f"{probed.url}/moved",
        f"{probed.url}/text",
    ]:
        shown.add(message(opened(client, registration.invitation(), url)))
    assert shown == {registration.FAILED}
    for detail in [
        "not a public address",
        "could not be reached",
        "answered HTTP 404",
        "answered HTTP 302",
        "not JSON",
    ]:
        assert detail in logged.text, detail


def test_an_invitation_reads_one_configuration(
    client: TestClient, probed: Probed, loopback_allowed: None
) -> None:
    """A second request with the same invitation calls nobody: after a failure it is
    refused; after a success it shows the configuration read, or refuses another URL."""
    failed = registration.invitation()
    assert message(opened(client, failed, f"{probed.url}/missing")) == registration.FAILED
    assert "used already" in message(opened(client, failed, f"{probed.url}/config"))
    assert probed.paths == ["/missing"]
    read = registration.invitation()
    for _ in range(2):
        shown = opened(client, read, f"{probed.url}/config")
        assert shown.status_code == 200 and probed.url in shown.text
    assert "used already" in message(opened(client, read, f"{probed.url}/text"))
    assert probed.paths == ["/missing", "/config"]


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
