"""The grading view in a real browser (issue 41): a teaching assistant walks the rubric
over three learners' submissions with the keyboard (next learner, items by number),
comments on a range of lines of each, while an instructor, in a second browser,
changes an item's points; the assistant's page shows the new points at its next
press. A learner then reads the items applied to their submission, the comments
beside their lines and the combined score. axe-core finds nothing serious on the
grading page or on the learner's. The submissions are inserted already graded (the
grading of code is not what is tested here), and the app serves from uvicorn in this
process with no workers and no trusted runs: no sandbox starts."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from app.core.config import settings as web_settings
from app.core.db import migrate, session_scope
from app.data import accounts, assignments, catalog, courses, members, rubrics
from app.models import Submission
from app.server.main import create_app
from app.vocabulary import MemberRole
from grader.child.verdicts import Mode, Verdict
from grader.config import PROJECT_ROOT
from grader.judging.report import CaseReport, GradeReport
from tests.app.server import free_port

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.server]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
AXE = PROJECT_ROOT / "var" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
PASSWORD = "a long password"
SLUG = "stable-logsumexp"
CODE = (
    "import jax.numpy as jnp\n\n\n"
    "def logsumexp_and_softmax(logits):\n"
    "    top = logits.max(axis=-1, keepdims=True)\n"
    "    lse = top[..., 0] + jnp.log(jnp.exp(logits - top).sum(-1))\n"
    "    return lse, jnp.exp(logits - lse[..., None])\n"
)  # seven lines
SCORES = {"ada": (Verdict.ACCEPTED, 1.0), "bob": (Verdict.WRONG_ANSWER, 0.5),
          "cy": (Verdict.WRONG_ANSWER, 0.0)}  # fmt: skip


@dataclass
class Course:
    server: str  # the app's address
    url: str  # the grading view's list


@pytest.fixture
def course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Course]:
    """The app from uvicorn in this process (nothing is graded: no workers, no trusted
    runs), a course of three learners' graded submissions, a TA and two rubric items."""
    monkeypatch.setattr(web_settings, "database_url", f"sqlite:///{tmp_path / 'e2e.db'}")
    migrate()
    with session_scope() as session:
        catalog.sync(session=session)
        users = {name: accounts.create_user(session=session, name=name, password=PASSWORD,
                                            role=role)
                 for name, role in (("teacher", "instructor"), ("tina", "learner"),
                                    ("ada", "learner"), ("bob", "learner"), ("cy", "learner"))}  # fmt: skip
        made = courses.create_course(session=session, name="JAX 101", instructor=users["teacher"])
        assignment = assignments.assign(session=session, course=made, problem=SLUG)
        members.add(session=session, course=made, user=users["tina"],
                    role=MemberRole.TEACHING_ASSISTANT)  # fmt: skip
        version = catalog.live_version(session=session, slug=SLUG)
        assert version is not None
        for name, (verdict, score) in SCORES.items():
            members.add(session=session, course=made, user=users[name], role=MemberRole.LEARNER)
            report = GradeReport(problem=SLUG, mode=Mode.SUBMIT, verdict=verdict, score=score,
                                 cases=[CaseReport(name="h1", hidden=True, verdict=verdict)])  # fmt: skip
            session.add(Submission(user_id=users[name].id, problem=SLUG, code=CODE, mode="submit",
                                   status="done", verdict=verdict, score=score,
                                   result_json=json.dumps(report.to_json()),
                                   problem_version_id=version.id))  # fmt: skip
        for points, words in ((-2, "Loops over the batch"), (1, "Clear names")):
            rubrics.add_item(session=session, course=made, assignment=assignment, points=points,
                             description=words, by=users["teacher"])  # fmt: skip
        course_id = made.id
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(workers=0, prepare=False), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    address = f"http://127.0.0.1:{port}"
    yield Course(address, f"{address}/courses/{course_id}/assignments/{SLUG}/grading")
    server.should_exit = True
    thread.join(timeout=30)


def violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    page.add_script_tag(path=str(AXE))
    found: list[str] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']}))"
        ".violations.filter(v => ['serious', 'critical'].includes(v.impact))"
        ".map(v => v.id + ': ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '))"
    )
    return found


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (make test installs it when run as root)",
)
def test_a_ta_grades_three_learners_by_keyboard_while_an_instructor_changes_an_item(
    course: Course,
) -> None:
    from playwright.sync_api import Locator, Page, expect, sync_playwright

    assert AXE.is_file(), "run `make venv`: it installs axe-core into var/axe"
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )

        def signed_in(name: str) -> Page:
            # bypass_csp: axe is injected as a script of the test's (script-src 'self').
            context = browser.new_context(viewport={"width": 1280, "height": 900},
                                          bypass_csp=True)  # fmt: skip
            page = context.new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{course.server}/login")
            page.get_by_label("Name").fill(name)
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            expect(page.get_by_role("link", name="Courses")).to_be_visible()
            return page

        def item(page: Page, number: int) -> Locator:
            return page.locator("#rubric li").nth(number - 1)

        def comment_on(page: Page, first: int, last: int, words: str) -> None:
            page.locator(f'button.ln[data-line="{first}"]').click()
            page.locator(f'button.ln[data-line="{last}"]').click(modifiers=["Shift"])
            expect(page.locator("tr.selected")).to_have_count(last - first + 1)
            page.locator("body").press("c")
            expect(page.locator("#comment-body")).to_be_focused()
            page.keyboard.insert_text(words)
            page.get_by_role("button", name="Save comment").click()
            beside = page.locator(f"#L{last} td.notes")
            expect(beside).to_contain_text(words)
            where = f"line {first}" if first == last else f"lines {first}\u2013{last}"
            expect(beside).to_contain_text(where)

        tina = signed_in("tina")
        tina.goto(course.url)
        expect(tina.get_by_role("row")).to_have_count(4)  # a header and three learners
        tina.get_by_role("link", name=re.compile(r"^#\d+$")).first.click()
        expect(tina.get_by_role("heading", level=1)).to_contain_text("ada")
        assert violations(tina) == []
        tina.locator("body").press("?")
        expect(tina.locator("#keys")).to_have_attribute("open", "")

        # ada: item 1 by its key, a comment on lines 5 to 6, on to the next learner.
        tina.locator("body").press("1")
        expect(item(tina, 1).locator("button")).to_have_attribute("aria-pressed", "true")
        expect(item(tina, 1)).to_contain_text("applied by tina")
        expect(tina.locator("#combined-points")).to_have_text("8")
        comment_on(tina, 5, 6, "Subtracting the max: good.")
        tina.locator("body").press("j")
        expect(tina.get_by_role("heading", level=1)).to_contain_text("bob")

        # Meanwhile the instructor makes item 1 cost three points, not two.
        teacher = signed_in("teacher")
        teacher.goto(course.url.replace("/grading", "/rubric"))
        teacher.get_by_label("Points").first.fill("-3")
        teacher.get_by_role("button", name="Change").first.click()
        expect(teacher.get_by_label("Points").first).to_have_value("-3")

        # bob: the assistant's page was loaded before the change; the next press shows it.
        expect(item(tina, 1)).to_contain_text("-2")
        tina.locator("body").press("1")
        tina.locator("body").press("2")
        expect(item(tina, 2).locator("button")).to_have_attribute("aria-pressed", "true")
        expect(item(tina, 1).locator(".item-points")).to_have_text("-3")
        expect(tina.locator("#combined-points")).to_have_text("3")  # 5 - 3 + 1
        comment_on(tina, 2, 4, "Name the reduction axis once.")
        tina.locator("body").press("j")
        expect(tina.get_by_role("heading", level=1)).to_contain_text("cy")

        # cy: item 2 only; the last learner, so j goes nowhere; k goes back.
        tina.locator("body").press("2")
        expect(tina.locator("#graded-by")).to_have_text("tina")
        comment_on(tina, 7, 7, "Reuse lse here.")
        expect(tina.locator("#next-learner")).to_have_count(0)
        tina.locator("body").press("k")
        expect(tina.get_by_role("heading", level=1)).to_contain_text("bob")
        expect(item(tina, 1).locator(".item-points")).to_have_text("-3")

        tina.goto(course.url)
        for name, combined in (("ada", "7"), ("bob", "3"), ("cy", "1")):
            row = tina.get_by_role("row").filter(has=tina.get_by_role("rowheader", name=name))
            expect(row.locator("td").nth(3)).to_have_text(combined)
            expect(row.locator("td").nth(4)).to_have_text("tina")

        # bob reads the items, the comment beside its lines and the combined score.
        bob = signed_in("bob")
        bob.goto(f"{course.server}/problems/{SLUG}")
        graded = bob.locator(".hand-grading")
        expect(graded).to_contain_text("3 of 10 points")
        expect(graded).to_contain_text("Loops over the batch")
        expect(graded).to_contain_text("-3")
        expect(graded).to_contain_text("Clear names")
        expect(bob.locator('tr[id$="-L4"] td.notes')).to_contain_text(
            "Name the reduction axis once."
        )
        expect(bob.locator('tr[id$="-L2"]')).to_have_class("commented")
        assert violations(bob) == []
        browser.close()
    assert errors == []
