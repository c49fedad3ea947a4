"""The course's CSV exports: the grade book (generic, Canvas and Moodle layouts) with its
companion (where each row's ids come from, and those withheld: app/reports/export_ids.py),
every submit, and the overrides' audit trail. Cells a spreadsheet would run as a
formula are quoted; the web adds a byte-order mark for Excel."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.data import catalog, courses, overrides
from app.errors import InvalidInputError
from app.models import Course
from app.reports import export_ids
from app.reports.gradebook import Matrix, grade_matrix
from app.reports.timeline import course_submits


def spreadsheet_safe(value: object) -> str:
    """Spreadsheets execute cells starting with = + - @ as formulas: quote them."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


@dataclass(frozen=True)
class Person:
    """What an LMS or a registrar matches a row on: the ids as exported, a shared one
    blank (app/reports/export_ids.py)."""

    name: str
    display_name: str
    email: str
    student_id: str


LAYOUTS = ("generic", "canvas", "moodle")
IDS_COLUMNS = ("user", "display_name", "id", "value", "source", "exported")


def people(*, session: Session, course: Course, matrix: Matrix) -> dict[int, Person]:
    keys = export_ids.keys_of(session=session, course=course, learners=matrix.learners)

    def exported(user_id: int, column: str) -> str:
        key = keys[user_id].get(column)
        return "" if key is None else key.exported

    return {
        u.id: Person(
            u.name, u.display_name or u.name, exported(u.id, "email"), exported(u.id, "student_id")
        )
        for u in matrix.learners
    }


def ids_csv(*, session: Session, course: Course) -> str:
    """The grade exports' companion: each learner's student id and email as the exports
    would carry them, where each came from (the instructor's mapping, the LMS, or the
    learner: unverified), and whether it is exported or withheld (the same in every
    layout)."""
    learners = courses.learners_of(session=session, course=course)
    keys = export_ids.keys_of(session=session, course=course, learners=learners)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(IDS_COLUMNS)
    for user in learners:
        for column, label in export_ids.COLUMNS.items():
            if (key := keys[user.id].get(column)) is not None:
                row = [user.name, user.display_name or user.name, label, key.value, key.source,
                       key.fate]  # fmt: skip
                writer.writerow([spreadsheet_safe(value) for value in row])
    return out.getvalue()


def grades_csv(*, session: Session, course: Course, layout: str = "generic") -> str:
    """The course's grade book as ``matrix_csv`` writes it, in one of ``LAYOUTS``."""
    if layout not in LAYOUTS:
        raise InvalidInputError(f"The layout is one of {', '.join(LAYOUTS)}.")
    matrix = grade_matrix(session=session, course=course)
    titles = {
        p.slug: p.config.title
        for _version, p in catalog.live_problems(session=session, course_id=course.id)
    }
    return matrix_csv(matrix, people(session=session, course=course, matrix=matrix), titles, layout)


