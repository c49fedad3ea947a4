"""A learner, an instructor and a teaching assistant in a real browser (Debian's
Chromium driven by Playwright). The instructor creates a course and assigns a
problem with a due date already past (confirmed) under a late penalty; the learner
signs up, joins with the code, types a solution into the editor, runs the samples,
submits, sees "Accepted", then a wrong solution and its diagnosis, answers a quiz
question, and marks another problem of the track complete; the instructor sees the
late submit's raw and penalised points on the dashboard, downloads the grades CSV,
opens the problem's analytics, grants an extension that lifts the penalty and adds
a teaching assistant; a second learner submits a renamed copy; the assistant
comments on a submission, overrides a score with a reason and opens the similarity
report's pair side by side; the first learner reads the comment. Saves the README's
screenshots."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from grader.config import PROJECT_ROOT
from tests.app.server import Server, jaxjudge

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.server, pytest.mark.sandbox]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Screenshots go to docs/screenshots only when asked (`make screenshots`):
# an ordinary test run must not rewrite tracked files.
SCREENSHOTS_ENV = "JAXJUDGE_SCREENSHOTS"
TEACHER_PASSWORD = "teacher password"
PROBLEM_TITLE = "Gradient accumulation with Flax NNX"
CORRECT = (
    PROJECT_ROOT / "tests" / "submissions" / "nnx-grad-accumulation" / "full_batch_gradient.py"
).read_text()
WRONG = (
    PROJECT_ROOT / "tests" / "submissions" / "nnx-grad-accumulation" / "wrong_two_steps_manual.py"
).read_text()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    from grader.config import settings

    env = {
        **os.environ,
        "JAXJUDGE_DATABASE_URL": f"sqlite:///{tmp_path / 'e2e.db'}",
        "JAXJUDGE_DATA_DIR": str(settings.data_dir),
    }
    created = jaxjudge(env, "users", "create", "teacher", "--role", "instructor",
                       "--password-stdin", stdin=f"{TEACHER_PASSWORD}\n")  # fmt: skip
    assert created.returncode == 0, created.stderr
    assistant = jaxjudge(env, "users", "create", "tess", "--password-stdin",
                         stdin=f"{TEACHER_PASSWORD}\n")  # fmt: skip
    assert assistant.returncode == 0, assistant.stderr
    running = Server(env, workers=1)
    yield running
    running.stop()


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (make test installs it when run as root)",
)
def test_a_learner_solves_a_problem_in_the_browser(server: Server, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect, sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-quic",
            ],
        )

        def watched(page: Page) -> Page:
            """Collect console errors, failed loads (with their address) and page errors."""
            page.on(
                "console",
                lambda message: (
                    errors.append(message.text)
                    if message.type == "error"
                    and not message.text.startswith("Failed to load resource")
                    else None
                ),
            )
            page.on(
                "response",
                lambda response: (
                    errors.append(f"{response.status} {response.url}")
                    if response.status >= 400
                    else None
                ),
            )
            page.on("pageerror", lambda error: errors.append(str(error)))
            return page

        # The instructor: a course, its join code, one assigned problem.
        teacher = watched(browser.new_context(viewport={"width": 1280, "height": 900}).new_page())
        teacher.goto(f"{server.url}/login")
        teacher.get_by_label("Name").fill("teacher")
        teacher.get_by_label("Password").fill(TEACHER_PASSWORD)
        teacher.get_by_role("button", name="Sign in").click()
        teacher.get_by_role("link", name="Courses").click()
        teacher.get_by_label("Name").fill("JAX 101")
        teacher.get_by_role("button", name="Create").click()
        join_code = teacher.locator(".join-code").inner_text()
        now = datetime.now(UTC).replace(tzinfo=None)
        minutes = "%Y-%m-%dT%H:%M"
        teacher.get_by_label("Problem").select_option(label=PROBLEM_TITLE)
        teacher.get_by_label("Opens (UTC; empty: now)").fill(
            (now - timedelta(days=7)).strftime(minutes)
        )
        teacher.get_by_label("Due (UTC, optional)").fill(
            (now - timedelta(minutes=30)).strftime(minutes)
        )
        teacher.get_by_label("Late policy").select_option("penalty")
        teacher.get_by_label("Penalty (%)").fill("10")
        teacher.get_by_label("Never below (%)").fill("50")
        teacher.get_by_role("button", name="Assign").click()
        expect(teacher.locator("main")).to_contain_text("Assign it anyway?")  # a past due date
        teacher.get_by_role("button", name="Assign anyway").click()
        expect(teacher.locator("table.matrix")).to_have_count(0)  # nobody has joined yet
        # Before anyone joins, the assignment's window, policy and points are listed.
        assigned = teacher.locator("#assignments table.assigned")
        expect(assigned).to_contain_text(PROBLEM_TITLE)
        expect(assigned).to_contain_text("late work loses 10% per started day, never below 50%")
        # The form: another problem starts from the defaults, with the penalty's fields
        # hidden; the assigned one brings back its current settings.
        form = teacher.locator("form.assign")
        teacher.get_by_label("Problem").select_option(value="stable-logsumexp")
        expect(form.get_by_label("Late policy")).to_have_value("none")
        expect(form.get_by_label("Penalty (%)")).to_be_hidden()
        teacher.get_by_label("Problem").select_option(label=PROBLEM_TITLE)
        expect(form.get_by_label("Late policy")).to_have_value("penalty")
        expect(form.get_by_label("Penalty (%)")).to_have_value("10")
        expect(form.get_by_label("Never below (%)")).to_have_value("50")
        expect(teacher.locator("#assign-editing")).to_contain_text("The current settings of")

        page = watched(browser.new_page(viewport={"width": 1280, "height": 900}))
        page.goto(f"{server.url}/signup")
        page.get_by_label("Name (letters, digits, '.', '-' or '_')").fill("grace")
        page.get_by_label("Password (at least 10 characters, not a common one)").fill(
            "correct horse battery"
        )
        page.get_by_role("button", name="Sign up").click()
        expect(page.get_by_role("heading", name="Problems")).to_be_visible(timeout=30_000)
        page.get_by_role("link", name="Courses").click()
        page.get_by_label("Join code").fill(join_code)
        page.get_by_role("button", name="Join").click()
        expect(page.get_by_role("link", name=PROBLEM_TITLE)).to_be_visible()

        page.get_by_role("link", name=PROBLEM_TITLE).click()
        editor = page.locator(".cm-content")
        expect(editor).to_be_visible(timeout=30_000)

        def type_solution(code: str) -> None:
            editor.click()
            page.keyboard.press("Control+A")
            page.keyboard.insert_text(code)  # one input event: no auto-indent per keystroke

        type_solution(CORRECT)
        page.get_by_role("button", name="Run samples").click()
        verdict = page.locator("#verdict h3")
        expect(verdict).to_contain_text("Accepted", timeout=90_000)
        expect(page.locator("table.cases tbody tr")).to_have_count(2)  # the two samples only

        page.get_by_role("button", name="Submit").click()
        expect(page.locator("#verdict .pending")).to_have_count(0, timeout=90_000)
        expect(verdict).to_contain_text("Accepted", timeout=90_000)
        expect(page.locator("table.cases tbody tr")).to_have_count(6)
        expect(page.locator(".meta .status")).to_have_text("solved")  # no reload needed
        shots = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path)
        shots.mkdir(parents=True, exist_ok=True)
        page.set_viewport_size({"width": 1280, "height": 800})
        page.screenshot(path=str(shots / "problem-accepted.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})  # a phone: nothing scrolls sideways
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(shots / "problem-phone.png"), full_page=False)
        page.set_viewport_size({"width": 1280, "height": 800})

        type_solution(WRONG)
        page.get_by_role("button", name="Submit").click()
        expect(verdict).to_contain_text("Wrong answer", timeout=90_000)
        expect(page.locator("#verdict .diagnosis")).to_contain_text(
            "optimizer.update after each micro-batch"
        )
        page.locator("#verdict").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "verdict-diagnosis.png"), full_page=False)

        # A failed sample's values as a person reads them: a block per output, named, with
        # the difference beside the tolerance and the first element outside it marked.
        block = page.locator("#verdict section.failure .output-detail").first
        expect(block.locator("h5")).to_contain_text("loss: ")
        expect(block.locator("h5")).to_contain_text("the tolerance (rtol 0.0001, atol 0.000001)")
        expect(block.locator("tr.first-difference")).to_have_count(1)
        expect(block.locator("tr.first-difference")).to_contain_text("first outside")
        block.locator("summary", has_text="Full values").click()
        expect(block.locator(".full-values pre")).to_contain_text("expected: [")
        # Nothing is wider than its window in this state, a sample opened too.
        page.locator("details.sample").first.locator("summary").click()
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 844})
            assert page.evaluate("document.documentElement.scrollWidth") <= width, width
        page.set_viewport_size({"width": 1280, "height": 800})

        page.reload()  # the draft survives a reload
        expect(page.locator(".cm-content")).to_contain_text("for x, y in ((x_a, y_a), (x_b, y_b)):")

        # The quiz: pick an answer, and every choice's explanation follows it.
        question = page.locator("#quiz-why-average")
        question.get_by_label("The full batch's mean loss is the average").check()
        question.get_by_role("button", name="Answer").click()
        expect(page.locator("#quiz-why-average .quiz-result")).to_have_text(
            "You answered this correctly."
        )
        expect(page.locator("#quiz-why-average .explanation")).to_have_count(3)
        expect(page.locator("#quiz-why-average")).to_contain_text("Differentiation is linear")

        # Progress: the track page counts the solved problem; another is marked complete.
        page.get_by_role("link", name="Gradient accumulation, 1").click()
        expect(page.locator("p.progress")).to_contain_text("1 of")
        page.locator(
            "li.step", has_text="Accumulating gradients into a Linen TrainState"
        ).get_by_role("button", name="Mark as complete").click()
        expect(page.locator("p.progress")).to_contain_text("1 marked complete")

        # Back to the instructor: grace solved it (two attempts), late: 10 points lose 10%.
        teacher.reload()
        matrix = teacher.locator("table.matrix tbody")
        expect(teacher.locator("table.matrix tbody tr")).to_have_count(1)
        expect(matrix).to_contain_text("grace")
        expect(matrix).to_contain_text("✓ solved")
        expect(matrix).to_contain_text("2 attempt(s)")
        expect(matrix.locator(".points")).to_have_text("9")
        expect(matrix).to_contain_text("(raw 10)")
        teacher.screenshot(path=str(shots / "dashboard.png"), full_page=True)
        with teacher.expect_download() as download:
            teacher.get_by_role("link", name="CSV", exact=True).click()
        grades = Path(download.value.path()).read_text(encoding="utf-8-sig")
        slug = "nnx-grad-accumulation"
        assert grades.splitlines() == [
            f"user,display_name,email,student_id,{slug} raw,{slug} final,{slug} late,"
            f"{slug} override,{slug} automatic,{slug} rubric,total (of 10)",
            "grace,grace,,,10,9,yes,,10,,9",
        ]
        teacher.get_by_role("link", name="analytics, similarity, regrade").click()
        expect(teacher.locator("svg.chart")).to_have_count(2)
        expect(teacher.locator("main")).to_contain_text("1 of 1 learners solved it (100%)")
        teacher.screenshot(path=str(shots / "analytics.png"), full_page=True)

        # An extension for grace lifts the penalty; tess becomes a teaching assistant.
        teacher.get_by_role("link", name="JAX 101").click()
        teacher.get_by_role("link", name="People and extensions").click()
        teacher.locator("select[name=user]").select_option("grace")
        teacher.get_by_label("New due date (UTC)").fill((now + timedelta(days=1)).strftime(minutes))
        teacher.get_by_role("button", name="Grant").click()
        expect(teacher.locator("table.extensions")).to_contain_text("grace")
        teacher.get_by_label("User name").fill("tess")
        teacher.locator("select[name=role]").select_option("ta")
        teacher.get_by_role("button", name="Add").click()
        expect(teacher.locator("table.members")).to_contain_text("teaching assistant")
        teacher.get_by_role("link", name="JAX 101").click()
        expect(teacher.locator("table.matrix .points")).to_have_text("10")
        expect(teacher.locator("table.matrix")).to_contain_text("extended")

        # A second learner hands in grace's solution with the names changed.
        other = watched(browser.new_page(viewport={"width": 1280, "height": 900}))
        other.goto(f"{server.url}/signup")
        other.get_by_label("Name (letters, digits, '.', '-' or '_')").fill("lin")
        other.get_by_label("Password (at least 10 characters, not a common one)").fill(
            "another horse battery"
        )
        other.get_by_role("button", name="Sign up").click()
        other.get_by_role("link", name="Courses").click()
        other.get_by_label("Join code").fill(join_code)
        other.get_by_role("button", name="Join").click()
        other.get_by_role("link", name=PROBLEM_TITLE).click()
        copied = other.locator(".cm-content")
        expect(copied).to_be_visible(timeout=30_000)
        copied.click()
        other.keyboard.press("Control+A")
        other.keyboard.insert_text(
            "# my own work\n" + CORRECT.replace("optimizer", "opt").replace("loss", "objective")
        )
        other.get_by_role("button", name="Submit").click()
        expect(other.locator("#verdict h3")).to_contain_text("Accepted", timeout=90_000)

        # The teaching assistant: a comment, an override with its reason, a similarity pair.
        assistant = watched(browser.new_context(viewport={"width": 1280, "height": 900}).new_page())
        assistant.goto(f"{server.url}/login")
        assistant.get_by_label("Name").fill("tess")
        assistant.get_by_label("Password").fill(TEACHER_PASSWORD)
        assistant.get_by_role("button", name="Sign in").click()
        assistant.get_by_role("link", name="Courses").click()
        assistant.get_by_role("link", name="JAX 101").click()
        assistant.get_by_role("link", name="grace").click()
        first = assistant.locator("ol.timeline > li").last
        first.locator("summary").first.click()  # the submission's one compact row opens
        first.get_by_text("Add a comment").click()  # each action behind one control
        first.get_by_label("Comment for grace").fill(
            "Two optimizer steps: sum the gradients first."
        )
        first.get_by_role("button", name="Comment").click()
        expect(assistant.locator("ol.timeline")).to_contain_text("sum the gradients first")
        grade_row = assistant.locator(f"#grade-{slug}")
        grade_row.locator("summary", has_text="Override").click()
        grade_row.get_by_label("Points").fill("7")
        grade_row.get_by_label("Reason").fill("the write-up was missing")
        grade_row.get_by_role("button", name="Override").click()
        expect(assistant.locator(f"#grade-{slug}")).to_contain_text("overridden by tess")
        expect(assistant.locator("ul.audit")).to_contain_text("the write-up was missing")
        assistant.get_by_role("link", name="JAX 101").click()
        expect(assistant.locator("table.matrix")).to_contain_text("overridden")
        assistant.get_by_role("link", name="analytics, similarity").click()
        assistant.get_by_role("button", name="Check similarity").click()
        expect(assistant.locator("table.pairs")).to_contain_text("grace", timeout=60_000)
        assistant.get_by_role("link", name="side by side").first.click()
        expect(assistant.locator(".line.matched").first).to_be_visible()
        assistant.screenshot(path=str(shots / "similarity-pair.png"), full_page=True)

        # grace is told on the problem's page.
        page.goto(f"{server.url}/problems/{slug}")
        expect(page.locator("main")).to_contain_text("1 comment from course staff")
        expect(page.locator("main")).to_contain_text("sum the gradients first")
        browser.close()
    assert errors == [], f"console errors: {errors}"
