"""Single sign-on with OpenID Connect in a real browser (Debian's Chromium through
Playwright): the sign-in page's button, the provider of tests/oidc_provider.py and back,
signed in. The app serves from uvicorn in this process (no grading, no trusted runs:
this is about sign-in only)."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from app.core.config import settings
from app.server.main import create_app
from app.sso import oidc_discovery
from tests.app.server import free_port
from tests.oidc_provider import Person, Provider

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.server]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Provider]]:
    provider = Provider()
    monkeypatch.setattr(settings, "database_url", f"sqlite:///{tmp_path / 'oidc.db'}")
    monkeypatch.setattr(settings, "oidc_providers", json.dumps([provider.setting()]))
    oidc_discovery.forget()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    provider.redirect_uris.add(f"{url}/sso/oidc/uni/callback")
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
    yield url, provider
    server.should_exit = True
    thread.join(timeout=30)
    provider.stop()
    oidc_discovery.forget()


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (make test installs it when run as root)",
)
def test_signing_in_with_the_university_button(site: tuple[str, Provider]) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, provider = site
    provider.person = Person(sub="uni-1", name="Ada Lovelace", email="ada@uni.example")
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=args)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{url}/login?next=/courses")
        page.get_by_role("link", name="Sign in with University account").click()
        expect(page).to_have_url(f"{url}/courses", timeout=30_000)
        expect(page.locator("header")).to_contain_text("ada")
        page.goto(f"{url}/account")
        expect(page.locator("#sign-in-methods")).to_contain_text("uni")
        assert errors == []
        browser.close()
