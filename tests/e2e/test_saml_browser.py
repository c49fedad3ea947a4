"""SAML 2.0 sign-in in a real browser (Debian's Chromium through Playwright): the sign-in
page's button, pysaml2's IdP of tests/saml_idp.py (on ``localhost``, another site than
jaxjudge's 127.0.0.1, so its form post back is cross-site and brings no SameSite=Lax
cookie) and back, signed in. The app serves from uvicorn in this process (no grading,
no trusted runs: this is about sign-in only)."""

from __future__ import annotations

import json
import shutil
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from app.core.config import settings
from app.server.main import create_app
from app.sso import saml_providers
from tests.app.server import free_port
from tests.saml_idp import STUDENT_ID, IdentityProvider

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.server]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, IdentityProvider]]:
    idp = IdentityProvider(tmp_path, host="localhost")
    monkeypatch.setattr(settings, "database_url", f"sqlite:///{tmp_path / 'saml.db'}")
    entry = {
        "name": "uni",
        "label": "University (SAML)",
        "metadata_url": f"{idp.url}/metadata",
        "student_id_attribute": STUDENT_ID,
    }
    monkeypatch.setattr(settings, "saml_idps", json.dumps([entry]))
    saml_providers.forget()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    config = uvicorn.Config(
        create_app(workers=0, prepare=False), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    with urllib.request.urlopen(f"{url}/sso/saml/metadata", timeout=10) as answer:
        idp.trust(answer.read().decode())  # the IdP's operator loads our metadata
    yield url, idp
    server.should_exit = True
    thread.join(timeout=30)
    idp.stop()
    saml_providers.forget()


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (make test installs it when run as root)",
)
def test_signing_in_with_the_university_saml_button(site: tuple[str, IdentityProvider]) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, idp = site
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=args)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{url}/login?next=/courses")
        page.get_by_role("link", name="Sign in with University (SAML)").click()
        expect(page).to_have_url(f"{url}/courses", timeout=30_000)
        expect(page.locator("header")).to_contain_text("ada")
        assert idp.last_form is not None  # it went through the IdP's form post
        assert errors == []
        browser.close()
