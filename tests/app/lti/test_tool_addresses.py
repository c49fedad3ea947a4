"""What an LMS admin is given: the addresses on the admin's LMS page, with a warning
when no LMS could use them (not HTTPS, or this machine's loopback); Canvas's JSON
configuration at /lti/canvas.json; and the LMS guide itself at /help/lti."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from app.core.config import settings
from app.lti import claims
from app.web.lti_admin import address_warnings
from tests.app.conftest import sign_in, token_for


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("https://judge.example.edu", []),
        ("https://judge.example.edu:8443/jaxjudge", []),
        ("http://judge.example.edu", ["not HTTPS"]),
        ("https://127.0.0.1:8000", ["loopback"]),
        ("https://localhost", ["loopback"]),
        ("https://[::1]:8000", ["loopback"]),
        ("http://127.0.0.1:8000", ["not HTTPS", "loopback"]),
        ("https://10.0.0.5", []),  # a campus network's own address may be what LMSs reach
    ],
)
def test_an_address_no_lms_could_use_is_named(url: str, said: list[str]) -> None:
    warnings = address_warnings(url)
    assert len(warnings) == len(said)
    for why, words in zip(warnings, said, strict=True):
        assert words in why


def _warning(page: str) -> str | None:
    found = re.search(
        r'<div class="warning" role="alert" id="address-warning">(.*?)</div>', page, re.S
    )
    return (
        None if found is None else " ".join(html.unescape(re.sub(r"<[^>]+>", "", found[1])).split())
    )


def test_the_admin_page_warns_and_says_which_setting_to_change(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    token_for("root", role="admin")
    sign_in(client, "root")
    unset = _warning(client.get("/admin/lti").text)  # the test client's http://testserver
    assert unset is not None
    assert "not HTTPS" in unset and "Set JAXJUDGE_PUBLIC_URL" in unset

    monkeypatch.setattr(settings, "public_url", "http://127.0.0.1:8000")
    page = client.get("/admin/lti").text
    both = _warning(page)
    assert both is not None
    assert "not HTTPS" in both and "loopback" in both and "Change JAXJUDGE_PUBLIC_URL" in both
    assert '<a href="/help/lti">The LMS guide</a>' in page
    assert "http://127.0.0.1:8000/lti/canvas.json" in page

    monkeypatch.setattr(settings, "public_url", "https://judge.example.edu")
    page = client.get("/admin/lti").text
    assert _warning(page) is None and "https://judge.example.edu/lti/jwks" in page


def test_canvas_reads_its_configuration_from_the_public_url(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "public_url", "https://judge.example.edu")
    answer = client.get("/lti/canvas.json")  # nobody signed in: an LMS admin's paste
    assert answer.status_code == 200
    config = answer.json()
    base = "https://judge.example.edu"
    assert config["title"] == "jaxjudge"
    assert config["oidc_initiation_url"] == f"{base}/lti/login"
    assert config["target_link_uri"] == f"{base}/lti/launch"
    assert config["public_jwk_url"] == f"{base}/lti/jwks"
    assert set(config["scopes"]) == set(claims.TOOL_SCOPES)
    (canvas,) = config["extensions"]
    assert canvas["platform"] == "canvas.instructure.com"
    assert canvas["domain"] == "judge.example.edu"
    assert canvas["privacy_level"] == "public"
    assert canvas["settings"]["icon_url"] == f"{base}/static/favicon.svg"
    placements = {p["placement"]: p for p in canvas["settings"]["placements"]}
    assert set(placements) == {"assignment_selection", "link_selection"}
    for placement in placements.values():
        assert placement["message_type"] == "LtiDeepLinkingRequest"
        assert placement["target_link_uri"] == f"{base}/lti/launch"
    assert client.get("/static/favicon.svg").status_code == 200  # the icon is served


def test_the_lms_guide_is_served_and_nothing_else_of_docs(client: TestClient) -> None:
    guide = client.get("/help/lti")
    assert guide.status_code == 200
    assert "<h1>LMS" in guide.text or "<h1>" in guide.text
    assert "Moodle" in guide.text and "/lti/canvas.json" in guide.text
    assert client.get("/help/security").status_code == 404
    assert client.get("/help/..%2FREADME").status_code == 404
