"""The platform's errors for people: each a one-sentence message and the HTTP status it
means. Data functions raise them; app/server/error_handlers.py maps them to answers once (JSON under
/api/, a page otherwise); a page that shows the error beside its form catches it."""

from __future__ import annotations


class DomainError(Exception):
    """A request that cannot be carried out, with a message for people."""

    status = 400


class InvalidInputError(DomainError):
    """The input breaks a rule (a name, a password, a date)."""

    status = 400


class ForbiddenError(DomainError):
    """The caller may not do this (their role, or their part in a course)."""

    status = 403


class NotFoundError(DomainError):
    """The thing does not exist for this caller."""

    status = 404


class ConflictError(DomainError):
    """The thing's state forbids it now (a regrade still running, already applied)."""

    status = 409


class TooManyError(DomainError):
    """A cap is reached (submissions waiting, submits per hour, wrong join codes);
    ``retry_after``: seconds until it may be tried again, where that is known."""

    status = 429

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def first_line(error: Exception) -> str:
    """An exception said in one short line (for logs and 503 reasons), never a traceback."""
    return str(error).strip().splitlines()[0][:200] if str(error).strip() else type(error).__name__
