"""Each status and scope is spelled once, in app/vocabulary.py: no module of app/ and no
template compares a value against the bare string of one of the enums below. Python
is read with ``ast`` (``==``, ``!=``, ``in``, ``not in``, a ``match`` case and
SQLAlchemy's ``.in_()``, a string or a tuple, list or set of strings on either side);
templates with Jinja's own lexer (a string beside ``==`` or ``!=``, before ``in``, inside
the brackets after ``in``, or a key of a dict literal: a lookup table by status).

Roles (an account's and a course member's) are covered too; late policies and the
grader's verdicts and modes are not: their values ("none", "run", ...) are common words
elsewhere."""

from __future__ import annotations

import ast
from enum import StrEnum
from pathlib import Path

import jinja2

from app import vocabulary
from app.vocabulary import (
    CheckStatus,
    GradeStatus,
    MemberRole,
    OutboxStatus,
    ProgressStatus,
    RegradeScope,
    RegradeStatus,
    Role,
    RubricAction,
    RubricMode,
    SimilarityScope,
    SimilarityStatus,
    SubmissionStatus,
)
from grader.config import PROJECT_ROOT

COVERED: tuple[type[StrEnum], ...] = (
    SubmissionStatus,
    CheckStatus,
    RegradeStatus,
    RegradeScope,
    ProgressStatus,
    GradeStatus,
    OutboxStatus,
    SimilarityStatus,
    SimilarityScope,
    Role,
    MemberRole,
    RubricMode,
    RubricAction,
)
WORDS = {member.value for enum in COVERED for member in enum}

# (module, comparison as ast.unparse writes it): a word of the vocabulary that means
# something else there, with the reason.
ALLOWED = {
    ("app/reports/gradebook.py", "sort == 'solved'"): (
        "the grade book's sort by the number of problems solved, a view's key in the URL"
    ),
    ("app/reports/gradebook.py", "show == 'late'"): (
        "the grade book's filter to learners with late work, a view's key in the URL"
    ),
}

_COMPARING = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def _words(node: ast.expr) -> list[str]:
    """The vocabulary's words a side of a comparison spells out."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return [
        item.value
        for item in items
        if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value in WORDS
    ]


def python_offences(source: str) -> list[tuple[int, str]]:
    """(line, code) for each comparison against a bare word of the vocabulary."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, _COMPARING) for op in node.ops):
            sides = [node.left, *node.comparators]
        elif isinstance(node, ast.MatchValue):
            sides = [node.value]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "in_"
        ):
            sides = list(node.args)
        else:
            continue
        if any(_words(side) for side in sides):
            found.append((getattr(node, "lineno", 0), ast.unparse(node)))
    return found


def template_offences(source: str) -> list[tuple[int, str]]:
    """(line, word) for each bare word of the vocabulary a template compares or looks up."""
    tokens = [t for t in jinja2.Environment().lexer.tokenize(source) if t.type != "whitespace"]
    found: list[tuple[int, str]] = []
    # Open brackets: (kind, opened right after ``in``).
    brackets: list[tuple[str, bool]] = []
    for index, token in enumerate(tokens):
        before = tokens[index - 1] if index else None
        after = tokens[index + 1] if index + 1 < len(tokens) else None
        if token.type in ("lparen", "lbracket", "lbrace"):
            brackets.append((token.type, before is not None and before.test("name:in")))
        elif token.type in ("rparen", "rbracket", "rbrace") and brackets:
            brackets.pop()
        if token.type != "string" or token.value not in WORDS:
            continue
        compared = any(t is not None and t.type in ("eq", "ne") for t in (before, after))
        member_of = after is not None and (after.test("name:in") or after.test("name:not"))
        in_group = bool(brackets) and brackets[-1][1]
        dict_key = (
            bool(brackets) and brackets[-1][0] == "lbrace" and after is not None
        ) and after.type == "colon"
        if compared or member_of or in_group or dict_key:
            found.append((token.lineno, token.value))
    return found


def _modules() -> list[Path]:
    return sorted((PROJECT_ROOT / "app").rglob("*.py"))


def _templates() -> list[Path]:
    return sorted((PROJECT_ROOT / "templates").rglob("*.html"))


def test_every_status_scope_and_mode_of_the_vocabulary_is_covered() -> None:
    """A new status, scope or mode enum is scanned for too (listed in ``COVERED``)."""
    named = {
        name
        for name, value in vars(vocabulary).items()
        if isinstance(value, type)
        and issubclass(value, StrEnum)
        and name.endswith(("Status", "Scope", "Mode"))
    }
    assert named <= {enum.__name__ for enum in COVERED}


def test_no_module_compares_a_bare_status_string() -> None:
    used: set[tuple[str, str]] = set()
    offences = []
    for path in _modules():
        name = path.relative_to(PROJECT_ROOT).as_posix()
        for line, code in python_offences(path.read_text()):
            if (name, code) in ALLOWED:
                used.add((name, code))
            else:
                offences.append(f"{name}:{line}: {code}")
    assert not offences, (
        "compare with the enum's member (app/vocabulary.py), not its bare value:\n"
        + "\n".join(offences)
    )
    assert used == set(ALLOWED), f"allowances no longer needed: {set(ALLOWED) - used}"


def test_no_template_compares_a_bare_status_string() -> None:
    offences = [
        f"{path.relative_to(PROJECT_ROOT).as_posix()}:{line}: {word!r}"
        for path in _templates()
        for line, word in template_offences(path.read_text())
    ]
    assert not offences, (
        "compare with the enum's member, a template global (app/web/render.py), not its"
        " bare value:\n" + "\n".join(offences)
    )


def test_the_scans_find_what_they_look_for() -> None:
    python = (
        'if report.status == "running": pass\n'
        'if cell.status not in ("solved", "late"): pass\n'
        'query.where(Regrade.status.in_(["ready"]))\n'
        'match state:\n    case "sent": pass\n'
        'if report.status == SimilarityStatus.RUNNING and kind == "other": pass\n'
    )
    assert [line for line, _code in python_offences(python)] == [1, 2, 3, 5]
    template = (
        '{% if state == "running" %}x{% endif %}\n'
        "{% if 'sent' != r.status %}x{% endif %}\n"
        '{% if c.status in ("solved", "late") %}x{% endif %}\n'
        '{{ {"solved": "yes", "unseen": "no"}[item.status] }}\n'
        '<p class="running">"failed" == x</p>{{ "%g" | format(1) }}{{ "done" }}\n'
        "{% if state == SimilarityStatus.RUNNING %}x{% endif %}\n"
    )
    assert template_offences(template) == [
        (1, "running"),
        (2, "sent"),
        (3, "solved"),
        (3, "late"),
        (4, "solved"),
        (4, "unseen"),
    ]
