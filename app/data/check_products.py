"""What a passing check produced from a course problem's author code, kept with its
version (``ProblemVersionProduct``): the case bank and the expected outputs on the
check's device (and those derived on other devices or runtimes, ``derive``). Graders
restore them into their caches (``restore``, from
``catalog.problem_of``) and never run the author's code outside a check: a version
without them fails closed (grader/errors.py ``CheckResultsMissingError``)."""

from __future__ import annotations

import logging

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, defer

from app.models import ProblemVersionProduct
from app.vocabulary import ProductKind
from grader import author_code, expected
from grader.errors import CheckResultsMissingError, ProblemError
from grader.problems.problem import Problem

log = logging.getLogger("jaxjudge.authoring")


def keep(*, session: Session, version_id: int, problem: Problem, device: str) -> None:
    """Store what this machine's caches hold of ``problem`` after its passing check on
    ``device`` (replacing what an earlier check stored); OSError if a piece is missing."""
    cases = author_code.stored_bytes(problem)
    outputs = expected.stored_bytes(problem, device)
    session.execute(
        delete(ProblemVersionProduct).where(ProblemVersionProduct.version_id == version_id)
    )
    session.add_all(
        [
            ProblemVersionProduct(
                version_id=version_id,
                kind=ProductKind.CASES,
                device="",
                runtime_key=author_code.runtime_key(),
                blob=cases,
            ),
            ProblemVersionProduct(
                version_id=version_id,
                kind=ProductKind.EXPECTED,
                device=device,
                runtime_key=expected.runtime_key(device),
                blob=outputs,
            ),
        ]
    )
    session.flush()


def restore(*, session: Session, version_id: int, problem: Problem) -> None:
    """Put the version's stored products into this machine's caches where they are
    absent: its case bank, and its expected outputs (a check's or derived) on each device
    whose runtime is this one's. What does not validate is logged and left out (grading then fails closed)."""
    rows = session.scalars(
        select(ProblemVersionProduct)
        .where(ProblemVersionProduct.version_id == version_id)
        .options(defer(ProblemVersionProduct.blob))
        .order_by(ProblemVersionProduct.id)
    ).all()
    cases = [row for row in rows if row.kind == ProductKind.CASES]
    if not cases:
        return
    try:
        if not author_code.on_disk(problem):
            author_code.restore(problem, cases[-1].blob)
        for row in rows:
            if (
                row.kind in (ProductKind.EXPECTED, ProductKind.DERIVED)
                and row.runtime_key == expected.runtime_key(row.device)
                and not expected.on_disk(problem, row.device)
            ):
                expected.restore(problem, row.device, row.blob)
    except (ProblemError, CheckResultsMissingError, expected.ReferenceRunError, OSError) as error:
        log.error("version %s: its stored check results do not restore: %s", version_id, error)


def derive(*, session: Session, version_id: int, problem: Problem, device: str) -> None:
    """Where this machine has no expected outputs of ``problem`` on ``device`` (a GPU
    worker for a problem checked on a CPU, an upgraded runtime), derive them from its
    stored bank and keep them with the version for the other workers of this runtime
    (grader/expected.py ``derive``: accepted only if they agree with what its checks
    stored; else ``DerivationRefusedError``, a submission's clear error). With no check's
    outputs stored, nothing is run and grading fails closed as before. The caller commits
    (a worker, in a transaction of its own: app/grading/runs.py)."""
    if expected.on_disk(problem, device):
        return
    rows = session.scalars(
        select(ProblemVersionProduct)
        .where(
            ProblemVersionProduct.version_id == version_id,
            ProblemVersionProduct.kind == ProductKind.EXPECTED,
        )
        .order_by(ProblemVersionProduct.id)
    ).all()
    if not rows or not author_code.on_disk(problem):
        return
    anchors = []
    for row in rows:
        try:
            anchors.append(expected.parse_stored(problem, row.blob))
        except expected.ReferenceRunError as error:
            log.error("version %s: a stored check result does not read: %s", version_id, error)
    if not anchors:
        return
    log.warning("version %s: deriving its expected outputs on %s", version_id, device)
    expected.derive(problem, device, anchors)
    session.add(
        ProblemVersionProduct(
            version_id=version_id,
            kind=ProductKind.DERIVED,
            device=device,
            runtime_key=expected.runtime_key(device),
            blob=expected.stored_bytes(problem, device),
        )
    )
    session.flush()  # IntegrityError: another worker of this runtime stored them first
