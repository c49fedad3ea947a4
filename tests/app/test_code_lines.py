"""app/core/code_lines.py: a submission's code as one safe HTML string a line."""

from __future__ import annotations

from app.core.code_lines import HIGHLIGHT_LIMIT, highlighted_lines


def test_each_line_is_escaped_and_highlighted_with_its_number_kept() -> None:
    code = 'x = """<script>\nalert(1)</script>"""\n\n# </td><img src=x onerror=alert(1)>\n'
    lines = highlighted_lines(code)
    assert len(lines) == 4 and lines[2] == ""
    assert "<script>" not in "".join(lines) and "&lt;img src=x" in lines[3]
    assert all(line.count("<span") == line.count("</span>") for line in lines)


def test_long_code_is_escaped_without_colours_so_a_page_of_submits_stays_quick() -> None:
    # Pygments took 2.3 s for a 256 KiB submit, and a learner's problem page shows
    # every submit's code: 30 of them cost over a minute of the server a reload.
    code = "s = '<b>'  # a comment\n" * (HIGHLIGHT_LIMIT // 10)
    lines = highlighted_lines(code)
    assert len(lines) == HIGHLIGHT_LIMIT // 10
    assert lines[0] == "s = &#39;&lt;b&gt;&#39;  # a comment" and "<span" not in lines[-1]
