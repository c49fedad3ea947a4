"""Rendering pages: the templates, the context every page gets (the user and the
form token), and the filters that turn the platform's words into what people read."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

from app.core.config import PROJECT_ROOT, settings
from app.core.sessions import csrf_token
from app.models import User
from app.sso.buttons import buttons as sign_in_buttons
from app.vocabulary import (
    CheckStatus,
    GradeStatus,
    MemberRole,
    OutboxStatus,
    ProgressStatus,
    RegradeScope,
    RegradeStatus,
    Role,
    RubricMode,
    SimilarityScope,
    SimilarityStatus,
    SubmissionStatus,
    track_title,
)
from grader.child.verdicts import HEADLINES, TONES, Verdict
from grader.judging.report import rounded_values

templates = Jinja2Templates(directory=PROJECT_ROOT / "templates")


def verdict_label(value: str | None) -> str:
    """A verdict as people read it ("Wrong answer"); other words (a status) as they are."""
    if not value:
        return ""
    try:
        return HEADLINES[Verdict(value)]
    except ValueError:
        return value.replace("_", " ")


def verdict_tone(value: str | None) -> str:
    """The CSS class a verdict is coloured by (good, bad, warn, muted)."""
    try:
        return TONES[Verdict(value or "")]
    except ValueError:
        return "muted"


_PROGRESS_LABELS = {
    ProgressStatus.SOLVED: "✓ solved",
    ProgressStatus.ATTEMPTED: "• attempted",
    ProgressStatus.UNSEEN: "unseen",
}


def progress_label(value: str) -> str:
    """A learner's progress on a problem as the problem list and a track show it."""
    return _PROGRESS_LABELS[ProgressStatus(value)]


_TONE_COLOURS = {"good": "--ok", "bad": "--bad", "warn": "--warn", "muted": "--muted"}


def points(score: float, most: float) -> str:
    """A score (0..1) as the points it is worth, as every grade table shows them: to two
    decimals, trailing zeros dropped (0.8 of 10: "8"; 1/3 of 10: "3.33")."""
    return f"{round(score * most, 2):g}"


def verdicts_css() -> str:
    """One rule per verdict, generated from the vocabulary: nothing to keep in step."""
    return "".join(
        f".verdict.{verdict} {{ color: var({_TONE_COLOURS[tone]}); }}\n"
        for verdict, tone in TONES.items()
    )


def when(moment: datetime | None) -> Markup:
    """A UTC time as a <time> element: UTC in the text, which static/local-times.js
    turns into the reader's own time zone with the UTC beside it."""
    if moment is None:
        return Markup("")
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return Markup('<time datetime="{}" data-local>{} UTC</time>').format(
        stamp, moment.strftime("%Y-%m-%d %H:%M")
    )


templates.env.filters["when"] = when
templates.env.filters["verdict_label"] = verdict_label
templates.env.filters["verdict_tone"] = verdict_tone
templates.env.filters["track_title"] = track_title
templates.env.filters["progress_label"] = progress_label
templates.env.filters["rounded_values"] = rounded_values
templates.env.filters["points"] = points
# The vocabulary, so templates compare with members, not spelled-out strings.
templates.env.globals.update(
    Verdict=Verdict,
    SubmissionStatus=SubmissionStatus,
    CheckStatus=CheckStatus,
    RegradeStatus=RegradeStatus,
    RegradeScope=RegradeScope,
    ProgressStatus=ProgressStatus,
    GradeStatus=GradeStatus,
    OutboxStatus=OutboxStatus,
    SimilarityStatus=SimilarityStatus,
    SimilarityScope=SimilarityScope,
    Role=Role,
    MemberRole=MemberRole,
    RubricMode=RubricMode,
)
# The sign-in page's single sign-on buttons, and whether it shows the password form.
templates.env.globals.update(
    sign_in_buttons=sign_in_buttons,
    password_sign_in=lambda: settings.password_sign_in,
)


def page(
    request: Request, template: str, user: User | None, status_code: int = 200, **context: Any
) -> HTMLResponse:
    return templates.TemplateResponse(
        request,
        template,
        {"user": user, "csrf_token": csrf_token(request), **context},
        status_code=status_code,
    )
