"""The problem catalog: versions synced from `problems/`, and which one is live.

`sync` snapshots each problem folder (with its reference) by content hash; a
changed folder becomes a new version. Learners get a problem's *live* version:
a new version waits for an author to publish it (after the preview and the
check report), so editing a folder on disk never changes what learners are
graded against by surprise. A problem's first version is published at once
(unless `JAXJUDGE_PUBLISH_NEW_PROBLEMS=false`) when it is proven: a passing check
is recorded on it (the preview's, or `jaxjudge check` on the same files), or it is
the shipped bank's, whose content hashes ``problems/proven.txt`` lists as
tests/problems/test_bank.py proves them. `jaxjudge publish` stays the override.
"""

from __future__ import annotations

import difflib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import func, select, true
from sqlalchemy.orm import Session, load_only, object_session

from app.core.config import settings
from app.core.db import database_of
from app.data import check_products, course_problems
from app.errors import NotFoundError
from app.models import ProblemRecord, ProblemVersion, User, utcnow
from app.vocabulary import CheckStatus
from grader.config import PROJECT_ROOT
from grader.errors import ProblemError
from grader.judging import samples
from grader.judging.samples import SampleView
from grader.problems import snapshot
from grader.problems.problem import Problem, load_problem, problem_folders
from grader.problems.source import content_hash


class CatalogError(NotFoundError):
    """A catalog request that cannot be carried out, with a message for people."""


@dataclass
class SyncReport:
    added: list[str] = field(default_factory=list)  # "slug v3"
    unchanged: list[str] = field(default_factory=list)
    published: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)  # "slug: why"
    unproven: list[str] = field(default_factory=list)  # new problems left unpublished

    def lines(self) -> list[str]:
        out = [f"new version: {entry}" for entry in self.added]
        out += [f"published: {entry}" for entry in self.published]
        out += [
            f"not published until `jaxjudge check` passes on it: {entry}" for entry in self.unproven
        ]
        out += [f"invalid, not synced: {entry}" for entry in self.invalid]
        out.append(f"{len(self.unchanged)} unchanged")
        return out


def sync(
    *,
    session: Session,
    content_dir: Path | None = None,
    publish: bool = False,
) -> SyncReport:
    """Record a version for every changed problem folder; publish new problems
    (setting) or, with ``publish``, every folder's current version."""
    report = SyncReport()
    for folder in problem_folders(content_dir):
        if course_problems.is_course_slug(folder.name):
            # The bank is trusted code; c<course>-<name> is a course's problem, whose
            # author is not (grader/author_code.py): never taken from the bank's folder.
            report.invalid.append(
                f"{folder.name}: a bank folder's name may not look like a course problem's"
                " (c<digits>-...); rename the folder"
            )
            continue
        try:
            problem = load_problem(folder)
        except ProblemError as error:
            report.invalid.append(f"{folder.name}: {error}")
            continue
        files = snapshot.take(problem)
        digest = content_hash(files)
        version = version_with_hash(session=session, slug=problem.slug, content_hash=digest)
        if version is None:
            number = 1 + (
                session.scalar(
                    select(func.max(ProblemVersion.number)).where(
                        ProblemVersion.slug == problem.slug
                    )
                )
                or 0
            )
            version = ProblemVersion(
                slug=problem.slug,
                number=number,
                content_hash=digest,
                title=problem.config.title,
                files_json=snapshot.encode(files),
            )
            session.add(version)
            session.flush()
            report.added.append(f"{problem.slug} v{number}")
        else:
            report.unchanged.append(problem.slug)
        record = session.get(ProblemRecord, problem.slug)
        if record is None:
            record = ProblemRecord(slug=problem.slug)
            session.add(record)
        first = record.live_version_id is None and settings.publish_new_problems
        if first and not publish and not proven(version):
            report.unproven.append(f"{problem.slug} v{version.number}")
        elif (publish or first) and record.live_version_id != version.id:
            _make_live(
                record, version
            )  # the folder as it is now (a revert maps to its old version)
            report.published.append(f"{problem.slug} v{version.number}")
    session.flush()
    return report


def version_with_hash(*, session: Session, slug: str, content_hash: str) -> ProblemVersion | None:
    """The version of ``slug`` holding exactly these files (a hash names its content)."""
    return session.scalar(
        select(ProblemVersion).where(
            ProblemVersion.slug == slug, ProblemVersion.content_hash == content_hash
        )
    )


# The shipped bank's proof: "slug content-hash" per line, each as
# tests/problems/test_bank.py::test_check_passes proved it; the same file's
# test_the_proofs_name_the_bank_as_it_is keeps the list equal to the bank.
BANK_PROOFS = PROJECT_ROOT / "problems" / "proven.txt"


def bank_proofs() -> frozenset[tuple[str, str]]:
    """The (slug, content hash) pairs of the shipped bank that its check proved."""
    if not BANK_PROOFS.is_file():
        return frozenset()
    lines = BANK_PROOFS.read_text().splitlines()
    pairs = (line.split() for line in lines if line.strip() and not line.startswith("#"))
    return frozenset((pair[0], pair[1]) for pair in pairs if len(pair) == 2)