def _points(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def matrix_csv(
    matrix: Matrix, who: dict[int, Person], titles: dict[str, str], layout: str = "generic"
) -> str:
    """The grade book for a spreadsheet or an LMS's import, in points.

    ``generic``: user name, display name, email, student id; per assignment the raw
    points (automatic and rubric combined, before the late policy) and the final ones,
    a late flag, the override's reason, then the automatic and rubric points of the
    submit that gave the final points (rubric empty: not graded by hand); the total. ``canvas``:
    Canvas's gradebook layout (Student, ID, SIS User ID, SIS Login ID, Section, then
    one column per assignment and a "Points Possible" row; Canvas matches rows on the
    SIS ids and ignores its read-only Final Points). ``moodle``: the columns Moodle's
    CSV import maps (ID number, email address, one per grade item); Moodle computes
    its own course total, so none is sent."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    # An author's title heads a column: it is made as safe as any cell.
    names = [
        spreadsheet_safe(f"{titles.get(a.problem, a.problem)} ({a.problem})")
        for a in matrix.problems
    ]
    if layout == "canvas":
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *names,
                         "Final Points"])  # fmt: skip
        writer.writerow(["Points Possible", "", "", "", "",
                         *[_points(a.max_points) for a in matrix.problems],
                         _points(matrix.total_possible())])  # fmt: skip
    elif layout == "moodle":
        writer.writerow(["First name", "Last name", "ID number", "Email address", "Username",
                         *[f"{n} (Real)" for n in names]])  # fmt: skip
    else:
        header = ["user", "display_name", "email", "student_id"]
        for a in matrix.problems:
            header += [f"{a.problem} raw", f"{a.problem} final", f"{a.problem} late",
                       f"{a.problem} override", f"{a.problem} automatic", f"{a.problem} rubric"]  # fmt: skip
        writer.writerow([*header, f"total (of {_points(matrix.total_possible())})"])
    for learner in matrix.learners:
        person = who[learner.id]
        finals = [_points(matrix.points(learner, a)) for a in matrix.problems]
        if layout == "canvas":
            row = [person.display_name, "", person.student_id, person.email, "", *finals,
                   _points(matrix.total(learner))]  # fmt: skip
        elif layout == "moodle":
            first, _, last = person.display_name.partition(" ")
            row = [first, last, person.student_id, person.email, person.name, *finals]
        else:
            row = [person.name, person.display_name, person.email, person.student_id]
            for a, final in zip(matrix.problems, finals, strict=True):
                cell = matrix.cell(learner, a.problem)
                reason = cell.override.reason if cell.override else ""
                rubric = "" if cell.manual_points is None else _points(cell.manual_points)
                row += [_points(cell.best_score * a.max_points), final,
                        "yes" if cell.late else "no", reason,
                        _points(cell.automatic_score * a.max_points), rubric]  # fmt: skip
            row.append(_points(matrix.total(learner)))
        writer.writerow([spreadsheet_safe(value) for value in row])
    return out.getvalue()


SUBMISSION_COLUMNS = (
    "submission", "learner", "problem", "submitted_at_utc", "counts", "late", "kept_percent",
    "status", "verdict", "score", "problem_version", "diagnosis", "code",
)  # fmt: skip
OVERRIDE_COLUMNS = (
    "learner", "problem", "old_score", "new_score", "reason", "by", "at_utc",
)  # fmt: skip


def submissions_csv(*, session: Session, course: Course) -> str:
    """Every submit of the course's learners on its assigned problems, oldest first."""
    names = {
        learner.id: learner.name for learner in courses.learners_of(session=session, course=course)
    }
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(SUBMISSION_COLUMNS)
    for entry in course_submits(session=session, course=course, user_ids=None, newest_first=False):
        submission, number = entry.submission, entry.version
        writer.writerow(
            [
                submission.id,
                spreadsheet_safe(names[submission.user_id]),
                submission.problem,
                submission.created_at.isoformat(timespec="seconds"),
                "yes" if entry.standing.counts else f"no: {entry.standing.why_not}",
                "yes" if entry.late else "no",
                _points(entry.standing.factor * 100) if entry.standing.counts else "",
                submission.status,
                entry.verdict or "",
                "" if entry.score is None else f"{entry.score:.2f}",
                "" if number is None else number,
                spreadsheet_safe(entry.report.diagnosis if entry.report else ""),
                spreadsheet_safe(submission.code),
            ]
        )
    return out.getvalue()


def overrides_csv(*, session: Session, course: Course) -> str:
    """The audit trail of score overrides: every one, oldest first (scores 0-1 of the
    assignment's points; an empty new score is an override taken back)."""
    names = {
        user.id: user.name for user, _role in courses.members_of(session=session, course=course)
    }
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(OVERRIDE_COLUMNS)
    for row in overrides.history(session=session, course=course):
        writer.writerow(
            [
                spreadsheet_safe(names.get(row.user_id, f"user {row.user_id}")),
                row.problem,
                "" if row.old_score is None else f"{row.old_score:.4f}",
                "" if row.score is None else f"{row.score:.4f}",
                spreadsheet_safe(row.reason),
                spreadsheet_safe(row.created_by_name),
                row.created_at.isoformat(timespec="seconds"),
            ]
        )
    return out.getvalue()
