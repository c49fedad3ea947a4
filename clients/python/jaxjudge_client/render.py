"""A finished submission for people: plain text (a terminal, a log) and HTML (a
notebook's output). Hidden cases come from the server already reduced to their
verdict; samples carry their message and, when wrong, what was expected and what
came out."""

from __future__ import annotations

import json
from html import escape
from typing import Any

Answer = dict[str, Any]
GOOD, BAD = "#1a7f37", "#b3261e"  # AA contrast on white


def _shown(values: Any, limit: int = 300) -> str:
    text = json.dumps(values[0] if isinstance(values, list) and len(values) == 1 else values)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _headline(answer: Answer) -> str:
    label = answer.get("verdict_label") or answer.get("verdict") or answer.get("status", "?")
    score = answer.get("score")
    seconds = answer.get("seconds")
    parts = [f"score {score:.0%}" if isinstance(score, (int, float)) else ""]
    parts.append(f"{seconds:.2f} s" if isinstance(seconds, (int, float)) else "")
    details = ", ".join(p for p in parts if p)
    return f"{answer.get('problem', '?')}: {label}" + (f" ({details})" if details else "")


def _cases(answer: Answer) -> list[dict[str, Any]]:
    cases = answer.get("cases") or []
    return [case for case in cases if isinstance(case, dict)]


def text(answer: Answer) -> str:
    lines = [_headline(answer)]
    if answer.get("message"):
        lines += ["", str(answer["message"]).rstrip()]
    if answer.get("diagnosis"):
        lines += ["", f"Likely mistake: {answer['diagnosis']}"]
    cases = _cases(answer)
    if cases:
        lines.append("")
    for case in cases:
        kind = "hidden" if case.get("hidden") else "sample"
        label = case.get("verdict_label") or case.get("verdict", "?")
        lines.append(f"  [{label:>22}] {case.get('name', '?')} ({kind})")
        if case.get("message"):
            lines += [f"      {line}" for line in str(case["message"]).rstrip().splitlines()]
        if case.get("expected") is not None and case.get("verdict") == "wrong_answer":
            lines.append(f"      expected: {_shown(case['expected'])}")
            lines.append(f"      got:      {_shown(case.get('actual'))}")
    if answer.get("stdout"):
        lines += ["", "Captured output:", str(answer["stdout"]).rstrip()]
    if answer.get("hidden_output_withheld"):
        lines += ["", "(Output printed while hidden cases ran is not shown.)"]
    for comment in answer.get("comments") or []:
        lines += [
            "",
            f"Comment from {comment.get('author_name', 'staff')}: {comment.get('body', '')}",
        ]
    return "\n".join(lines)


def html(answer: Answer, *, server: str = "") -> str:
    """One self-contained block (inline styles: a notebook loads no stylesheet)."""
    accepted = answer.get("verdict") == "accepted"
    colour = GOOD if accepted else BAD
    out = [
        '<div class="jaxjudge-verdict" style="font-family:sans-serif;line-height:1.4">',
        f'<p style="font-weight:bold;color:{colour}">{escape(_headline(answer))}</p>',
    ]
    if answer.get("message"):
        out.append(f"<pre>{escape(str(answer['message']).rstrip())}</pre>")
    if answer.get("diagnosis"):
        out.append(f"<p><strong>Likely mistake:</strong> {escape(str(answer['diagnosis']))}</p>")
    cases = _cases(answer)
    if cases:
        out.append(
            '<table style="border-collapse:collapse"><thead><tr>'
            '<th scope="col" style="text-align:left;padding:2px 8px">Case</th>'
            '<th scope="col" style="text-align:left;padding:2px 8px">Kind</th>'
            '<th scope="col" style="text-align:left;padding:2px 8px">Verdict</th>'
            '<th scope="col" style="text-align:left;padding:2px 8px">Details</th>'
            "</tr></thead><tbody>"
        )
        for case in cases:
            good = case.get("verdict") == "accepted"
            details = escape(str(case.get("message") or ""))
            if case.get("expected") is not None and case.get("verdict") == "wrong_answer":
                details += (
                    f"<br>expected: <code>{escape(_shown(case['expected']))}</code>"
                    f"<br>got: <code>{escape(_shown(case.get('actual')))}</code>"
                )
            label = case.get("verdict_label") or case.get("verdict", "?")
            out.append(
                f'<tr><td style="padding:2px 8px">{escape(str(case.get("name", "?")))}</td>'
                f'<td style="padding:2px 8px">{"hidden" if case.get("hidden") else "sample"}</td>'
                f'<td style="padding:2px 8px;color:{GOOD if good else BAD}">{escape(label)}</td>'
                f'<td style="padding:2px 8px">{details}</td></tr>'
            )
        out.append("</tbody></table>")
    if answer.get("stdout"):
        out.append(f"<p>Captured output:</p><pre>{escape(str(answer['stdout']).rstrip())}</pre>")
    for comment in answer.get("comments") or []:
        out.append(
            f"<p><strong>Comment from {escape(str(comment.get('author_name', 'staff')))}:</strong>"
            f" {escape(str(comment.get('body', '')))}</p>"
        )
    problem = answer.get("problem")
    if server and problem and not accepted:
        link = f"{server}/problems/{problem}"
        out.append(f'<p><a href="{escape(link)}">The problem, its samples and hints</a></p>')
    out.append("</div>")
    return "".join(out)