def proven(version: ProblemVersion) -> bool:
    """Whether a check passed on exactly these files (recorded here, or the bank's)."""
    return (
        version.check_status == CheckStatus.PASSED
        or (version.slug, version.content_hash) in bank_proofs()
    )


def publish_when_proven(*, session: Session, version: ProblemVersion) -> bool:
    """Publish a problem's first version once it is proven (``publish_new_problems``);
    whether it did."""
    record = session.get(ProblemRecord, version.slug)
    if not settings.publish_new_problems or not proven(version):
        return False
    if record is not None and record.live_version_id is not None:
        return False
    publish(session=session, version=version)
    return True


def newest(*, session: Session, slug: str) -> ProblemVersion:
    version = session.scalar(
        select(ProblemVersion)
        .where(ProblemVersion.slug == slug)
        .order_by(ProblemVersion.number.desc())
        .limit(1)
    )
    if version is None:
        raise CatalogError(f"no versions of {slug!r}; run `jaxjudge sync`")
    return version


def _make_live(record: ProblemRecord, version: ProblemVersion) -> None:
    record.live_version_id = version.id
    record.published_at = utcnow()


def publish(*, session: Session, version: ProblemVersion) -> None:
    record = session.get(ProblemRecord, version.slug)
    if record is None:
        record = ProblemRecord(slug=version.slug)
        session.add(record)
    _make_live(record, version)
    session.flush()


def versions(*, session: Session, slug: str) -> list[ProblemVersion]:
    return list(
        session.scalars(
            select(ProblemVersion)
            .where(ProblemVersion.slug == slug)
            .order_by(ProblemVersion.number.desc())
        )
    )


def version_by_number(*, session: Session, slug: str, number: int) -> ProblemVersion | None:
    return session.scalar(
        select(ProblemVersion).where(ProblemVersion.slug == slug, ProblemVersion.number == number)
    )


def version_or_newest(*, session: Session, slug: str, number: int | None) -> ProblemVersion | None:
    """Version ``number`` of ``slug``, or its newest when ``number`` is None."""
    if number is not None:
        return version_by_number(session=session, slug=slug, number=number)
    return next(iter(versions(session=session, slug=slug)), None)


def version_number(*, session: Session, version_id: int | None) -> int | None:
    version = session.get(ProblemVersion, version_id) if version_id is not None else None
    return version.number if version else None


def live_version(*, session: Session, slug: str) -> ProblemVersion | None:
    record = session.get(ProblemRecord, slug)
    if record is None or record.live_version_id is None:
        return None
    return session.get(ProblemVersion, record.live_version_id)


_loaded: dict[str, Problem] = {}
_loaded_lock = threading.Lock()


def problem_of(version: ProblemVersion) -> Problem:
    """The version's files, materialised once per content hash and loaded once per process.
    A course's problem loads untrusted (its author's code runs only in sandboxes,
    grader/author_code.py), kept apart from trusted ones of the same files, and what its
    passing check produced is restored into this machine's caches first (check_products)."""
    trusted = not course_problems.is_course_slug(version.slug)
    key = f"{settings.versions_dir / version.content_hash}|{version.slug}|{trusted}"
    with _loaded_lock:
        problem = _loaded.get(key)
        if problem is None or not problem.folder.is_dir():
            files = snapshot.decode(version.files_json)
            problem = snapshot.materialise(
                version.slug, files, settings.versions_dir, trusted=trusted
            )
            _loaded[key] = problem
    if not trusted:  # what its check produced, never its author's code run again
        _restore_products(version, problem)
    return problem


def _restore_products(version: ProblemVersion, problem: Problem) -> None:
    session = object_session(version)  # detached: nothing restored, grading fails closed
    if session is not None:
        check_products.restore(session=session, version_id=version.id, problem=problem)


def live_problem(*, session: Session, slug: str) -> tuple[ProblemVersion, Problem] | None:
    """The live version of ``slug``, whoever asks: for a person's request use
    ``visible_live_problem``, which hides a course's problems from everyone outside it."""
    version = live_version(session=session, slug=slug)
    return None if version is None else (version, problem_of(version))


def visible_live_problem(
    *, session: Session, slug: str, user: User | None
) -> tuple[ProblemVersion, Problem] | None:
    """The live version of ``slug`` if ``user`` may see the problem (every bank problem; a
    course problem for its course's members and admins), else None: a 404 for the caller."""
    if not course_problems.may_see(session=session, slug=slug, user=user):
        return None
    return live_problem(session=session, slug=slug)


def unknown_problem(*, session: Session, slug: str) -> NotFoundError:
    """The 404 for a slug nobody may see: the closest bank problems by slug, as a
    misspelt command line or magic needs (a course's own problems are never suggested:
    they do not exist outside their course)."""
    slugs = [problem.slug for problem in live_problem_list(session=session)]
    closest = difflib.get_close_matches(slug, slugs, n=3, cutoff=0.6)
    if not closest:  # a word of it, then: "logsumexp" finds stable-logsumexp
        closest = [s for s in slugs if any(len(w) > 3 and w in s for w in slug.split("-"))][:3]
    if closest:
        return NotFoundError(f"Unknown problem {slug!r}. Did you mean {_either(closest)}?")
    return NotFoundError(f"Unknown problem {slug!r}. The problems are listed at /api/problems.")


