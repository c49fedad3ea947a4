"""A learner's submitted code as highlighted HTML, one string a line, for the pages that
number its lines (the grading view, the learner's own submission with the comments
beside their lines). Pygments escapes the code and closes its spans at each line's end,
so each line is safe HTML on its own (code past ``HIGHLIGHT_LIMIT`` is only escaped);
the colours are /assets/highlight.css (app/core/markdown.py's, under a ``.highlight``
element)."""

from __future__ import annotations

from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

# Pygments reads some 100 KiB a second here: a learner's page shows every submit's code
# (256 KiB each: 2.3 s), so longer code is shown escaped, without colours.
HIGHLIGHT_LIMIT = 32 * 1024


def highlighted_lines(code: str) -> list[Markup]:
    """Line N of the code (1-based, as comments anchor) at index N - 1."""
    lines = code.splitlines()
    if not lines:
        return []
    if len(code) > HIGHLIGHT_LIMIT:
        return [escape(line) for line in lines]
    # stripnl=False: leading blank lines keep their numbers; ensurenl adds the last "\n".
    html = highlight("\n".join(lines), PythonLexer(stripnl=False), HtmlFormatter(nowrap=True))
    rendered = html.split("\n")[: len(lines)]
    return [Markup(line) for line in rendered]  # Pygments escaped the code
