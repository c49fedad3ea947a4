"""CSV files instructors upload (extensions, student ids), for pages and API alike:
their size bound, which the body limit (app/core/body_limits_and_headers.py) enforces
before they are read, their decoding, and their rows with the lines they stand on."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from app.errors import InvalidInputError

CSV_LIMIT_ROWS = 5_000
# CSV_LIMIT_ROWS rows are far less than this.
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


@dataclass(frozen=True)
class CsvRows:
    """An upload's header (its first row that is not blank) and each later row that is
    not blank, with its line in the file, for reporting bad rows where people look."""

    header: list[str]
    rows: list[tuple[int, list[str]]]

    def records(self) -> list[tuple[int, dict[str, str]]]:
        """Each row by its header's names (stripped, lower case); a missing cell is ""."""
        names = [name.strip().lower() for name in self.header]
        return [(line, dict(zip(names, row, strict=False))) for line, row in self.rows]


def csv_rows(text: str) -> CsvRows:
    """The rows of an uploaded CSV, at most CSV_LIMIT_ROWS of them; one the csv module
    cannot read is an InvalidInputError naming its line."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    header: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    try:
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if header is None:
                header = row
                continue
            if len(rows) >= CSV_LIMIT_ROWS:
                raise InvalidInputError(f"Nothing was changed: at most {CSV_LIMIT_ROWS} rows.")
            rows.append((reader.line_num, row))
    except csv.Error as error:
        raise InvalidInputError(
            f"Nothing was changed: line {reader.line_num} of the CSV cannot be read ({error})."
        ) from None
    return CsvRows(header or [], rows)