def _either(slugs: list[str]) -> str:
    quoted = [repr(s) for s in slugs]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def live_problems(
    *, session: Session, course_id: int | None = None, every_course: bool = False
) -> list[tuple[ProblemVersion, Problem]]:
    """Every published bank problem, by track and position; with ``course_id`` that
    course's published problems too, with ``every_course`` every course's (the preparer)."""
    # The columns a listing needs: the files are loaded only if not materialised yet, and
    # the stored samples and check reports (large, per version) only by who reads them.
    rows = session.scalars(
        select(ProblemVersion)
        .join(ProblemRecord, ProblemRecord.live_version_id == ProblemVersion.id)
        .options(
            load_only(
                ProblemVersion.id,
                ProblemVersion.slug,
                ProblemVersion.number,
                ProblemVersion.content_hash,
                ProblemVersion.title,
            )
        )
        .where(
            true()
            if every_course
            else ProblemRecord.course_id.is_(None) | (ProblemRecord.course_id == course_id)
        )
    )
    loaded = [(version, problem_of(version)) for version in rows]
    return sorted(loaded, key=lambda pair: (pair[1].config.track, pair[1].config.position))


# The listing per database (`database_of`) and set of live versions; its folders looked
# at again at most once a second (a stat per problem was 5% of a problem list's time
# under 50 clients, bench/hot_reads.py).
_Listed = tuple[str, tuple[int, ...]]
_listing: dict[_Listed, list[Problem]] = {}
_folders_seen_at: dict[_Listed, float] = {}
FOLDERS_LOOKED_AT_EVERY = 1.0  # seconds


# Built once: every listing asks it.
_BANK_LIVE_VERSION_IDS = select(ProblemRecord.live_version_id).where(
    ProblemRecord.live_version_id.is_not(None), ProblemRecord.course_id.is_(None)
)


def live_problem_list(*, session: Session) -> list[Problem]:
    """The bank's ``live_problems`` without their versions, for listings on every request
    (a course's own problems are never listed here): one query
    of the live version ids, and the problems loaded once per set of live versions."""
    ids = session.scalars(_BANK_LIVE_VERSION_IDS)
    key = (
        database_of(session),
        tuple(sorted(version_id for version_id in ids if version_id is not None)),
    )
    problems = _listing.get(key)
    now = time.monotonic()
    if problems is not None and now - _folders_seen_at.get(key, 0.0) > FOLDERS_LOOKED_AT_EVERY:
        if all(problem.folder.is_dir() for problem in problems):
            _folders_seen_at[key] = now
        else:
            problems = None
    if problems is None:
        problems = [problem for _version, problem in live_problems(session=session)]
        with _loaded_lock:
            _listing.clear()  # a publish replaced the set: the old one is never asked again
            _folders_seen_at.clear()
            _listing[key] = problems
            _folders_seen_at[key] = now
    return problems


def store_samples(version: ProblemVersion, outcome: list[SampleView] | Exception) -> None:
    """Record what the problem page shows of the version's samples, or why it cannot."""
    if isinstance(outcome, Exception):
        version.samples_json, version.samples_error = None, str(outcome) or repr(outcome)
    else:
        version.samples_json, version.samples_error = samples.encode(outcome), None


def stored_samples(version: ProblemVersion) -> list[SampleView] | None:
    """The version's samples as stored; None while its trusted run has not finished."""
    return samples.decode(version.samples_json) if version.samples_json else None


def with_stored_samples(*, session: Session, version_ids: list[int]) -> frozenset[int]:
    """Which of these versions have their samples stored (or known to fail)."""
    return frozenset(
        session.scalars(
            select(ProblemVersion.id).where(
                ProblemVersion.id.in_(version_ids),
                ProblemVersion.samples_json.is_not(None)
                | ProblemVersion.samples_error.is_not(None),
            )
        )
    )


def versions_without_samples(*, session: Session) -> list[ProblemVersion]:
    """Live and newest versions whose samples are neither stored nor known to fail."""
    newest_numbers = (
        select(ProblemVersion.slug, func.max(ProblemVersion.number).label("number"))
        .group_by(ProblemVersion.slug)
        .subquery()
    )
    live = select(ProblemRecord.live_version_id).where(ProblemRecord.live_version_id.is_not(None))
    newest_ids = select(ProblemVersion.id).join(
        newest_numbers,
        (newest_numbers.c.slug == ProblemVersion.slug)
        & (newest_numbers.c.number == ProblemVersion.number),
    )
    return list(
        session.scalars(
            select(ProblemVersion).where(
                ProblemVersion.samples_json.is_(None),
                ProblemVersion.samples_error.is_(None),
                ProblemVersion.id.in_(live) | ProblemVersion.id.in_(newest_ids),
            )
        )
    )
