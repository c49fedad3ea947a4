"""Learners' pages: the problem list, a problem's page (statement, samples, editor,
hints, history), and its fragments (history, walkthrough) the page fetches."""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.core.code_lines import highlighted_lines
from app.core.markdown import highlight_css, render_markdown
from app.core.request_db import SessionDep
from app.data import catalog, comments, hints, progress, quizzes
from app.data import submissions as submission_data
from app.errors import ForbiddenError, NotFoundError
from app.grading import notebooks
from app.models import ProblemVersion, User
from app.reports import grading_view, windows
from app.vocabulary import ProgressStatus
from app.web.auth import safe_next
from app.web.guards import CsrfChecked, SignedInUser
from app.web.render import page, verdicts_css
from grader.child.verdicts import Verdict
from grader.problems.problem import Credit, Problem

router = APIRouter(include_in_schema=False)


@router.get("/assets/highlight.css")
def highlight_stylesheet() -> Response:
    """Pygments' colours for highlighted code (generated, served by the app)."""
    return _stylesheet(highlight_css())


@router.get("/assets/verdicts.css")
def verdicts_stylesheet() -> Response:
    """Each verdict's colour, generated from the verdict vocabulary."""
    return _stylesheet(verdicts_css())


def _stylesheet(text: str) -> Response:
    return Response(text, media_type="text/css", headers={"Cache-Control": "max-age=86400"})


