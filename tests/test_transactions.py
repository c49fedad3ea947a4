"""No helper commits a transaction it did not open. A unit of work is defined where it
starts: a route (``SessionDep`` commits it), a worker's step, a command, a background
thread's own ``session_scope``. The data-like modules below are called inside those
units, so none of them commits, rolls back or opens a transaction of its own; a
savepoint (``begin_nested``) stays inside the caller's and is allowed. Checked on the
source, so a lazy commit inside a branch is found too."""

from __future__ import annotations

import ast
from pathlib import Path

from grader.config import PROJECT_ROOT

HELPERS = [
    *sorted((PROJECT_ROOT / "app" / "data").rglob("*.py")),
    *sorted((PROJECT_ROOT / "app" / "reports").rglob("*.py")),
    PROJECT_ROOT / "app" / "grading" / "queue.py",
    PROJECT_ROOT / "app" / "lti" / "platforms.py",
    PROJECT_ROOT / "app" / "lti" / "provisioning.py",
]

# Methods that end the caller's transaction or begin one, and the function that opens
# a unit of work of its own.
TRANSACTION_METHODS = {"commit", "rollback", "begin"}
OPENING = "session_scope"

# (module, function) that run on a thread of their own, with no caller's transaction to
# commit behind: each opens its own scope, and says so here.
OWN_TRANSACTIONS = {
    ("app/data/usage.py", "flush"): (
        "the usage recorder's thread (and shutdown) writes the noted uses of tokens and"
        " sessions in one transaction of its own, off every request's path"
    ),
    ("app/reports/similarity_runs.py", "run"): (
        "a similarity report is computed on a thread of its own after the route that"
        " started it committed; it stores its pairs, or its failure, in its own transactions"
    ),
    ("app/reports/deadline_digest.py", "run_once"): (
        "the daily digest runs on the server's digest thread and from `jaxjudge notify"
        " digest`, with no request around it: one round is its own transaction"
    ),
}


def transaction_calls(source: str) -> list[tuple[str, str]]:
    """(enclosing function, call) for each commit, rollback, begin or session_scope call."""
    found: list[tuple[str, str]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, child.name if function == "<module>" else function)
                continue
            if isinstance(child, ast.Call):
                called = child.func
                if isinstance(called, ast.Attribute) and called.attr in TRANSACTION_METHODS:
                    found.append((function, f".{called.attr}()"))
                elif (isinstance(called, ast.Name) and called.id == OPENING) or (
                    isinstance(called, ast.Attribute) and called.attr == OPENING
                ):
                    found.append((function, f"{OPENING}()"))
            visit(child, function)

    visit(ast.parse(source), "<module>")
    return found


def test_no_helper_commits_or_opens_a_transaction() -> None:
    offenders = [
        f"{name} {function}: {call}"
        for path in HELPERS
        for name in [str(path.relative_to(PROJECT_ROOT))]
        for function, call in transaction_calls(path.read_text())
        if (name, function) not in OWN_TRANSACTIONS
    ]
    assert offenders == []


def test_every_own_transaction_is_still_there_and_says_why() -> None:
    for (name, function), reason in OWN_TRANSACTIONS.items():
        assert reason.strip(), f"{name} {function} opens its own transaction: say why"
        calls = transaction_calls((PROJECT_ROOT / name).read_text())
        assert (function, f"{OPENING}()") in calls, f"{name} {function}: allowed, not needed"


def test_a_commit_is_found_in_a_branch_and_a_savepoint_is_not() -> None:
    source = (
        "def store(*, session):\n"
        "    with session.begin_nested():\n"
        "        session.add(1)\n"
        "    if session.dirty:\n"
        "        session.commit()\n"
        "\n"
        "def later():\n"
        "    with db.session_scope() as session:\n"
        "        session.rollback()\n"
    )
    assert transaction_calls(source) == [
        ("store", ".commit()"),
        ("later", "session_scope()"),
        ("later", ".rollback()"),
    ]


def test_the_helpers_are_found() -> None:
    assert all(Path(path).is_file() for path in HELPERS)
    assert len(HELPERS) > 20
