"""Server-rendered pages: sign-up, sign-in, sign-out, problem list, problem page."""

from __future__ import annotations

import difflib
from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from sqlalchemy import select

from app.api.deps import SessionDep, session_user
from app.core import throttle
from app.core.config import PROJECT_ROOT
from app.core.markdown import highlight_css, render_markdown
from app.core.sessions import check_csrf, csrf_token
from app.core.throttle import client_address
from app.data import accounts, catalog, web_sessions
from app.data import submissions as crud
from app.errors import DomainError
from app.models import Submission, User
from grader.problem import Problem

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=PROJECT_ROOT / "app" / "web" / "templates")


def page(
    request: Request, template: str, user: User | None, status_code: int = 200, **context: Any
) -> HTMLResponse:
    return templates.TemplateResponse(
        request,
        template,
        {"user": user, "csrf_token": csrf_token(request), **context},
        status_code=status_code,
    )


def signed_in_user(request: Request, session: SessionDep) -> User | None:
    return session_user(request, session)


def _sign_in(request: Request, session: SessionDep, user: User) -> RedirectResponse:
    web_sessions.end(session=session, sid=request.session.get("sid"))
    request.session.clear()  # a new session (and CSRF token) on sign-in: no fixation
    request.session["sid"] = web_sessions.start(
        session=session, user=user, user_agent=request.headers.get("user-agent", "")
    )
    return RedirectResponse("/", status_code=status.HTTP_303_SEE_OTHER)


def _to_sign_in(request: Request) -> RedirectResponse:
    return RedirectResponse(
        f"/login?next={request.url.path}", status_code=status.HTTP_303_SEE_OTHER
    )


@router.get("/assets/highlight.css")
def highlight_stylesheet() -> Response:
    """Pygments' colours for highlighted code (generated, served by the app)."""
    return Response(
        highlight_css(), media_type="text/css", headers={"Cache-Control": "max-age=86400"}
    )


_sample_views: dict[str, list[dict[str, Any]]] = {}


def sample_views(problem: Problem) -> list[dict[str, Any]]:
    """Sample cases with their inputs and expected outputs (public by definition),
    computed once per process for each version (its folder is named by content hash)."""
    from grader import expected
    from grader.report import describe_value, shown_values

    if str(problem.folder) in _sample_views:
        return _sample_views[str(problem.folder)]
    try:
        trusted = expected.load_or_compute(problem)
    except expected.ReferenceRunError:
        trusted = None
    views = []
    for case in problem.case_bank.samples:
        outputs = trusted.reference.get(case.name) if trusted else None
        views.append(
            {
                "name": case.name,
                "inputs": {name: describe_value(value) for name, value in case.args.items()},
                "expected": [shown_values(out) for out in outputs] if outputs else None,
            }
        )
    if trusted is not None:
        _sample_views[str(problem.folder)] = views
    return views


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, session: SessionDep) -> Response:
    return page(request, "login.html", signed_in_user(request, session))


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    session: SessionDep,
    name: Annotated[str, Form(max_length=200)],
    password: Annotated[str, Form(max_length=1000)],
    csrf: Annotated[str, Form(alias="csrf_token")] = "",
) -> Response:
    check_csrf(request, csrf)
    address = client_address(request)

    def refused(code: int, message: str) -> Response:
        return page(request, "login.html", None, code, error=message, name=name)

    if wait := throttle.failed_sign_ins.wait_seconds(address):
        return refused(429, f"Too many failed sign-ins from here. Try again in {wait} s.")
    outcome = accounts.authenticate(session=session, name=name, password=password)
    if outcome.wait_seconds:
        return refused(
            429, f"Too many failed sign-ins for this name. Try again in {outcome.wait_seconds} s."
        )
    if outcome.disabled:
        return refused(403, "This account is disabled; ask an administrator.")
    if outcome.user is None:
        throttle.failed_sign_ins.record(address)
        return refused(400, "Wrong name or password.")
    return _sign_in(request, session, outcome.user)


@router.get("/signup", response_class=HTMLResponse)
def signup_form(request: Request, session: SessionDep) -> Response:
    return page(request, "signup.html", signed_in_user(request, session))


@router.post("/signup", response_class=HTMLResponse)
def signup(
    request: Request,
    session: SessionDep,
    name: Annotated[str, Form(max_length=200)],
    password: Annotated[str, Form(max_length=1000)],
    csrf: Annotated[str, Form(alias="csrf_token")] = "",
) -> Response:
    check_csrf(request, csrf)
    address = client_address(request)
    if wait := throttle.sign_ups.wait_seconds(address):
        message = f"Too many new accounts from here. Try again in {wait // 60 + 1} minute(s)."
        return page(request, "signup.html", None, 429, error=message, name=name)
    try:
        user = accounts.create_user(session=session, name=name, password=password)
    except DomainError as error:
        return page(
            request, "signup.html", None, status.HTTP_400_BAD_REQUEST, error=str(error), name=name
        )
    throttle.sign_ups.record(address)
    return _sign_in(request, session, user)


