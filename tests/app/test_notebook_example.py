"""The notebook example (app/web/notebook_example.py) is what the account page and
docs/api.md show, character for character, and it names a real problem's function.
That it is accepted is proven by tests/clients/test_notebook.py, which submits it."""

from __future__ import annotations

import html

from app.core.db import session_scope
from app.data import accounts
from app.web import notebook_example
from grader.config import PROJECT_ROOT
from grader.problems.problem import load_problem
from tests.app.conftest import in_process_client, sign_in


def test_the_example_names_the_problems_own_function() -> None:
    problem = load_problem(PROJECT_ROOT / "problems" / notebook_example.SLUG)
    assert problem.parts[0].entry_point == notebook_example.FUNCTION
    assert f"def {notebook_example.FUNCTION}(" in notebook_example.SUBMIT_CELL


def test_the_docs_show_the_example_as_it_is() -> None:
    docs = (PROJECT_ROOT / "docs" / "api.md").read_text()
    assert f"```python\n{notebook_example.SUBMIT_CELL}\n```" in docs
    assert f"`{notebook_example.FUNCTION_LINE}`" in docs
    installing = notebook_example.install_cell("https://judge.example.org")
    assert f"```python\n{installing}\n```" in docs


def test_the_account_page_shows_the_example_as_it_is(database: str) -> None:
    with session_scope() as session:
        accounts.create_user(session=session, name="ada", password="long test password")
    with in_process_client() as browser:
        sign_in(browser, "ada")
        page = browser.get("/account").text
    assert f"<code>{html.escape(notebook_example.SUBMIT_CELL)}</code>" in page
    assert f"<code>{html.escape(notebook_example.FUNCTION_LINE)}</code>" in page
    server = "http://testserver"  # the in-process client's own address
    for shown in (notebook_example.install_cell(server), notebook_example.terminal_command(server)):
        assert f"<code>{shown}</code>" in html.unescape(page)  # Jinja writes " as &#34;
