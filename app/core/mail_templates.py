"""Mail bodies from templates: ``templates/mail/<name>.txt`` (plain text) and
``templates/mail/<name>.html`` (HTML, autoescaped), each starting with a ``Subject:``
line. Rendered when a mail is queued, so the outbox holds exactly what is sent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from app.core.config import PROJECT_ROOT

FOLDER = PROJECT_ROOT / "templates" / "mail"
SUBJECT_LIMIT = 200

_environment = Environment(
    loader=FileSystemLoader(FOLDER),
    autoescape=select_autoescape(enabled_extensions=("html",), default_for_string=False),
    undefined=StrictUndefined,  # a missing value is a bug, not an empty line in a mail
    keep_trailing_newline=True,
)


@dataclass(frozen=True)
class RenderedMail:
    subject: str
    text: str
    html: str


def _split_subject(rendered: str, name: str) -> tuple[str, str]:
    first, _, body = rendered.partition("\n")
    if not first.startswith("Subject:"):
        raise ValueError(f"templates/mail/{name}.txt must start with a 'Subject:' line")
    subject = " ".join(first.removeprefix("Subject:").split())  # one line, no header injection
    return subject[:SUBJECT_LIMIT], body.lstrip("\n")


def render(name: str, **context: Any) -> RenderedMail:
    """The mail ``name`` for ``context``: its subject (from the text template's first
    line), its plain-text body and its HTML body."""
    subject, text = _split_subject(_environment.get_template(f"{name}.txt").render(context), name)
    html = _environment.get_template(f"{name}.html").render(context, subject=subject)
    return RenderedMail(subject=subject, text=text, html=html)