@router.post("/logout")
def logout(
    request: Request, session: SessionDep, csrf: Annotated[str, Form(alias="csrf_token")] = ""
) -> Response:
    check_csrf(request, csrf)
    web_sessions.end(session=session, sid=request.session.get("sid"))  # a copied cookie dies too
    request.session.clear()
    return RedirectResponse("/login", status_code=status.HTTP_303_SEE_OTHER)


def _statuses(session: SessionDep, user: User) -> dict[str, str]:
    rows = session.execute(
        select(Submission.problem, Submission.verdict).where(
            Submission.user_id == user.id, Submission.mode == "submit"
        )
    )
    statuses: dict[str, str] = {}
    for slug, verdict in rows:
        if verdict == "accepted":
            statuses[slug] = "solved"
        else:
            statuses.setdefault(slug, "attempted")
    return statuses


@router.get("/", response_class=HTMLResponse)
def problem_list(request: Request, session: SessionDep) -> Response:
    user = signed_in_user(request, session)
    if user is None:
        return _to_sign_in(request)
    problems = [problem for _version, problem in catalog.live_problems(session)]
    tracks: dict[str, list[Problem]] = {}
    for problem in problems:
        tracks.setdefault(problem.config.track, []).append(problem)
    return page(request, "problems.html", user, tracks=tracks, statuses=_statuses(session, user))


def _problem_or_404(session: SessionDep, slug: str) -> Problem:
    live = catalog.live_problem(session, slug)
    if live is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"No problem {slug!r}.")
    return live[1]


def _history(session: SessionDep, user: User, slug: str) -> list[dict[str, Any]]:
    """Each submit with its code and a diff against the previous submit."""
    submissions = crud.submission_history(session=session, user=user, problem=slug)
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
        rows.append({"submission": submission, "diff": diff or ("(no change)" if previous else "")})
    return rows


def signature_of(problem: Problem) -> str:
    return f"def {problem.config.entry_point}({', '.join(problem.config.arguments)}):"


def walkthrough_views(problem: Problem) -> dict[str, str]:
    """The walkthrough and the reference, rendered (shown after acceptance, and to authors)."""
    return {
        "walkthrough": render_markdown(problem.solution_walkthrough),
        "reference": render_markdown(f"```python\n{problem.reference_source}\n```"),
    }


@router.get("/problems/{slug}/history", response_class=HTMLResponse)
def history_fragment(slug: str, request: Request, session: SessionDep) -> Response:
    user = signed_in_user(request, session)
    if user is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Sign in first.")
    _problem_or_404(session, slug)
    return page(request, "_history.html", user, history=_history(session, user, slug))


@router.get("/problems/{slug}/walkthrough", response_class=HTMLResponse)
def walkthrough_fragment(slug: str, request: Request, session: SessionDep) -> Response:
    user = signed_in_user(request, session)
    if user is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Sign in first.")
    problem = _problem_or_404(session, slug)
    if not crud.has_solved(session=session, user=user, problem=slug):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, "The walkthrough unlocks after an accepted submission."
        )
    unlocked = walkthrough_views(problem)
    return page(
        request,
        "_walkthrough.html",
        user,
        walkthrough=unlocked["walkthrough"],
        reference=unlocked["reference"],
    )


@router.get("/problems/{slug}", response_class=HTMLResponse)
def problem_page(slug: str, request: Request, session: SessionDep) -> Response:
    user = signed_in_user(request, session)
    if user is None:
        return _to_sign_in(request)
    problem = _problem_or_404(session, slug)
    samples = sample_views(problem)
    signature = signature_of(problem)
    # The learner's submits for this problem give its status too: no second query.
    history = _history(session, user, slug)
    verdicts = {row["submission"].verdict for row in history}
    status_text = "solved" if "accepted" in verdicts else "attempted" if history else "unseen"
    revealed = crud.hints_revealed(session=session, user=user, problem=slug)
    return page(
        request,
        "problem.html",
        user,
        problem=problem,
        statement=render_markdown(problem.statement),
        signature=signature,
        samples=samples,
        hint_count=len(problem.hints),
        hints=[render_markdown(h) for h in problem.hints[:revealed]],
        status=status_text,
        history=history,
        unlocked=walkthrough_views(problem) if status_text == "solved" else None,
    )
