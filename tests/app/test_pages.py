"""The server-rendered pages: accounts, CSRF, throttling, problem list and page."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.data import accounts
from app.web.auth import safe_next
from grader.judging.samples import SampleView
from tests.app.conftest import bank_easiest_track_first, in_process_client, store_samples
from tests.app.conftest import form_token as csrf


@pytest.fixture
def browser(database: str) -> Iterator[TestClient]:
    with in_process_client() as client:
        yield client


def sign_up(client: TestClient, name: str = "ada", password: str = "correct horse") -> None:
    answer = client.post(
        "/signup",
        data={"name": name, "password": password, "csrf_token": csrf(client, "/signup")},
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text


def test_pages_need_a_signed_in_user(browser: TestClient) -> None:
    answer = browser.get("/problems/nnx-grad-accumulation", follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/login?next=/problems/nnx-grad-accumulation"


def test_signing_in_goes_back_to_the_page_that_asked(browser: TestClient) -> None:
    sign_up(browser)
    browser.post("/logout", data={"csrf_token": csrf(browser, "/login")})
    asked = browser.get("/courses?tab=mine", follow_redirects=False)
    assert asked.headers["location"] == "/login?next=/courses%3Ftab%3Dmine"
    form = browser.get(asked.headers["location"]).text
    assert '<input type="hidden" name="next" value="/courses?tab=mine">' in form
    answer = browser.post(
        "/login",
        data={"name": "ada", "password": "correct horse", "next": "/courses?tab=mine",
              "csrf_token": csrf(browser, "/login")},
        follow_redirects=False,
    )  # fmt: skip
    assert answer.status_code == 303
    assert answer.headers["location"] == "/courses?tab=mine"


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
        "evil",
        "/ok\r\nSet-Cookie: x=1",
        "",
    ],
)
def test_next_never_leaves_the_site(target: str) -> None:
    assert safe_next(target) == "/"


def test_next_keeps_paths_and_queries_of_this_site() -> None:
    assert safe_next("/problems/x?tab=history") == "/problems/x?tab=history"


def test_a_denied_page_is_a_page_and_the_api_answers_json(browser: TestClient) -> None:
    sign_up(browser)
    page = browser.get("/courses/999")
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "No course 999." in page.text
    assert '<a class="who" href="/account">ada</a>' in page.text  # still signed in, said so
    api = browser.get("/api/submissions/999")
    assert api.status_code == 404
    assert api.json() == {"detail": "No submission 999."}


def test_sign_up_lands_on_the_problem_list_easiest_track_first_with_a_start(
    browser: TestClient,
) -> None:
    sign_up(browser)
    page = browser.get("/").text
    headings = re.findall(r'<h2><a href="/tracks/[a-z-]+">([^<]+)</a></h2>', page)
    assert headings == ["JAX foundations", "Optax and Flax", "Gradient accumulation"]
    titles = re.findall(r'<td><a href="/problems/([a-z0-9-]+)">', page)
    assert titles[:3] == ["stable-logsumexp", "pytree-momentum-decay", "ema-with-scan"]
    assert titles == [p.slug for p in bank_easiest_track_first()]
    assert page.count(">unseen<") == len(titles)  # the visible text, not the CSS class
    start = re.search(r'<p class="start-here" id="start-here">(.*?)</p>', page, re.S)
    assert start, "a new learner is told where to start"
    assert '<a href="/problems/stable-logsumexp">' in start[1]
    assert "easy, about 15 min" in start[1]
    assert page.count(">start here<") == 1  # and the row says so


def test_the_session_cookie_is_http_only_and_same_site_lax(browser: TestClient) -> None:
    answer = browser.post(
        "/signup",
        data={"name": "ada", "password": "correct horse", "csrf_token": csrf(browser, "/signup")},
        follow_redirects=False,
    )
    cookie = answer.headers["set-cookie"].lower()
    assert "httponly" in cookie
    assert "samesite=lax" in cookie


def test_forms_without_the_csrf_token_are_refused(browser: TestClient) -> None:
    answer = browser.post("/signup", data={"name": "ada", "password": "correct horse"})
    assert answer.status_code == 403
    assert "reload the page" in answer.text
    forged = browser.post("/login", data={"name": "ada", "password": "x", "csrf_token": "forged"})
    assert forged.status_code == 403


def test_sign_in_sign_out_and_wrong_passwords(browser: TestClient) -> None:
    sign_up(browser)
    browser.post("/logout", data={"csrf_token": csrf(browser, "/")})
    assert browser.get("/", follow_redirects=False).status_code == 303
    wrong = browser.post(
        "/login",
        data={"name": "ada", "password": "nope nope", "csrf_token": csrf(browser, "/login")},
    )
    assert wrong.status_code == 400
    assert "Wrong name or password." in wrong.text
    right = browser.post(
        "/login",
        data={"name": "ada", "password": "correct horse", "csrf_token": csrf(browser, "/login")},
        follow_redirects=False,
    )
    assert right.status_code == 303


def test_repeated_failed_sign_ins_are_throttled(browser: TestClient) -> None:
    sign_up(browser)
    browser.post("/logout", data={"csrf_token": csrf(browser, "/")})
    for _ in range(5):
        assert (
            browser.post(
                "/login",
                data={
                    "name": "ada",
                    "password": "guess 123",
                    "csrf_token": csrf(browser, "/login"),
                },
            ).status_code
            == 400
        )
    blocked = browser.post(
        "/login",
        data={"name": "ada", "password": "correct horse", "csrf_token": csrf(browser, "/login")},
    )
    assert blocked.status_code == 429
    assert "Too many failed sign-ins" in blocked.text


@pytest.mark.parametrize(
    ("name", "password", "message"),
    [
        ("ada", "short", "at least 10 characters"),
        ("bad name!", "long enough", "letters, digits"),
        ("", "long enough password", "a user name is 1-32 letters"),
        ("ada", "", "at least 10 characters"),
    ],
)
def test_sign_up_errors_are_explained(
    browser: TestClient, name: str, password: str, message: str
) -> None:
    answer = browser.post(
        "/signup", data={"name": name, "password": password, "csrf_token": csrf(browser, "/signup")}
    )
    assert answer.status_code == 400
    assert message in answer.text
    assert '<p class="error" role="alert">' in answer.text  # beside the form, not a bare error


def test_the_problem_page_renders_statement_math_signature_and_starter(browser: TestClient) -> None:
    sign_up(browser)
    page = browser.get("/problems/nnx-grad-accumulation").text
    assert "<h1>Gradient accumulation with Flax NNX</h1>" in page
    assert "<math" in page  # $$ ... $$ became MathML, rendered without any script
    assert "def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):" in page
    assert (
        "nnx.Optimizer(model, optax.sgd(lr), wrt=nnx.Param)" in page
    )  # the starter, escaped into the editor
    scripts = re.findall(r"<script[^>]*>", page)
    assert scripts == [
        '<script src="/static/local-times.js" defer>',
        '<script src="/static/scrolling.js" defer>',
        '<script src="/static/editor.js" defer>',
        '<script src="/static/failure-details.js" defer>',
        '<script src="/static/problem.js" defer>',
    ]  # ours only: no inline code, no CDN
    assert re.findall(r'<link[^>]+href="([^"]+)"', page) == [
        "/static/favicon.svg",
        "/static/style.css",
        "/assets/highlight.css",
        "/assets/verdicts.css",
    ]
    assert browser.get("/problems/no-such-problem").status_code == 404


def test_static_assets_are_served_by_the_app(browser: TestClient) -> None:
    css = browser.get("/static/style.css")
    assert css.status_code == 200
    assert "--accent" in css.text


def test_the_page_submits_through_the_api_with_its_session_and_csrf_header(
    browser: TestClient,
) -> None:
    sign_up(browser)
    page = browser.get("/problems/scan-microbatched-grads").text
    token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page)
    assert token
    assert 'src="/static/problem.js"' in page
    body = {"problem": "scan-microbatched-grads", "code": "x", "mode": "run"}
    refused = browser.post("/api/submissions", json=body)  # the cookie alone is not enough
    assert refused.status_code == 403
    created = browser.post("/api/submissions", json=body, headers={"X-CSRF-Token": token.group(1)})
    assert created.status_code == 202
    state = browser.get(f"/api/submissions/{created.json()['id']}").json()
    assert state["status"] == "queued"
    assert browser.get("/static/problem.js").status_code == 200


def page_csrf(client: TestClient, path: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', client.get(path).text)
    assert found
    return found.group(1)


def record_submission(name: str, code: str, verdict: str) -> None:
    from app.core.db import session_scope
    from app.data import submissions as submission_data

    with session_scope() as session:
        user = accounts.user_by_name(session=session, name=name)
        assert user is not None
        row = submission_data.create_submission(
            session=session,
            user=user,
            problem="scan-microbatched-grads",
            code=code,
            mode="submit",
            max_queued=99,
        )
        row.status, row.verdict, row.score = "done", verdict, 1.0 if verdict == "accepted" else 0.0


def test_hints_are_revealed_one_at_a_time_and_stay_revealed(browser: TestClient) -> None:
    sign_up(browser)
    token = page_csrf(browser, "/problems/scan-microbatched-grads")
    assert (
        browser.post("/api/problems/scan-microbatched-grads/hints").status_code == 403
    )  # no CSRF header
    counts = [
        browser.post(
            "/api/problems/scan-microbatched-grads/hints", headers={"X-CSRF-Token": token}
        ).json()["revealed"]
        for _ in range(4)
    ]
    assert counts == [1, 2, 3, 3]  # three hints, never past the last
    page = browser.get("/problems/scan-microbatched-grads").text
    assert page.count('<div class="hint">') == 3
    assert 'Reveal hint <span id="hint-progress">3/3</span>' in page


def test_the_walkthrough_and_reference_unlock_only_after_acceptance(browser: TestClient) -> None:
    sign_up(browser)
    assert browser.get("/problems/scan-microbatched-grads/walkthrough").status_code == 403
    assert (
        "lax.scan(step, jnp.zeros(()), (xs, ys))"
        not in browser.get("/problems/scan-microbatched-grads").text
    )
    record_submission("ada", "wrong", "wrong_answer")
    assert browser.get("/problems/scan-microbatched-grads/walkthrough").status_code == 403
    record_submission("ada", "right", "accepted")
    unlocked = browser.get("/problems/scan-microbatched-grads/walkthrough")
    assert unlocked.status_code == 200
    assert "Reference solution" in unlocked.text
    page = browser.get("/problems/scan-microbatched-grads").text
    assert "<h2>Walkthrough</h2>" in page
    assert "✓ solved" in browser.get("/").text


def test_a_reference_that_failed_is_said_on_the_page_instead_of_samples(
    browser: TestClient,
) -> None:
    sign_up(browser)
    store_samples("scan-microbatched-grads", RuntimeError("the reference ran out of memory"))
    page = browser.get("/problems/scan-microbatched-grads").text
    assert "the reference failed (the reference ran out of memory)" in page


def test_history_shows_each_submission_with_a_diff_against_the_previous(
    browser: TestClient,
) -> None:
    sign_up(browser)
    record_submission("ada", "def f():\n    return 1\n", "wrong_answer")
    record_submission("ada", "def f():\n    return 2\n", "accepted")
    history = browser.get("/problems/scan-microbatched-grads/history").text
    assert history.count("<details>") == 2
    assert "-    return 1" in history
    assert "+    return 2" in history


def test_sample_cases_show_the_stored_inputs_and_expected_values_and_code_is_coloured(
    browser: TestClient,
) -> None:
    sign_up(browser)
    slug = "scan-microbatched-grads"
    assert "being prepared" in browser.get(f"/problems/{slug}").text  # no trusted run yet
    store_samples(
        slug, [SampleView(name="tiny", inputs={"xs": "float32(8,) [1 2]"}, expected=[0.25])]
    )
    page = browser.get(f"/problems/{slug}").text
    assert "being prepared" not in page
    assert "<summary>tiny</summary>" in page
    assert "float32(8,) [1 2]" in page  # an input, with its values
    # Each output by its name, its values rounded as the inputs are.
    assert '<th>expected <code>grad</code></th><td><pre tabindex="0">0.25</pre>' in page
    css = browser.get("/assets/highlight.css")
    assert css.status_code == 200
    assert ".highlight" in css.text


def test_points_are_shown_to_two_decimals_without_trailing_zeros() -> None:
    from app.web.render import points

    assert [points(0.8, 10), points(1 / 3, 10), points(0.125, 1), points(0.0, 5)] == [
        "8", "3.33", "0.12", "0",
    ]  # fmt: skip
