"""The course's CSV exports: the grade book and every submit. Cells a spreadsheet
would run as a formula are quoted; the web adds a byte-order mark for Excel."""

from __future__ import annotations

import csv
import io

from sqlalchemy.orm import Session

from app.data import courses
from app.models import Course
from app.reports.gradebook import Matrix
from app.reports.timeline import course_submits


def spreadsheet_safe(value: object) -> str:
    """Spreadsheets execute cells starting with = + - @ as formulas: quote them."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def matrix_csv(matrix: Matrix) -> str:
    """One row per learner; per assigned problem a score (0-1) and a late flag."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    header = ["learner"]
    for assignment in matrix.problems:
        header += [f"{assignment.problem} score", f"{assignment.problem} late"]
    writer.writerow(header)
    for learner in matrix.learners:
        row = [spreadsheet_safe(learner.name)]
        for assignment in matrix.problems:
            cell = matrix.cell(learner, assignment.problem)
            row += [f"{cell.best_score:.2f}", "yes" if cell.late else "no"]
        writer.writerow(row)
    return out.getvalue()


SUBMISSION_COLUMNS = (
    "submission", "learner", "problem", "submitted_at_utc", "late", "status", "verdict",
    "score", "problem_version", "diagnosis", "code",
)  # fmt: skip


def submissions_csv(*, session: Session, course: Course) -> str:
    """Every submit of the course's learners on its assigned problems, oldest first."""
    names = {
        learner.id: learner.name for learner in courses.learners_of(session=session, course=course)
    }
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(SUBMISSION_COLUMNS)
    for entry in course_submits(session, course, None, newest_first=False):
        submission, number = entry.submission, entry.version
        writer.writerow(
            [
                submission.id,
                spreadsheet_safe(names[submission.user_id]),
                submission.problem,
                submission.created_at.isoformat(timespec="seconds"),
                "yes" if entry.late else "no",
                submission.status,
                entry.verdict or "",
                "" if entry.score is None else f"{entry.score:.2f}",
                "" if number is None else number,
                spreadsheet_safe(entry.report.diagnosis if entry.report else ""),
                spreadsheet_safe(submission.code),
            ]
        )
    return out.getvalue()
