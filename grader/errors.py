"""Errors meant for people: one sentence naming the file and the field."""

from __future__ import annotations

from pathlib import Path


class ProblemError(Exception):
    """A problem folder is broken; the message names the file and the field."""

    def __init__(
        self, path: Path, field: str | None, message: str, *, line: int | None = None
    ) -> None:
        self.path = path
        self.field = field
        self.message = message
        self.line = line  # of the file, where the error's place in it is known
        super().__init__(str(self))

    def __str__(self) -> str:
        where = _display(self.path) + (f" line {self.line}" if self.line else "")
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class CheckResultsMissingError(Exception):
    """An untrusted problem's author code would have to run outside a check: what its
    check produced (cases, expected outputs) is not here. Nothing is run; the instructor
    runs the check again (docs/security.md)."""

    def __init__(self, slug: str, what: str = "") -> None:
        detail = f" ({what})" if what else ""
        super().__init__(
            f"This problem's check results are missing{detail}: its instructor must run"
            f" the check again. ({slug})"
        )


class DerivationRefusedError(CheckResultsMissingError):
    """An untrusted problem's expected outputs on a device or runtime its check did not
    run on were computed (grader/expected.py ``derive``) and refused: its reference does
    not reproduce its check's outputs there. Nothing is kept; it is not graded there."""

    def __init__(self, slug: str, device: str, why: str) -> None:
        Exception.__init__(
            self,
            f"This problem cannot be graded on device {device!r}: {why}. Its instructor"
            f" must run the check again on this runtime. ({slug})",
        )


class UsageError(Exception):
    """The command was misused (unknown problem, unreadable file)."""


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
