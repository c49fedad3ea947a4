"""Problem text to safe HTML: Markdown, highlighted code, math as MathML, sanitised.

Math (`$...$`, `$$...$$`) becomes MathML on the server, which browsers render
natively: no script and no CDN. Everything passes through nh3 with an explicit
allow-list, so a problem file can never inject script into a learner's page.
"""

from __future__ import annotations

import re
from functools import cache
from html import escape
from typing import Any

import nh3
from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.util import ClassNotFound

MATHML_TAGS = {
    "math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "mtext", "mspace", "ms",
    "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot", "mover", "munder", "munderover",
    "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose", "mfenced",
}  # fmt: skip
MATHML_ATTRIBUTES = {
    "display", "xmlns", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace",
    "accent", "accentunder", "columnalign", "linethickness", "movablelimits", "symmetric",
    "largeop", "minsize", "maxsize", "width", "height", "depth", "encoding", "notation",
}  # fmt: skip
HTML_TAGS = {
    "p", "a", "em", "strong", "code", "pre", "span", "div", "ul", "ol", "li", "blockquote",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "br", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


def _math(display: bool) -> Any:
    def render(self: Any, tokens: Any, index: int, options: Any, env: Any) -> str:
        try:
            mathml = str(
                latex_to_mathml(tokens[index].content, display="block" if display else "inline")
            )
        except Exception:  # an author's typo shows as code, not as a crash
            return f"<code>{escape(tokens[index].content)}</code>"
        # Display math wider than a phone scrolls inside its own box (reachable by
        # keyboard), never the page: a span, so that it may stand inside a paragraph.
        return f'<span class="math-display" tabindex="0">{mathml}</span>' if display else mathml

    return render


def _highlight(code: str, language: str, _attrs: Any) -> str:
    try:
        lexer = get_lexer_by_name(language or "text")
    except ClassNotFound:
        return ""
    return str(highlight(code, lexer, HtmlFormatter(nowrap=True)))


@cache
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "highlight": _highlight}).enable("table")
    parser.use(dollarmath_plugin, double_inline=True)
    parser.add_render_rule("math_inline", _math(display=False))
    parser.add_render_rule("math_inline_double", _math(display=True))
    parser.add_render_rule("math_block", _math(display=True))
    parser.add_render_rule("math_block_label", _math(display=True))
    return parser


def render_markdown(text: str) -> str:
    html = _parser().render(text)
    attributes = {"*": {"class"}, "a": {"href", "title"}, "span": {"class", "tabindex"}} | {
        tag: MATHML_ATTRIBUTES for tag in MATHML_TAGS
    }
    cleaned = nh3.clean(
        html,
        tags=HTML_TAGS | MATHML_TAGS,
        attributes=attributes,
        url_schemes={"http", "https", "mailto"},
    )
    # A code block scrolls sideways on a narrow screen: focusable, the keyboard can too.
    return cleaned.replace("<pre>", '<pre tabindex="0">')


HIGHLIGHT_STYLE = "friendly"
COLOR = re.compile(r"(?<![-\w])color: (#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3})\b")
AA_CONTRAST = 4.5  # WCAG AA for text


@cache
def highlight_css() -> str:
    """Pygments' friendly colours, each darkened as little as it takes to reach AA
    contrast on the style's background (its comments and numbers fell to 2.6:1)."""
    style = get_style_by_name(HIGHLIGHT_STYLE)
    background = _rgb(style.background_color)
    css = str(HtmlFormatter(style=HIGHLIGHT_STYLE).get_style_defs(".highlight, pre code"))
    return COLOR.sub(lambda m: f"color: {_readable(m.group(1), background)}", css)


def _rgb(colour: str) -> tuple[float, float, float]:
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    red, green, blue = (int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4))
    return red, green, blue


def _luminance(rgb: tuple[float, float, float]) -> float:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(c) for c in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(one: tuple[float, float, float], other: tuple[float, float, float]) -> float:
    light, dark = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _readable(colour: str, background: tuple[float, float, float]) -> str:
    rgb = _rgb(colour)
    while contrast(rgb, background) < AA_CONTRAST:
        rgb = (rgb[0] * 0.95, rgb[1] * 0.95, rgb[2] * 0.95)
    return "#" + "".join(f"{round(c * 255):02x}" for c in rgb)
