"""A learner's submitted code as highlighted HTML, one string a line, for the pages that
number its lines (the grading view, the learner's own submission with the comments
beside their lines). Pygments escapes the code and closes its spans at each line's end,
so each line is safe HTML on its own; the colours are /assets/highlight.css
(app/core/markdown.py's, under a ``.highlight`` element)."""

from __future__ import annotations

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer


def highlighted_lines(code: str) -> list[Markup]:
    """Line N of the code (1-based, as comments anchor) at index N - 1."""
    lines = code.splitlines()
    if not lines:
        return []
    # stripnl=False: leading blank lines keep their numbers; ensurenl adds the last "\n".
    html = highlight("\n".join(lines), PythonLexer(stripnl=False), HtmlFormatter(nowrap=True))
    rendered = html.split("\n")[: len(lines)]
    return [Markup(line) for line in rendered]  # Pygments escaped the code
