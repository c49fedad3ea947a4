"""A whole LTI 1.3 launch in a real browser (Debian's Chromium through Playwright),
through the platform server of tests/lti_platform.py and a real `jaxjudge serve`:
the LMS registered with `jaxjudge lti add-platform` and allowed to frame jaxjudge
(JAXJUDGE_LMS_FRAME_ORIGINS), on another site than the tool (localhost against
127.0.0.1: the launch's form post is cross-site, so the cookies must be SameSite=None
and Secure, as behind TLS).

jaxjudge's cookies are Partitioned (CHIPS), which Chromium keeps in a third-party
frame. The instructor's activity opens inside the LMS course page's frame (login
initiation, the LMS's authorization, the form post) and lands on the problem signed
in, the course made, without a script error though the frame has no storage. The
learner opens the activity in a new window, submits a correct solution, sees
"Accepted", and the score arrives at the LMS's AGS endpoint through the outbox. (A
browser that keeps every cookie out of frames gets the new-window page:
tests/app/lti/test_launch.py.)"""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.config import PROJECT_ROOT
from tests.app.server import Server, jaxjudge
from tests.lti_platform import CLIENT_ID, DEPLOYMENT_ID, INSTRUCTOR, LEARNER, Platform, User

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.server, pytest.mark.sandbox]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SLUG = "scan-microbatched-grads"
CORRECT = (PROJECT_ROOT / "tests" / "submissions" / SLUG / "closed_form.py").read_text()
ADA = User("sub-ada", "Ada Lovelace", "ada@uni.example", [INSTRUCTOR])
GRACE = User("sub-grace", "Grace Hopper", "grace@uni.example", [LEARNER])


@pytest.fixture
def lms_and_tool(tmp_path: Path) -> Iterator[tuple[Platform, Server]]:
    from grader.config import settings

    env = {
        **os.environ,
        "JAXJUDGE_DATABASE_URL": f"sqlite:///{tmp_path / 'lti.db'}",
        "JAXJUDGE_DATA_DIR": str(settings.data_dir),
        "JAXJUDGE_SECURE_COOKIES": "true",
    }
    tool: Server | None = None

    def tool_jwks() -> dict[str, object]:  # the platform reads them as an LMS does: HTTP
        assert tool is not None
        with urllib.request.urlopen(f"{tool.url}/lti/jwks", timeout=5) as answer:
            keys: dict[str, object] = json.loads(answer.read())
            return keys

    lms = Platform(tool_jwks=tool_jwks, host="localhost")
    env["JAXJUDGE_LMS_FRAME_ORIGINS"] = lms.url
    added = jaxjudge(env, "lti", "add-platform", "--issuer", lms.issuer, "--client-id", CLIENT_ID,
                     "--deployment-id", DEPLOYMENT_ID, "--login-url", lms.login_url,
                     "--token-url", lms.token_url, "--jwks-url", lms.jwks_url)  # fmt: skip
    assert added.returncode == 0, added.stderr
    tool = Server(env, workers=1, log=tmp_path / "server.log")
    lms.tool_login_url = f"{tool.url}/lti/login"
    lineitem = f"{lms.url}/contexts/course-101/lineitems/1"
    lms.launches["link-1"] = {"custom": {"problem": SLUG}, "lineitem": lineitem}
    yield lms, tool
    tool.stop()
    lms.stop()


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (make test installs it when run as root)",
)
def test_a_launch_from_the_lms_a_submit_and_the_grade_back_in_the_lms(
    lms_and_tool: tuple[Platform, Server],
) -> None:
    from playwright.sync_api import expect, sync_playwright

    lms, tool = lms_and_tool
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=args)
        instructor = browser.new_page()
        errors: list[str] = []
        instructor.on("pageerror", lambda error: errors.append(str(error)))
        lms.users[ADA.sub] = ADA
        instructor.goto(f"{lms.url}/course?as={ADA.sub}&frame=1")
        framed = instructor.frame_locator("iframe[title=jaxjudge]")
        # Login initiation, the LMS's authorization page, its form post: on the problem,
        # inside the LMS's page, signed in.
        expect(framed.locator("header")).to_contain_text("ada", timeout=30_000)
        expect(framed.locator(".cm-content")).to_be_visible(timeout=30_000)
        assert instructor.frames[1].url == f"{tool.url}/problems/{SLUG}"
        assert errors == []
        # The session lives in the frame (partitioned under the LMS's site).
        framed.get_by_role("link", name="Courses").click()
        expect(framed.locator("main")).to_contain_text("Deep Learning 101")

        # The learner opens the activity in a window of its own (Canvas's "new tab",
        # Moodle's "new window"): a top-level, cross-site launch.
        course_page = browser.new_context().new_page()
        lms.users[GRACE.sub] = GRACE
        course_page.goto(f"{lms.url}/course?as={GRACE.sub}")
        with course_page.context.expect_page() as opened:
            course_page.get_by_role("link", name="Open the jaxjudge activity").click(
                modifiers=["Shift"]
            )

        learner = opened.value
        expect(learner).to_have_url(f"{tool.url}/problems/{SLUG}", timeout=30_000)
        expect(learner.locator("header")).to_contain_text("grace")
        editor = learner.locator(".cm-content")
        expect(editor).to_be_visible(timeout=30_000)
        editor.click()
        learner.keyboard.press("Control+A")
        learner.keyboard.insert_text(CORRECT)
        learner.get_by_role("button", name="Submit").click()
        expect(learner.locator("#verdict h3")).to_contain_text("Accepted", timeout=120_000)
        browser.close()

    deadline = time.monotonic() + 60  # the outbox sends every few seconds
    while not lms.scores_for(GRACE.sub) and time.monotonic() < deadline:
        time.sleep(0.5)
    (score,) = lms.scores_for(GRACE.sub)
    assert score["lineitem"] == f"{lms.url}/contexts/course-101/lineitems/1"
    assert score["body"]["scoreGiven"] == 100.0 and score["body"]["scoreMaximum"] == 100.0
    assert score["body"]["gradingProgress"] == "FullyGraded"
