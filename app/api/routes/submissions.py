"""The submissions API: create (answered at once with an id), read (the learner's view)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, Literal

from fastapi import (
    APIRouter,
    File,
    Form,
    Header,
    HTTPException,
    Request,
    Response,
    UploadFile,
    status,
)
from fastapi.responses import StreamingResponse
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.api import hot_reads, streams
from app.api.deps import Authorization, CurrentUser, current_user
from app.core.config import grader_settings, settings
from app.core.db import session_scope
from app.core.request_db import SessionDep
from app.data import catalog, comments, mail
from app.data import submissions as submission_data
from app.errors import ForbiddenError, NotFoundError
from app.grading import notebook_submissions, notebooks, queue
from app.grading.doorbell import changes
from app.grading.notifications import announce_new_work
from app.models import Submission, User
from app.schemas.learners import (
    NotebookSubmitted,
    StaffComment,
    SubmissionCreate,
    SubmissionCreated,
    SubmissionPublic,
)
from app.vocabulary import SubmissionStatus
from grader.child.verdicts import Mode
from grader.judging.feedback import learner_view
from grader.judging.report import CaseReport, GradeReport

router = APIRouter(prefix="/api/submissions", tags=["submissions"])


@router.post("", status_code=status.HTTP_202_ACCEPTED, response_model=SubmissionCreated)
def create_submission(
    request: Request,
    body: SubmissionCreate,
    user: CurrentUser,
    session: SessionDep,
    idempotency_key: Annotated[
        str | None,
        Header(
            max_length=64,
            description="Any unique string: a retry with the same key returns the first"
            " submission instead of storing another.",
        ),
    ] = None,
) -> SubmissionCreated:
    """Store the submission and queue it; grading happens in a worker."""
    if idempotency_key and (
        earlier := submission_data.submission_by_key(
            session=session, user=user, key=idempotency_key
        )
    ):
        return SubmissionCreated(id=earlier.id)
    require_confirmed_email(user)
    visible = catalog.visible_live_problem(session=session, slug=body.problem, user=user)
    if visible is None:  # a course's own problem does not exist outside the course
        raise catalog.unknown_problem(session=session, slug=body.problem)
    live = visible[0]
    size = len(body.code.encode())
    if size > grader_settings.max_source_bytes:
        raise HTTPException(
            status.HTTP_413_CONTENT_TOO_LARGE,
            f"The code is {size // 1024} KiB; the limit is {grader_settings.max_source_bytes // 1024} KiB.",
        )
    try:
        submission = submission_data.create_submission(
            session=session,
            user=user,
            problem=body.problem,
            code=body.code,
            mode=body.mode,
            version_id=live.id,
            max_queued=settings.max_queued_per_user,
            max_submits_per_hour=settings.max_submits_per_hour,
            client_key=idempotency_key,
        )
        session.commit()  # stored for good before an idle worker is woken for it
    except IntegrityError:  # the same key, sent twice at once: the other one won
        session.rollback()
        earlier = submission_data.submission_by_key(
            session=session, user=user, key=idempotency_key or ""
        )
        if earlier is None:
            raise
        return SubmissionCreated(id=earlier.id)
    request.state.submission_id = (
        submission.id
    )  # in the request's log line (app/server/http_stack.py)
    announce_new_work()
    return SubmissionCreated(id=submission.id)


def require_confirmed_email(user: User) -> None:
    if settings.require_verified_email and mail.mail_address(user) is None:
        raise ForbiddenError(
            "Confirm your email first: follow the link mailed to you (your account page sends"
            " it again)."
        )


def read_notebook_upload(upload: UploadFile) -> bytes:
    """The uploaded file, refused (413) past the notebook cap without reading more."""
    data = upload.file.read(notebooks.MAX_NOTEBOOK_BYTES + 1)
    if len(data) > notebooks.MAX_NOTEBOOK_BYTES:
        raise HTTPException(
            status.HTTP_413_CONTENT_TOO_LARGE,
            f"The notebook is larger than {notebooks.MAX_NOTEBOOK_BYTES // 1024} KiB.",
        )
    return data


@router.post("/notebook", status_code=status.HTTP_202_ACCEPTED, response_model=NotebookSubmitted)
def create_notebook_submission(
    request: Request,
    user: CurrentUser,
    session: SessionDep,
    problem: Annotated[str, Form(max_length=100, description="Problem slug.")],
    notebook: Annotated[UploadFile, File(description="The .ipynb file (nbformat 4).")],
    mode: Annotated[Literal["run", "submit"], Form()] = "submit",
    idempotency_key: Annotated[str | None, Header(max_length=64)] = None,
) -> NotebookSubmitted:
    """A notebook (multipart/form-data): the code the problem's entry points need is
    taken from its code cells (never run here: docs/api.md, "Notebooks") and stored as
    a submission, graded as if typed. ``notes`` says what was left out."""
    raw = read_notebook_upload(notebook)
    if idempotency_key and (
        earlier := submission_data.submission_by_key(
            session=session, user=user, key=idempotency_key
        )
    ):
        return NotebookSubmitted(
            id=earlier.id, problem=earlier.problem, cells=[], notes=[], missing=[]
        )
    require_confirmed_email(user)
    try:
        submission, found = notebook_submissions.submit_one(
            session=session,
            user=user,
            slug=problem,
            raw=raw,
            mode=mode,
            max_source_bytes=grader_settings.max_source_bytes,
            max_queued=settings.max_queued_per_user,
            max_submits_per_hour=settings.max_submits_per_hour,
            client_key=idempotency_key,
        )
        session.commit()
    except IntegrityError:  # the same key again: the first upload's submission
        session.rollback()
        earlier = submission_data.submission_by_key(
            session=session, user=user, key=idempotency_key or ""
        )
        if earlier is None:
            raise
        return NotebookSubmitted(
            id=earlier.id, problem=earlier.problem, cells=[], notes=[], missing=[]
        )
    request.state.submission_id = submission.id
    announce_new_work()
    return NotebookSubmitted(
        id=submission.id,
        problem=problem,
        cells=found.cells,
        notes=found.notes,
        missing=found.missing,
    )


@router.get("/{submission_id}", response_model=SubmissionPublic)
async def read_submission(
    submission_id: int, request: Request, authorization: Authorization = None
) -> Response:
    """Status while queued or running; the verdict, as its owner may see it, once done."""
    return await hot_reads.answer(
        request, authorization, lambda session, user: public_state(session, submission_id, user.id)
    )


def _owned(session: Session, submission_id: int, user_id: int) -> Submission:
    submission = session.get(Submission, submission_id)
    if submission is None or submission.user_id != user_id:  # others' do not exist for you
        raise NotFoundError(f"No submission {submission_id}.")
    return submission


def public_state(session: Session, submission_id: int, user_id: int) -> SubmissionPublic:
    """The submission as its owner may see it (the same for a read and for a stream)."""
    submission = _owned(session, submission_id, user_id)
    state = SubmissionPublic(
        id=submission.id,
        status=SubmissionStatus(submission.status),
        problem=submission.problem,
        mode=Mode(submission.mode),
        submitted_at=submission.created_at.replace(tzinfo=UTC),
        started_at=_to_the_second(submission.started_at),
        finished_at=_to_the_second(submission.finished_at),
    )
    if submission.status == SubmissionStatus.QUEUED:
        state.position = queue.queue_position(session, submission)
    elif submission.status == SubmissionStatus.RUNNING:
        state.stage = "hidden" if submission.samples_json else "samples"
        if submission.samples_json:  # the samples' own reports: no hidden case is in them
            stored = [CaseReport.model_validate(c) for c in json.loads(submission.samples_json)]
            state.samples = [case for case in stored if not case.hidden]
    else:
        state.stage = "done"
    report = GradeReport.from_stored(submission.result_json)
    if submission.status == SubmissionStatus.DONE and report is not None:
        # The learner's own view: hidden cases say their verdict and nothing more.
        shown = learner_view(report)
        for name in REPORT_FIELDS:
            setattr(state, name, getattr(shown, name))
    if submission.status == SubmissionStatus.DONE:
        notes = comments.of_submission(session=session, submission_id=submission.id)
        state.comments = [StaffComment.model_validate(c) for c in notes]
    return state


@router.get(
    "/{submission_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def submission_events(
    submission_id: int,
    request: Request,
    authorization: Authorization = None,
) -> Response:
    """Server-Sent Events: ``progress`` each time the state changes (queued with its
    ``position``, ``running``), then ``done`` with the verdict (the fields of
    ``GET /api/submissions/{id}``), or ``again`` after a while without one (read it
    again). A busy server answers 503, and a user with ``max_streams_per_user`` streams
    open 429: poll ``GET /api/submissions/{id}`` instead."""

    def owner() -> int:  # a database connection for this moment only, not the stream's life
        with session_scope() as session:
            user = current_user(request, session, authorization)
            return _owned(session, submission_id, user.id).user_id

    user_id = await run_in_threadpool(owner)
    slot = streams.take(user_id)  # 503 (the server's) or 429 (the user's) when full
    return streams.StreamAnswer(slot, _events(submission_id, user_id))


async def _events(submission_id: int, user_id: int) -> AsyncIterator[str]:
    def now_json() -> tuple[str, bool]:
        with session_scope() as session:
            state = public_state(session, submission_id, user_id)
            return state.model_dump_json(), state.status == SubmissionStatus.DONE

    changed = changes.watch(submission_id)  # rung by this process's workers
    try:
        began = last_sent = time.monotonic()
        sent = ""
        while True:
            changed.clear()
            payload, done = await run_in_threadpool(now_json)
            if payload != sent:
                yield f"event: {'done' if done else 'progress'}\ndata: {payload}\n\n"
                sent, last_sent = payload, time.monotonic()
            if done:
                return
            if time.monotonic() - began > streams.STREAM_SECONDS:
                yield "event: again\ndata: {}\n\n"
                return
            if time.monotonic() - last_sent > streams.KEEP_ALIVE_SECONDS:
                yield ": still grading\n\n"
                last_sent = time.monotonic()
            with contextlib.suppress(TimeoutError):  # a worker elsewhere: look again anyway
                await asyncio.wait_for(changed.wait(), streams.LOOK_SECONDS)
    finally:
        changes.unwatch(submission_id, changed)


REPORT_FIELDS = (
    "verdict", "verdict_label", "score", "cases", "diagnosis", "message", "stdout",
    "hidden_output_withheld", "versions", "seconds", "tests", "parts", "credit",
)  # fmt: skip


def _to_the_second(moment: datetime | None) -> datetime | None:
    """Stored naive in UTC; answered with its offset, to the second: the time between
    start and finish includes the hidden cases', so a learner gets no finer timing of
    them than the verdict's arrival already gives (docs/security.md, "Channels")."""
    return None if moment is None else moment.replace(tzinfo=UTC, microsecond=0)
