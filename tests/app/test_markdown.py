"""Problem text to HTML: what authors write renders; nothing can carry script."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from app.core.markdown import highlight_css, render_markdown


def test_markdown_renders_headings_lists_tables_and_links() -> None:
    html = render_markdown(
        "# Title\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[docs](https://jax.dev)"
    )
    assert "<h1>Title</h1>" in html
    assert "<li>one</li>" in html
    assert "<td>1</td>" in html
    assert '<a href="https://jax.dev"' in html


def test_math_becomes_mathml_and_a_typo_becomes_code() -> None:
    assert "<math" in render_markdown("Inline $x^2$ math.")
    assert 'display="block"' in render_markdown("$$\\sum_i x_i$$")
    broken = render_markdown("$\\frac{1}{$")
    assert "<math" not in broken and "<code>" in broken


def test_display_math_scrolls_in_a_box_of_its_own_and_inline_math_does_not() -> None:
    """A wide formula on a phone scrolls inside its box (reachable by keyboard), not the page."""
    block = render_markdown("$$\\sum_i x_i$$")
    assert block.startswith('<span class="math-display" tabindex="0"><math')
    assert "math-display" not in render_markdown("Inline $x^2$ math.")
    # An author cannot write the box (or any tabindex) themselves: raw HTML is text.
    written = render_markdown('<span class="math-display" tabindex="0">x</span>')
    assert "<span" not in written


def test_code_blocks_are_highlighted_and_the_styles_exist() -> None:
    html = render_markdown("```python\ndef f(x):\n    return x\n```")
    assert '<span class="k">def</span>' in html
    assert ".highlight" in highlight_css()


@pytest.mark.parametrize(
    "hostile",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[click](javascript:alert(1))",
        '<a href="javascript:alert(1)">x</a>',
        "<iframe src=https://evil.example></iframe>",
        '<math><a xlink:href="javascript:alert(1)">x</a></math>',
        "$x$<style>body{display:none}</style>",
    ],
)
def test_nothing_in_a_problem_file_becomes_script(hostile: str) -> None:
    elements = Elements()
    elements.feed(render_markdown(hostile))
    assert not elements.tags & {"script", "iframe", "style", "img", "object", "embed"}
    for name, value in elements.attributes:
        assert not name.startswith("on"), name
        assert not (value or "").strip().lower().startswith("javascript:"), value


class Elements(HTMLParser):
    """The tags and attributes of an HTML text (escaped text is not an element)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes += attrs


def test_every_highlight_colour_reads_at_aa_contrast_on_the_code_background() -> None:
    from pygments.styles import get_style_by_name

    from app.core.markdown import COLOR, HIGHLIGHT_STYLE, _rgb, contrast, highlight_css

    background = _rgb(get_style_by_name(HIGHLIGHT_STYLE).background_color)
    colours = COLOR.findall(highlight_css())
    assert len(colours) > 20  # the style's token colours, not an empty sheet
    assert min(contrast(_rgb(c), background) for c in colours) >= 4.5