@router.get("/", response_class=HTMLResponse)
def problem_list(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    """Every track, easiest first; a learner who has done nothing yet is told where to start."""
    found = progress.live_tracks(session=session, user=user)
    return page(
        request, "problems.html", user, tracks=found, start_here=progress.starting_point(found)
    )


@router.get("/tracks/{track}", response_class=HTMLResponse)
def track_page(track: str, request: Request, session: SessionDep, user: SignedInUser) -> Response:
    """One track: each problem's status, the learner's progress, what to do next."""
    found = next(
        (t for t in progress.live_tracks(session=session, user=user) if t.track == track), None
    )
    if found is None:
        raise NotFoundError(f"No track {track!r}.")
    return page(request, "track.html", user, track=found)


def _back_to(next_path: str | None, slug: str) -> RedirectResponse:
    target = safe_next(next_path) if next_path else f"/problems/{slug}"
    return RedirectResponse(target, status_code=status.HTTP_303_SEE_OTHER)


# What the mark form (templates/_mark.html) posts to: /problems/{slug}/complete or
# /problems/{slug}/incomplete.
_MARKINGS = {"complete": True, "incomplete": False}


@router.post("/problems/{slug}/{marking}")
def set_marked(
    slug: str,
    marking: str,
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    next_path: Annotated[str | None, Form(alias="next")] = None,
) -> Response:
    """Mark a problem complete (skipped or reviewed; solved stays apart), or take the
    mark back (``incomplete``)."""
    if marking not in _MARKINGS:
        raise NotFoundError(f"No {marking!r} for a problem: complete or incomplete.")
    progress.set_marked(session=session, user=user, problem=slug, marked=_MARKINGS[marking])
    return _back_to(next_path, slug)


def _live_or_404(session: SessionDep, slug: str, user: User) -> tuple[ProblemVersion, Problem]:
    """The live problem, if ``user`` may see it: a course's own problem is a 404 to anyone
    outside that course, as an unknown slug is."""
    live = catalog.visible_live_problem(session=session, slug=slug, user=user)
    if live is None:
        raise catalog.unknown_problem(session=session, slug=slug)
    return live


def _history(session: SessionDep, user: User, slug: str) -> list[dict[str, Any]]:
    """Each submit with its code and a diff against the previous submit."""
    submissions = submission_data.submission_history(session=session, user=user, problem=slug)
    notes = comments.on_submissions(session=session, submission_ids=[s.id for s in submissions])
    graded = grading_view.learner_gradings(session=session, submissions=submissions)
    rows = []
    for index, submission in enumerate(submissions):
        previous = submissions[index + 1] if index + 1 < len(submissions) else None
        diff = ""
        if previous is not None:
            diff = "".join(
                difflib.unified_diff(
                    previous.code.splitlines(keepends=True),
                    submission.code.splitlines(keepends=True),
                    f"#{previous.id}",
                    f"#{submission.id}",
                )
            )
        rows.append(
            {
                "submission": submission,
                "diff": diff or ("(no change)" if previous else ""),
                "comments": notes.get(submission.id, []),
                # The code with the staff's comments beside their lines, and the rubric.
                "lines": highlighted_lines(submission.code),
                "notes": grading_view.by_line(notes.get(submission.id, [])),
                "grading": graded.get(submission.id),
            }
        )
    return rows


def signature_of(problem: Problem) -> str:
    """The functions to write, one signature a line (one per part)."""
    return "\n".join(part.signature for part in problem.parts)


CREDIT_WORDS = {
    Credit.PER_CASE: "per case",
    Credit.PER_PART: "per part",
    Credit.PER_TEST: "per test",
    Credit.ALL_OR_NOTHING: "all or nothing",
}


def credit_line(problem: Problem) -> str:
    """How the score is computed, as the problem page states it ("Credit: per part, 3
    parts weighted 1, 2, 1"); empty for one function graded per case, as always."""
    policy = problem.config.credit
    if not problem.has_parts and policy is Credit.PER_CASE:
        return ""
    words = f"Credit: {CREDIT_WORDS[policy]}"
    if problem.has_parts:
        weights = ", ".join(f"{part.weight:g}" for part in problem.parts)
        words += f", {len(problem.parts)} parts weighted {weights}"
    return words


def walkthrough_views(problem: Problem) -> dict[str, str]:
    """The walkthrough and the reference, rendered (shown after acceptance, and to authors)."""
    # solution.md opens with its own "# Walkthrough": the page's heading says it once.
    text = re.sub(r"\A\s*#\s+Walkthrough\s*\n", "", problem.solution_walkthrough)
    return {
        "walkthrough": render_markdown(text),
        "reference": render_markdown(f"```python\n{problem.reference_source}\n```"),
    }


def learner_preview(problem: Problem, version: ProblemVersion) -> dict[str, Any]:
    """What an author's preview shows of a version as learners will see it: the statement,
    signature, stored samples and hints, and the walkthrough and reference they unlock."""
    return {
        "problem": problem,
        "statement": render_markdown(problem.statement),
        "signature": signature_of(problem),
        "samples": catalog.stored_samples(version),
        "samples_error": version.samples_error,
        "hints": [render_markdown(hint) for hint in problem.hints],
        **walkthrough_views(problem),
    }


def _track_of(session: SessionDep, user: User, problem: Problem) -> progress.TrackProgress | None:
    """The learner's progress through the problem's track."""
    found = progress.live_tracks(session=session, user=user)
    return next((t for t in found if t.track == problem.config.track), None)


@router.get("/problems/{slug}/track-progress", response_class=HTMLResponse)
def track_progress_fragment(
    slug: str, request: Request, session: SessionDep, user: SignedInUser
) -> Response:
    """The track's progress line, which the page's script reads again after a verdict."""
    _version, problem = _live_or_404(session, slug, user)
    track = _track_of(session, user, problem)
    return page(request, "_track_progress.html", user, track=track)


@router.get("/problems/{slug}/history", response_class=HTMLResponse)
def history_fragment(
    slug: str, request: Request, session: SessionDep, user: SignedInUser
) -> Response:
    _live_or_404(session, slug, user)
    return page(request, "_history.html", user, history=_history(session, user, slug))


@router.get("/problems/{slug}/walkthrough", response_class=HTMLResponse)
def walkthrough_fragment(
    slug: str, request: Request, session: SessionDep, user: SignedInUser
) -> Response:
    _version, problem = _live_or_404(session, slug, user)
    if not submission_data.has_solved(session=session, user=user, problem=slug):
        raise ForbiddenError("The walkthrough unlocks after an accepted submission.")
    unlocked = walkthrough_views(problem)
    return page(
        request,
        "_walkthrough.html",
        user,
        walkthrough=unlocked["walkthrough"],
        reference=unlocked["reference"],
    )


@router.get("/problems/{slug}", response_class=HTMLResponse)
def problem_page(slug: str, request: Request, session: SessionDep, user: SignedInUser) -> Response:
    version, problem = _live_or_404(session, slug, user)
    # The learner's submits for this problem give its status too: no second query.
    history = _history(session, user, slug)
    verdicts = {row["submission"].verdict for row in history}
    progress_status = (
        ProgressStatus.SOLVED
        if Verdict.ACCEPTED in verdicts
        else ProgressStatus.ATTEMPTED
        if history
        else ProgressStatus.UNSEEN
    )
    revealed = hints.hints_revealed(session=session, user=user, problem=slug)
    return page(
        request,
        "problem.html",
        user,
        problem=problem,
        statement=render_markdown(problem.statement),
        signature=signature_of(problem),
        credit=credit_line(problem),
        entry_points=notebooks.entry_points(problem),
        samples=catalog.stored_samples(version),
        samples_error=version.samples_error,
        hint_count=len(problem.hints),
        hints=[render_markdown(text) for text in problem.hints[:revealed]],
        status=progress_status,
        track=_track_of(session, user, problem),
        marked=slug in progress.marked(session=session, user=user),
        history=history,
        deadlines=windows.learner_deadlines(session=session, user=user, problem=slug),
        staff_comments=comments.for_learner_problem(session=session, user=user, problem=slug),
        unlocked=walkthrough_views(problem) if progress_status == ProgressStatus.SOLVED else None,
        quiz=problem.quiz,
        quiz_answers=(
            {
                qid: quizzes.picked_of(row)
                for qid, row in quizzes.answers_of(session=session, user=user, problem=slug).items()
            }
            if problem.quiz
            else {}
        ),
    )


@router.post("/problems/{slug}/quiz/{question_id}")
def answer_quiz(
    slug: str,
    question_id: str,
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    choice: Annotated[list[str] | None, Form()] = None,
) -> Response:
    """Record the first answer to a question; the page then shows every explanation."""
    _version, problem = _live_or_404(session, slug, user)
    if problem.quiz is None:
        raise NotFoundError(f"{slug!r} has no quiz.")
    quizzes.answer(
        session=session,
        user=user,
        problem=slug,
        quiz=problem.quiz,
        question_id=question_id,
        picked=choice or [],
    )
    return RedirectResponse(
        f"/problems/{slug}#quiz-{question_id}", status_code=status.HTTP_303_SEE_OTHER
    )
