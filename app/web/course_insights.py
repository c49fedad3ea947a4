"""The instructor's deeper views of a course: a learner's timeline, a problem's
analytics with its versions, and regrades (start, watch, apply or discard)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import Markup

from app.core.code_lines import highlighted_lines
from app.core.request_db import SessionDep
from app.data import (
    assignments,
    catalog,
    comments,
    courses,
    overrides,
    quizzes,
    regrades,
    rubrics,
)
from app.errors import DomainError, ForbiddenError, NotFoundError
from app.grading.notifications import announce_new_work
from app.models import Course, User
from app.reports import analytics, charts, gradebook, similarity_runs, timeline
from app.vocabulary import PUBLISH_ROLES
from app.web.guards import CourseInstructor, CourseStaff, CsrfChecked
from app.web.render import page

router = APIRouter(include_in_schema=False)


def _assigned(session: SessionDep, course: Course, slug: str) -> None:
    assignments.require_assigned(session=session, course=course, slug=slug)


@router.get("/courses/{course_id}/learners/{learner_id}", response_class=HTMLResponse)
def learner_timeline(
    learner_id: int, request: Request, session: SessionDep, access: CourseStaff
) -> Response:
    course, user = access.course, access.user
    learner = courses.course_learner(session=session, course=course, learner_id=learner_id)
    entries = timeline.timeline(session=session, course=course, learner=learner)
    notes = comments.on_submissions(
        session=session, submission_ids=[e.submission.id for e in entries], course=course
    )
    matrix = gradebook.grade_matrix(session=session, course=course, learner_ids=[learner.id])
    return page(
        request,
        "learner.html",
        user,
        course=course,
        learner=learner,
        role=access.role,
        matrix=matrix,
        # Points everywhere, as the grade table shows them: a score (0..1) times these.
        max_points={a.problem: a.max_points for a in matrix.problems},
        overrides=overrides.history(session=session, course=course, learner_id=learner.id),
        rubric_events=rubrics.events(session=session, course=course, learner_id=learner.id),
        entries=[
            {
                "entry": entry,
                "report": entry.report,
                "past": regrades.past_verdicts(
                    session=session, submission_id=entry.submission.id, course=course
                ),
                "comments": notes.get(entry.submission.id, []),
                "code": Markup("\n".join(highlighted_lines(entry.submission.code))),
            }
            for entry in entries
        ],
    )


@router.get("/courses/{course_id}/problems/{slug}", response_class=HTMLResponse)
def problem_analytics(
    slug: str, request: Request, session: SessionDep, access: CourseStaff
) -> Response:
    _assigned(session, access.course, slug)
    return _analytics_page(request, session, access.user, access.course, slug, role=access.role)


def _analytics_page(
    request: Request,
    session: SessionDep,
    user: User,
    course: Course,
    slug: str,
    error: str | None = None,
    role: str = "instructor",
) -> Response:
    stats = analytics.problem_stats(session=session, course=course, problem=slug)
    live = catalog.live_version(session=session, slug=slug)
    quiz = catalog.problem_of(live).quiz if live else None
    learners = [u.id for u in courses.learners_of(session=session, course=course)]
    return page(
        request,
        "course_problem.html",
        user,
        status.HTTP_409_CONFLICT if error else status.HTTP_200_OK,
        error=error,
        course=course,
        role=role,
        slug=slug,
        similarity=similarity_runs.of_problem(session=session, course=course, problem=slug),
        title=live.title if live else slug,
        stats=stats,
        rate_chart=charts.step_chart(
            f"Share of the {stats.learners} learners who have solved {slug}, by day",
            stats.rate_points(),
        ),
        attempts_chart=charts.bar_chart(
            f"Learners by attempts to their first acceptance of {slug}", stats.attempt_bars()
        ),
        versions=catalog.versions(session=session, slug=slug),
        live=live,
        regrades=[
            r for r in regrades.of_course(session=session, course=course) if r.problem == slug
        ],
        quiz=quiz,
        quiz_rates=(
            quizzes.rates(session=session, problem=slug, quiz=quiz, user_ids=learners)
            if quiz
            else {}
        ),
        learner_count=len(learners),
    )


@router.post("/courses/{course_id}/problems/{slug}/regrades")
def start_regrade(
    slug: str,
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    version: Annotated[int, Form()],
) -> Response:
    course, user = access.course, access.user
    _assigned(session, course, slug)
    target = catalog.version_by_number(session=session, slug=slug, number=version)
    if target is None:
        raise NotFoundError(f"No version {version} of {slug!r}.")
    try:
        regrade = regrades.start(session=session, course=course, version=target, by=user)
    except DomainError as error:
        return _analytics_page(request, session, user, course, slug, error=str(error))
    session.commit()
    announce_new_work()  # idle workers take its items now
    return RedirectResponse(
        f"/courses/{course.id}/regrades/{regrade.id}", status_code=status.HTTP_303_SEE_OTHER
    )


@router.get("/courses/{course_id}/regrades/{regrade_id}", response_class=HTMLResponse)
def regrade_page(
    regrade_id: int, request: Request, session: SessionDep, access: CourseInstructor
) -> Response:
    course, user = access.course, access.user
    regrade = regrades.in_course(session=session, course=course, regrade_id=regrade_id)
    done, total = regrades.progress(session=session, regrade=regrade)
    found = regrades.changes(session=session, regrade=regrade)
    return page(
        request,
        "regrade.html",
        user,
        course=course,
        regrade=regrade,
        version=catalog.version_number(session=session, version_id=regrade.version_id),
        done=done,
        total=total,
        changes=found,
        changed=sum(1 for change in found if change.changed),
    )


@router.get("/courses/{course_id}/regrades/{regrade_id}/progress")
def regrade_progress(
    regrade_id: int, session: SessionDep, access: CourseInstructor
) -> dict[str, object]:
    """For the page's progress bar: how far the regrade is."""
    regrade = regrades.in_course(session=session, course=access.course, regrade_id=regrade_id)
    done, total = regrades.progress(session=session, regrade=regrade)
    return {"status": regrade.status, "done": done, "total": total}


@router.post("/courses/{course_id}/regrades/{regrade_id}/{decision}")
def decide_regrade(
    regrade_id: int,
    decision: str,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
) -> Response:
    course, user = access.course, access.user
    regrade = regrades.in_course(session=session, course=course, regrade_id=regrade_id)
    if decision == "apply":
        regrades.apply(session=session, regrade=regrade)
    elif decision == "apply-everywhere":
        if user.role not in PUBLISH_ROLES:
            raise ForbiddenError("Only an author or an admin applies a regrade beyond this course.")
        regrades.apply(session=session, regrade=regrade, platform_wide=True)
    elif decision == "discard":
        regrades.discard(session=session, regrade=regrade)
    else:
        raise NotFoundError("Apply, apply everywhere, or discard.")
    return RedirectResponse(
        f"/courses/{course.id}/regrades/{regrade.id}", status_code=status.HTTP_303_SEE_OTHER
    )
