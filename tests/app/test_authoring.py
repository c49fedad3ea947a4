"""Authoring: preview any synced version with its check report; publish only what passed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.db import session_scope
from app.data import accounts, catalog
from app.models import ProblemVersion
from tests.app.conftest import BANK_SLUG, in_process_client, run_queued_check, sign_in

NEW_SENTENCE = "This sentence exists only in version 2."


@pytest.fixture
def browser(private_bank: Path) -> Iterator[TestClient]:
    with session_scope() as session:
        accounts.create_user(
            session=session, name="author", password="long test password", role="author"
        )
        accounts.create_user(session=session, name="ada", password="long test password")
    statement = private_bank / "problems" / BANK_SLUG / "statement.md"
    statement.write_text(statement.read_text() + f"\n{NEW_SENTENCE}\n")
    with in_process_client() as client:  # syncs: version 2 waits
        yield client


def test_authors_preview_a_version_learners_do_not_get_yet(
    browser: TestClient, private_bank: Path
) -> None:
    sign_in(browser, "author")
    listing = browser.get("/author").text
    assert BANK_SLUG in listing and "<strong>waiting</strong>" in listing
    preview = browser.get(f"/author/problems/{BANK_SLUG}").text  # newest by default
    assert "v2" in preview and NEW_SENTENCE in preview
    mistakes = len(list((private_bank / "problems" / BANK_SLUG / "mistakes").glob("*.py")))
    assert f"Known mistakes ({mistakes})" in preview and "Not checked yet." in preview
    assert "live is v1" in preview
    assert NEW_SENTENCE not in browser.get(f"/author/problems/{BANK_SLUG}?version=1").text
    assert NEW_SENTENCE not in browser.get(f"/problems/{BANK_SLUG}").text  # learners: v1


def test_learners_cannot_preview_or_publish(browser: TestClient) -> None:
    token = sign_in(browser, "ada")
    assert "Authoring" not in browser.get("/").text
    assert browser.get("/author").status_code == 403
    assert browser.get(f"/author/problems/{BANK_SLUG}").status_code == 403
    published = browser.post(
        f"/author/problems/{BANK_SLUG}/versions/2/publish", data={"csrf_token": token}
    )
    assert published.status_code == 403


def test_an_unchecked_version_is_not_published_from_the_page(browser: TestClient) -> None:
    token = sign_in(browser, "author")
    refused = browser.post(
        f"/author/problems/{BANK_SLUG}/versions/2/publish", data={"csrf_token": token}
    )
    assert refused.status_code == 409 and "Run the check" in refused.text


def wait_for_check(number: int, timeout: float = 300.0) -> ProblemVersion:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with session_scope() as session:
            version = catalog.version_by_number(session=session, slug=BANK_SLUG, number=number)
            assert version is not None
            if version.check_status != "running":
                return version
        time.sleep(0.5)
    raise AssertionError("the check did not finish")


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_check_runs_on_a_worker_and_a_passed_version_is_published(
    browser: TestClient,
) -> None:
    token = sign_in(browser, "author")
    started = browser.post(
        f"/author/problems/{BANK_SLUG}/versions/2/check", data={"csrf_token": token}
    )
    assert started.status_code == 200 and "Queued: a grading worker runs it" in started.text
    run_queued_check(wait_for_check(2).id)  # queued: as a worker would, once nothing else waits
    version = wait_for_check(2)
    assert version.check_status == "passed", version.check_json
    preview = browser.get(f"/author/problems/{BANK_SLUG}?version=2").text
    assert "reference: accepted" in preview and "starter:" in preview
    assert "reference and mistakes" in preview  # a timing row
    # The check ran the reference; its sample outputs are stored for pages right after.
    deadline = time.monotonic() + 60
    while "being prepared" in preview and time.monotonic() < deadline:
        time.sleep(0.5)
        preview = browser.get(f"/author/problems/{BANK_SLUG}?version=2").text
    assert "<summary>tiny</summary>" in preview and "<th>expected <code>grad</code></th>" in preview

    published = browser.post(
        f"/author/problems/{BANK_SLUG}/versions/2/publish", data={"csrf_token": token}
    )
    assert published.status_code == 200
    assert NEW_SENTENCE in browser.get(f"/problems/{BANK_SLUG}").text
