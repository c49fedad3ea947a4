"""Every page type in a real browser (Debian's Chromium), checked by axe-core (the npm
package, installed by `make` into var/axe, never fetched at run time) and at a
phone's width: no serious or critical violation, and no page wider than a 390 px
viewport (a wide table scrolls inside its own box). The pages hold real data: a
course with an assignment, a learner's accepted and wrong submits."""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import ViewportSize

from grader.config import PROJECT_ROOT, settings
from grader.problems.problem import problem_folders
from tests.app.server import Server, jaxjudge

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.server, pytest.mark.sandbox]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
AXE = PROJECT_ROOT / "var" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
PASSWORD = "a long password"
SLUG = "nnx-grad-accumulation"
SUBMISSIONS = PROJECT_ROOT / "tests" / "submissions" / SLUG
PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1280, "height": 900}


# The outermost elements that reach past a phone's edge, to say what to fix.
PAST_THE_EDGE = """() => {
  const wide = [...document.querySelectorAll('body *')].filter(
    (e) => e.getBoundingClientRect().right > window.innerWidth + 1);
  return wide.filter((e) => !wide.includes(e.parentElement)).slice(0, 4).map(
    (e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '')
      + ' ' + Math.round(e.getBoundingClientRect().right) + 'px');
}"""


def api(server: Server, token: str, method: str, path: str, body: object = None) -> Any:
    request = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        raw = answer.read()
        return json.loads(raw) if raw else None


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A server with a course, an assignment, and a learner's two graded submits."""
    env = {
        **os.environ,
        "JAXJUDGE_DATABASE_URL": f"sqlite:///{tmp_path_factory.mktemp('a11y') / 'a.db'}",
        "JAXJUDGE_DATA_DIR": str(settings.data_dir),
    }
    tokens = {}
    # newbie has done nothing yet: the problem list's "start here" state.
    for name, role in (
        ("teacher", "instructor"),
        ("ada", "learner"),
        ("root", "admin"),
        ("newbie", "learner"),
    ):
        made = jaxjudge(env, "users", "create", name, "--role", role, "--password-stdin",
                        stdin=f"{PASSWORD}\n")  # fmt: skip
        assert made.returncode == 0, made.stderr
        tokens[name] = jaxjudge(env, "tokens", "create", name).stdout.strip()
    server = Server(env, workers=1)
    try:
        yield _populated(server, tokens)
    finally:
        server.stop()


def _populated(server: Server, tokens: dict[str, str]) -> dict[str, Any]:
    course = api(server, tokens["teacher"], "POST", "/api/courses", {"name": "JAX 101"})
    api(server, tokens["teacher"], "PUT", f"/api/courses/{course['id']}/assignments",
        {"problem": SLUG, "due_at": "2031-01-01T00:00:00"})  # fmt: skip
    api(server, tokens["ada"], "POST", "/api/courses/join", {"code": course["join_code"]})
    for name in ("full_batch_gradient.py", "wrong_two_steps_manual.py"):
        made = api(server, tokens["ada"], "POST", "/api/submissions",
                   {"problem": SLUG, "code": (SUBMISSIONS / name).read_text(), "mode": "submit"})  # fmt: skip
        for _ in range(600):
            if (
                api(server, tokens["ada"], "GET", f"/api/submissions/{made['id']}")["status"]
                == "done"
            ):
                break
            time.sleep(0.2)
    ada = api(server, tokens["teacher"], "GET", f"/api/courses/{course['id']}/grades")
    return {"server": server, "course": course["id"], "ada": ada["learners"][0]["learner_id"]}


def pages(world: dict[str, Any]) -> dict[str, list[str]]:
    """Each account's page types."""
    course = world["course"]
    return {
        "ada": ["/", f"/problems/{SLUG}", "/tracks/gradient-accumulation", "/courses",
                f"/courses/{course}", "/account"],
        "teacher": [f"/courses/{course}", f"/courses/{course}/problems/{SLUG}",
                    f"/courses/{course}/learners/{world['ada']}", f"/courses/{course}/people",
                    "/author"],
        "root": ["/admin/users", "/admin/workers", "/admin/lti", "/admin/mail"],
        "newbie": ["/"],
        "": ["/login", "/signup", "/password/forgot"],
    }  # fmt: skip


def violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    page.add_script_tag(path=str(AXE))
    found: list[str] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']}))"
        ".violations.filter(v => ['serious', 'critical'].includes(v.impact))"
        ".map(v => v.id + ': ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '))"
    )
    return found


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_every_page_passes_axe_and_fits_a_phone(world: dict[str, Any]) -> None:
    from playwright.sync_api import sync_playwright

    assert AXE.is_file(), "run `make venv`: it installs axe-core into var/axe"
    server: Server = world["server"]
    found: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for who, paths in pages(world).items():
            # bypass_csp: axe is injected as a script of the test's, which the pages'
            # Content-Security-Policy (script-src 'self') would rightly refuse.
            context = browser.new_context(viewport=PHONE, bypass_csp=True)
            page = context.new_page()
            if who:
                page.goto(f"{server.url}/login")
                page.get_by_label("Name").fill(who)
                page.get_by_label("Password").fill(PASSWORD)
                page.get_by_role("button", name="Sign in").click()
                page.wait_for_load_state()
            for path in paths:
                # axe at a phone's width everywhere (where scrolling boxes appear), and
                # at a desktop's too on the problem page, the one learners live on.
                for viewport in (PHONE, DESKTOP) if path == f"/problems/{SLUG}" else (PHONE,):
                    page.set_viewport_size(viewport)
                    answer = page.goto(server.url + path)
                    assert answer is not None and answer.status == 200, (who, path)
                    page.wait_for_load_state("networkidle")
                    found += [f"{path} @{viewport['width']}: {v}" for v in violations(page)]
                    if viewport is PHONE:
                        width = page.evaluate("document.documentElement.scrollWidth")
                        if width > PHONE["width"]:
                            found.append(f"{path} @390: the page is {width} px wide, past"
                                         f" the edge: {page.evaluate(PAST_THE_EDGE)}")  # fmt: skip
            if who == "newbie":  # the state axe just walked is the one with "start here"
                assert page.locator("#start-here").count() == 1
            if who == "ada":  # every problem's statement (long ones, display math) on a phone
                page.set_viewport_size(PHONE)
                for folder in problem_folders():
                    page.goto(f"{server.url}/problems/{folder.name}")
                    width = page.evaluate("document.documentElement.scrollWidth")
                    if width > PHONE["width"]:
                        found.append(f"/problems/{folder.name} @390: the page is {width} px"
                                     f" wide: {page.evaluate(PAST_THE_EDGE)}")  # fmt: skip
            if who == "ada":  # the verdict panel the page's script draws after a run
                page.goto(f"{server.url}/problems/{SLUG}")
                page.get_by_role("button", name="Run samples").click()
                page.locator("#verdict table.cases").wait_for(timeout=120_000)
                found += [f"verdict panel: {v}" for v in violations(page)]
                # Every box opened (the samples, each failure's full values): no page wider
                # than its window, on a phone or a desktop, and axe still clean.
                page.evaluate(
                    "document.querySelectorAll('details').forEach((d) => { d.open = true; })"
                )
                for viewport in (PHONE, DESKTOP):
                    page.set_viewport_size(viewport)
                    width = page.evaluate("document.documentElement.scrollWidth")
                    if width > viewport["width"]:
                        found.append(f"verdict, all open @{viewport['width']}: the page is {width} px"
                                     f" wide: {page.evaluate(PAST_THE_EDGE)}")  # fmt: skip
                    found += [
                        f"verdict, all open @{viewport['width']}: {v}" for v in violations(page)
                    ]
            context.close()
        browser.close()
    assert found == [], "\n".join(found)
