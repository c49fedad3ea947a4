"""A course's problems as folders, for its instructors: each version downloaded as a zip
in the bank's layout, zips uploaded (imported all or nothing, as unpublished versions),
and the course's git repository of problem folders: its link, its webhook's secret
(shown once), "Pull now", and the webhook itself (the secret, not a session, admits it)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, Response

from app.core.config import settings
from app.core.request_db import SessionDep
from app.core.throttle import SlidingWindow
from app.data import catalog, course_problems, problem_folders, problem_repos
from app.data.courses import CourseAccess
from app.errors import DomainError, NotFoundError
from app.grading import problem_pulls
from app.web.guards import CourseInstructor, CsrfChecked
from app.web.lti_answers import base_url
from app.web.render import page
from grader.problems import folders
from grader.problems.folders import FolderError

router = APIRouter(include_in_schema=False)
pulls = SlidingWindow(limit=6, seconds=60)  # per course: pages and webhooks together
TOO_MANY = "Too many pulls"


def _page(
    request: Request,
    session: SessionDep,
    access: CourseAccess,
    status_code: int = 200,
    **context: object,
) -> HTMLResponse:
    course_id = access.course.id
    slugs = course_problems.course_problem_slugs(session=session, course_id=course_id)
    return page(
        request,
        "course_problem_folders.html",
        access.user,
        status_code,
        course=access.course,
        problems=[(slug, catalog.versions(session=session, slug=slug)) for slug in slugs],
        name_of=problem_folders.name_of,
        repo=problem_repos.repo_of(session=session, course_id=course_id),
        webhook_url=f"{base_url(request)}/hooks/courses/{course_id}/problems",
        upload_limit=settings.problem_upload_bytes,
        **context,
    )


@router.get("/courses/{course_id}/problem-folders", response_class=HTMLResponse)
def folders_page(request: Request, session: SessionDep, access: CourseInstructor) -> Response:
    return _page(request, session, access)


@router.get("/courses/{course_id}/problem-folders/{slug}/v{number}.zip")
def download(slug: str, number: int, session: SessionDep, access: CourseInstructor) -> Response:
    version = catalog.version_by_number(session=session, slug=slug, number=number)
    if version is None or course_problems.course_of_slug(slug) != access.course.id:
        raise NotFoundError("no such version of a problem of this course")
    name, data = problem_folders.export_version(version)
    return Response(
        data,
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@router.post("/courses/{course_id}/problem-folders/import", response_class=HTMLResponse)
def upload(
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    file: UploadFile,
) -> Response:
    data = file.file.read(settings.problem_upload_bytes + 1)
    if len(data) > settings.problem_upload_bytes:
        error = f"The zip is larger than {settings.problem_upload_bytes // 1024} KiB."
        return _page(request, session, access, 413, errors=[error])
    try:
        imported = problem_folders.import_problems(
            session=session,
            course_id=access.course.id,
            problems=folders.read_upload(data),
            author=access.user,
        )
    except FolderError as error:
        return _page(request, session, access, 400, errors=error.errors)
    lines = [i.line() for i in imported]
    return _page(request, session, access, imported=lines)


@router.post("/courses/{course_id}/problem-folders/repository", response_class=HTMLResponse)
def link_repository(
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    url: Annotated[str, Form(max_length=1000)] = "",
    branch: Annotated[str, Form(max_length=200)] = "main",
    action: Annotated[str, Form(max_length=20)] = "save",
) -> Response:
    course_id = access.course.id
    secret: str | None
    try:
        if action == "unlink":
            problem_repos.unlink(session=session, course_id=course_id)
            return _page(request, session, access, notice="The repository is unlinked.")
        if action == "new-secret":
            repo = problem_repos.repo_of(session=session, course_id=course_id)
            if repo is None:
                raise NotFoundError("Link a repository first.")
            secret = problem_repos.new_secret(session=session, repo=repo)
        else:
            _, secret = problem_repos.link(
                session=session, course_id=course_id, url=url, branch=branch
            )
    except DomainError as error:
        return _page(request, session, access, error.status, errors=[str(error)])
    return _page(request, session, access, secret=secret, notice="The repository is linked.")


@router.post("/courses/{course_id}/problem-folders/pull", response_class=HTMLResponse)
def pull_now(
    request: Request, session: SessionDep, access: CourseInstructor, _csrf: CsrfChecked
) -> Response:
    if problem_repos.repo_of(session=session, course_id=access.course.id) is None:
        return _page(request, session, access, 409, errors=["Link a repository first."])
    notice = _start(access.course.id)
    return _page(request, session, access, _status(notice), notice=notice)


async def _body(request: Request) -> bytes:
    return await request.body()  # read here, so that the route's queries run off the loop


@router.post("/hooks/courses/{course_id}/problems")
def webhook(
    course_id: int,
    request: Request,
    session: SessionDep,
    body: Annotated[bytes, Depends(_body)],
) -> Response:
    repo = problem_repos.repo_of(session=session, course_id=course_id)
    headers = {name.lower(): value for name, value in request.headers.items()}
    if repo is None or not problem_repos.webhook_allowed(repo, headers, body):
        return Response("Wrong or missing secret.\n", status_code=403, media_type="text/plain")
    if headers.get("x-github-event") == "ping":
        return Response("pong\n", media_type="text/plain")
    notice = _start(course_id)
    return Response(notice + "\n", status_code=_status(notice), media_type="text/plain")


def _status(notice: str) -> int:
    return 429 if notice.startswith(TOO_MANY) else 202


def _start(course_id: int) -> str:
    key = str(course_id)
    wait = pulls.wait_seconds(key)
    if wait:
        return f"{TOO_MANY}: try again in {wait} seconds."
    pulls.record(key)
    if not problem_pulls.start_pull(course_id):
        return "A pull is under way already; its report comes here when it ends."
    return "Pulling: the report comes here when it ends (reload the page)."
