"""A learner's progress: statuses from submits, "mark as complete" kept apart from
solved, a track page with the next problem, the problem list's per-track progress,
and the same through the API."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.core.db import session_scope
from app.data import accounts
from app.models import Submission, User
from grader.child.verdicts import Mode, Verdict
from tests.app.conftest import bank_in_track_order, in_process_client, sign_in, token_for

TRACK = "gradient-accumulation"
GA = [p.slug for p in bank_in_track_order() if p.config.track == TRACK]


@pytest.fixture
def browser(database: str) -> Iterator[TestClient]:
    with session_scope() as session:
        ada = accounts.create_user(session=session, name="ada", password="long test password")
        # ada solved the first problem and got the second wrong.
        for slug, verdict in ((GA[0], Verdict.ACCEPTED), (GA[1], Verdict.WRONG_ANSWER)):
            session.add(
                Submission(
                    user_id=ada.id, problem=slug, code="#", mode=Mode.SUBMIT, status="done",
                    verdict=verdict, score=1.0 if verdict is Verdict.ACCEPTED else 0.0,
                )
            )  # fmt: skip
    with in_process_client() as client:
        yield client


def _mark(browser: TestClient, csrf: str, slug: str, action: str, back: str) -> str:
    answer = browser.post(
        f"/problems/{slug}/{action}",
        data={"csrf_token": csrf, "next": back},
        follow_redirects=False,
    )
    assert answer.status_code == 303
    return answer.headers["location"]


def _progress_line(page: str) -> str:
    found = re.search(r'<p class="progress">(.*?)</p>', page, re.S)
    assert found, "no progress line"
    return " ".join(re.sub(r"<[^>]+>", " ", found[1]).split())


def test_the_track_page_shows_status_progress_and_the_next_problem(browser: TestClient) -> None:
    sign_in(browser, "ada")
    page = browser.get(f"/tracks/{TRACK}").text
    assert f"1 of {len(GA)} solved" in _progress_line(page)
    assert "next:" in _progress_line(page)
    assert f'next: <a href="/problems/{GA[1]}">' in page  # attempted is not done
    assert page.count("✓ solved") == 1 and page.count("• attempted") == 1
    assert browser.get("/tracks/no-such-track").status_code == 404


def test_marking_complete_is_kept_apart_from_solved(browser: TestClient) -> None:
    csrf = sign_in(browser, "ada")
    # ada skips the second problem: done for the track, not solved.
    assert _mark(browser, csrf, GA[1], "complete", f"/tracks/{TRACK}") == f"/tracks/{TRACK}"
    page = browser.get(f"/tracks/{TRACK}").text
    line = _progress_line(page)
    assert f"1 of {len(GA)} solved · 1 marked complete" in line
    assert f'next: <a href="/problems/{GA[2]}">' in page
    assert "• attempted" in page  # its status is still its submits'
    problem_page = browser.get(f"/problems/{GA[1]}").text
    assert "☑ marked complete" in problem_page and ">undo<" in problem_page

    # Marking a solved problem changes nothing in the counts: it counts once, as solved.
    _mark(browser, csrf, GA[0], "complete", f"/problems/{GA[0]}")
    assert f"1 of {len(GA)} solved · 1 marked complete" in _progress_line(
        browser.get(f"/tracks/{TRACK}").text
    )

    # Undo; marking twice is harmless.
    _mark(browser, csrf, GA[1], "complete", "/")
    _mark(browser, csrf, GA[1], "incomplete", "/")
    assert "marked complete" not in _progress_line(browser.get(f"/tracks/{TRACK}").text)


def test_the_problem_list_shows_progress_per_track(browser: TestClient) -> None:
    csrf = sign_in(browser, "ada")
    _mark(browser, csrf, "stable-logsumexp", "complete", "/")
    page = browser.get("/").text
    lines = [
        " ".join(re.sub(r"<[^>]+>", " ", line).split())
        for line in re.findall(r'<p class="progress">(.*?)</p>', page, re.S)
    ]
    foundations = [p for p in bank_in_track_order() if p.config.track == "jax-foundations"]
    # The easiest track first: foundations, Optax and Flax, then gradient accumulation.
    assert lines[0].startswith(f"0 of {len(foundations)} solved · 1 marked complete")
    assert lines[2].startswith(f"1 of {len(GA)} solved ·")
    assert f'<a href="/tracks/{TRACK}">Gradient accumulation</a>' in page
    assert 'id="start-here"' not in page  # ada has begun: no "start here" for her


def test_start_here_goes_once_anything_is_marked(database: str) -> None:
    with session_scope() as session:
        accounts.create_user(session=session, name="bo", password="long test password")
    with in_process_client() as browser:
        csrf = sign_in(browser, "bo")
        assert 'id="start-here"' in browser.get("/").text  # nothing done yet
        _mark(browser, csrf, "pairwise-distances", "complete", "/")
        assert 'id="start-here"' not in browser.get("/").text


def test_a_redirect_after_marking_stays_on_this_site(browser: TestClient) -> None:
    csrf = sign_in(browser, "ada")
    assert _mark(browser, csrf, GA[2], "complete", "//evil.example/x") == "/"


def test_marking_an_unknown_problem_is_404_and_records_nothing(browser: TestClient) -> None:
    csrf = sign_in(browser, "ada")
    answer = browser.post("/problems/no-such/complete", data={"csrf_token": csrf})
    assert answer.status_code == 404


def test_a_problem_has_no_marking_but_complete_and_incomplete(browser: TestClient) -> None:
    csrf = sign_in(browser, "ada")
    answer = browser.post(f"/problems/{GA[2]}/finished", data={"csrf_token": csrf})
    assert answer.status_code == 404
    page = browser.get(f"/problems/{GA[2]}").text
    assert f'action="/problems/{GA[2]}/complete"' in page  # still unmarked


def test_the_api_reports_and_changes_the_callers_progress(browser: TestClient) -> None:
    auth = token_for("bob")
    listed = {p["slug"]: p for p in browser.get("/api/problems", headers=auth).json()["data"]}
    assert listed[GA[0]]["status"] == "unseen" and not listed[GA[0]]["marked_complete"]
    # Every problem names its functions, one per part (a problem with [[parts]] has no
    # top-level entry point: the first part's stands in for it).
    assert all(
        p["entry_points"] and p["entry_point"] == p["entry_points"][0] for p in listed.values()
    )

    assert browser.put(f"/api/problems/{GA[0]}/complete", headers=auth).status_code == 204
    assert browser.put(f"/api/problems/{GA[0]}/complete", headers=auth).status_code == 204
    listed = {p["slug"]: p for p in browser.get("/api/problems", headers=auth).json()["data"]}
    assert listed[GA[0]]["marked_complete"] and listed[GA[0]]["status"] == "unseen"

    tracks = {t["track"]: t for t in browser.get("/api/tracks", headers=auth).json()["data"]}
    assert tracks[TRACK] == {
        "track": TRACK,
        "title": "Gradient accumulation",
        "total": len(GA),
        "solved": 0,
        "marked_complete": 1,
        "percent_done": round(100 / len(GA)),
        "next_problem": GA[1],
    }
    assert browser.delete(f"/api/problems/{GA[0]}/complete", headers=auth).status_code == 204
    tracks = {t["track"]: t for t in browser.get("/api/tracks", headers=auth).json()["data"]}
    assert tracks[TRACK]["marked_complete"] == 0 and tracks[TRACK]["next_problem"] == GA[0]
    assert browser.put("/api/problems/no-such/complete", headers=auth).status_code == 404

    # ada's submits are hers: bob's progress does not see them.
    with session_scope() as session:
        bob = session.scalar(select(User).where(User.name == "bob"))
        assert bob is not None
        assert not session.scalars(select(Submission).where(Submission.user_id == bob.id)).all()
