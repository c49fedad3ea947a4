"""A problem's quiz on its page: answered once, explained after, and counted for the
course's instructor (per question and per choice)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.core.db import session_scope
from app.data import accounts, assignments, courses
from tests.app.conftest import in_process_client, sign_in

SLUG = (
    "scan-microbatched-grads"  # its quiz: why-scan (one answer, 0 right), which-are-equal (0 and 1)
)


@pytest.fixture
def course(database: str) -> int:
    with session_scope() as session:
        teacher = accounts.create_user(
            session=session, name="teacher", password="long test password", role="instructor"
        )
        made = courses.create_course(session=session, name="JAX 101", instructor=teacher)
        for name in ("ada", "bob"):
            learner = accounts.create_user(
                session=session, name=name, password="long test password"
            )
            courses.join_course(session=session, code=made.join_code, user=learner, address="test")
        assignments.assign(session=session, course=made, problem=SLUG, due_at=None)
        return made.id


@pytest.fixture
def browser(course: int) -> Iterator[TestClient]:
    with in_process_client() as client:
        yield client


def _answer(browser: TestClient, csrf: str, question: str, *choices: str) -> int:
    answer = browser.post(
        f"/problems/{SLUG}/quiz/{question}",
        data={"csrf_token": csrf, "choice": list(choices)},
        follow_redirects=False,
    )
    return answer.status_code


def test_an_answer_is_recorded_once_and_explained(browser: TestClient) -> None:
    csrf = sign_in(browser, "ada")
    page = browser.get(f"/problems/{SLUG}").text
    assert "Check your understanding" in page and 'id="quiz-why-scan"' in page
    assert "Under jit, scan" in page  # the choices are shown
    assert "Unrolling makes the program" not in page  # no explanation before answering

    assert _answer(browser, csrf, "why-scan", "1") == 303  # a wrong one
    page = browser.get(f"/problems/{SLUG}").text
    assert "Your answer was not right" in page
    assert "Unrolling makes the program" in page  # every choice explained now
    assert _answer(browser, csrf, "why-scan", "0") == 303  # the first answer stands
    assert "Your answer was not right" in browser.get(f"/problems/{SLUG}").text

    assert _answer(browser, csrf, "which-are-equal", "0", "1") == 303  # both right ones
    assert "You answered this correctly." in browser.get(f"/problems/{SLUG}").text


@pytest.mark.parametrize(
    "choices", [(), ("7",), ("0", "1"), ("x",)], ids=["none", "no-such", "two-for-one", "nan"]
)
def test_an_invalid_answer_is_refused_and_not_recorded(
    browser: TestClient, choices: tuple[str, ...]
) -> None:
    csrf = sign_in(browser, "ada")
    assert _answer(browser, csrf, "why-scan", *choices) == 400
    assert "Check your understanding" in browser.get(f"/problems/{SLUG}").text
    assert _answer(browser, csrf, "why-scan", "0") == 303  # still unanswered
    assert _answer(browser, csrf, "no-such-question", "0") == 404


def test_the_instructor_sees_answer_rates_per_question_and_choice(
    browser: TestClient, course: int
) -> None:
    for name, pick in (("ada", "0"), ("bob", "2")):
        browser.cookies.clear()
        _answer(browser, sign_in(browser, name), "why-scan", pick)
    browser.cookies.clear()
    sign_in(browser, "teacher")
    page = browser.get(f"/courses/{course}/problems/{SLUG}").text
    section = page.split('id="quiz-rates"')[1]
    assert "2 answered, 50% correct." in section
    assert "0 answered." in section  # which-are-equal: nobody yet
    rows = section.split("<tr>")
    picked = [row for row in rows if "scan runs the chunks in parallel" in row]
    assert picked and "<td>1</td>" in picked[0]
