"""The staff's JSON API for grading by hand and similarity: comments on a learner's
submission, score overrides (audited), similarity reports of an assignment."""

from __future__ import annotations

from fastapi import APIRouter, status
from sqlalchemy.orm import Session

from app.api.routes.courses import Staff
from app.core.request_db import SessionDep
from app.data import assignments, comments, overrides
from app.models import Course, SimilarityReport
from app.reports import hand_grading, similarity_runs
from app.schemas.courses import (
    CommentCreate,
    CommentPublic,
    CommentsPublic,
    OverrideCreate,
    OverridePublic,
    OverridesPublic,
    SimilarityCreate,
    SimilarityPairPublic,
    SimilarityPublic,
)
from app.vocabulary import SimilarityScope

router = APIRouter(prefix="/api/courses", tags=["courses"])


@router.get("/{course_id}/submissions/{submission_id}/comments", response_model=CommentsPublic)
def list_comments(submission_id: int, access: Staff, session: SessionDep) -> CommentsPublic:
    submission = hand_grading.course_submission(
        session=session, course=access.course, submission_id=submission_id
    )
    found = comments.on_submissions(
        session=session, submission_ids=[submission.id], course=access.course
    ).get(submission.id, [])
    return CommentsPublic(data=[CommentPublic.model_validate(c) for c in found], count=len(found))


@router.post(
    "/{course_id}/submissions/{submission_id}/comments",
    status_code=status.HTTP_201_CREATED,
    response_model=CommentPublic,
)
def add_comment(
    submission_id: int, body: CommentCreate, access: Staff, session: SessionDep
) -> CommentPublic:
    """A comment its learner reads beside the submission."""
    submission = hand_grading.course_submission(
        session=session, course=access.course, submission_id=submission_id
    )
    made = comments.add(
        session=session,
        course=access.course,
        submission=submission,
        author=access.user,
        body=body.body,
        line_start=body.line_start,
        line_end=body.line_end,
    )
    return CommentPublic.model_validate(made)


@router.put(
    "/{course_id}/learners/{learner_id}/problems/{slug}/override", response_model=OverridePublic
)
def set_override(
    learner_id: int, slug: str, body: OverrideCreate, access: Staff, session: SessionDep
) -> OverridePublic:
    """Set the learner's points on the assignment (null: back to the computed score),
    with a reason; audited, and sent to a linked LMS."""
    made = hand_grading.override(
        session=session,
        course=access.course,
        learner_id=learner_id,
        slug=slug,
        points=body.points,
        reason=body.reason,
        by=access.user,
    )
    return OverridePublic.model_validate(made)


@router.get("/{course_id}/overrides", response_model=OverridesPublic)
def list_overrides(access: Staff, session: SessionDep) -> OverridesPublic:
    """Every override in the course, oldest first (the audit trail)."""
    found = overrides.history(session=session, course=access.course)
    return OverridesPublic(data=[OverridePublic.model_validate(o) for o in found], count=len(found))


def _report(session: Session, course: Course, report: SimilarityReport) -> SimilarityPublic:
    """The report with the pairs the course still counts (a removed learner's drop out)."""
    pairs = similarity_runs.counted_pairs(session=session, course=course, report=report)
    return SimilarityPublic(
        id=report.id,
        problem=report.problem,
        scope=SimilarityScope(report.scope),
        status=similarity_runs.status_of(report),
        submissions=report.submissions,
        seconds=report.seconds,
        pairs=[SimilarityPairPublic(**vars(p)) for _index, p in pairs],
    )


@router.post(
    "/{course_id}/problems/{slug}/similarity",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=SimilarityPublic,
)
def start_similarity(
    slug: str, body: SimilarityCreate, access: Staff, session: SessionDep
) -> SimilarityPublic:
    """Start a similarity report of the assignment; poll it until ``ready``."""
    assignments.require_assigned(session=session, course=access.course, slug=slug)
    report = similarity_runs.start(
        session=session, course=access.course, problem=slug, scope=body.scope, by=access.user
    )
    session.commit()
    similarity_runs.launch(report.id)
    return _report(session, access.course, report)


@router.get("/{course_id}/similarity/{report_id}", response_model=SimilarityPublic)
def get_similarity(report_id: int, access: Staff, session: SessionDep) -> SimilarityPublic:
    """A report's status and, once ready, its most similar pairs (flags, not verdicts)."""
    report = similarity_runs.in_course(session=session, course=access.course, report_id=report_id)
    return _report(session, access.course, report)
