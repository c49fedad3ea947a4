"""Small server-rendered SVG charts (no JavaScript, no CDN), each with a text
alternative; every chart sits next to a table of the same numbers."""

from __future__ import annotations

from html import escape

WIDTH, HEIGHT, PAD = 560, 220, 36


def _frame(label: str, body: str) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(label)}</title>{body}</svg>"
    )


def _axes() -> str:
    bottom, right = HEIGHT - PAD, WIDTH - 10
    return (
        f'<line class="axis" x1="{PAD}" y1="{bottom}" x2="{right}" y2="{bottom}"/>'
        f'<line class="axis" x1="{PAD}" y1="10" x2="{PAD}" y2="{bottom}"/>'
    )


def bar_chart(label: str, bars: list[tuple[str, int]]) -> str:
    """Vertical bars with their counts on top and labels below."""
    if not bars:
        return _frame(label, _axes())
    top = max(value for _name, value in bars) or 1
    slot = (WIDTH - PAD - 20) / len(bars)
    width = min(48.0, slot * 0.7)
    parts = [_axes()]
    for index, (name, value) in enumerate(bars):
        height = (HEIGHT - PAD - 24) * value / top
        x = PAD + 10 + index * slot + (slot - width) / 2
        y = HEIGHT - PAD - height
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}">'
            f"<title>{escape(name)}: {value}</title></rect>"
            f'<text x="{x + width / 2:.1f}" y="{y - 4:.1f}" text-anchor="middle">{value}</text>'
            f'<text x="{x + width / 2:.1f}" y="{HEIGHT - PAD + 16}" '
            f'text-anchor="middle">{escape(name)}</text>'
        )
    return _frame(label, "".join(parts))


def step_chart(label: str, points: list[tuple[str, float]], *, y_max: float = 1.0) -> str:
    """A cumulative series (0..y_max) as a step line, one x slot per point, percent axis."""
    parts = [_axes()]
    for fraction in (0.5, 1.0):
        y = HEIGHT - PAD - (HEIGHT - PAD - 24) * fraction
        parts.append(
            f'<line class="grid" x1="{PAD}" y1="{y:.1f}" x2="{WIDTH - 10}" y2="{y:.1f}"/>'
            f'<text x="{PAD - 4}" y="{y + 4:.1f}" text-anchor="end">{int(fraction * 100)}%</text>'
        )
    if points:
        slot = (WIDTH - PAD - 20) / len(points)
        coordinates = []
        for index, (_name, value) in enumerate(points):
            x0, x1 = PAD + index * slot, PAD + (index + 1) * slot
            y = HEIGHT - PAD - (HEIGHT - PAD - 24) * (value / y_max if y_max else 0)
            coordinates += [f"{x0:.1f},{y:.1f}", f"{x1:.1f},{y:.1f}"]
        parts.append(f'<polyline class="line" points="{" ".join(coordinates)}"/>')
        for index in sorted({0, len(points) - 1}):
            x = PAD + (index + 0.5) * slot
            parts.append(
                f'<text x="{x:.1f}" y="{HEIGHT - PAD + 16}" text-anchor="middle">'
                f"{escape(points[index][0])}</text>"
            )
    return _frame(label, "".join(parts))
