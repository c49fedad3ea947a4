"""CSV files instructors upload (extensions, student ids), for pages and API alike:
their size bound, which the body limit (app/core/http_guards.py) enforces before
they are read, and their decoding."""

from __future__ import annotations

from app.errors import InvalidInputError

# 5,000 rows, the uploads' own cap, are far less than this.
CSV_UPLOAD_BYTES = 1_000_000


def csv_text(data: bytes) -> str:
    """The upload as text: UTF-8, a byte-order mark (as spreadsheets save) dropped."""
    if len(data) > CSV_UPLOAD_BYTES:
        raise InvalidInputError(
            f"Nothing was changed: a CSV is at most {CSV_UPLOAD_BYTES // 1000} kB."
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInputError("Nothing was changed: the CSV is not UTF-8 text.") from None
