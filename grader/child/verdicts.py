"""The grading vocabulary: verdicts in display order (the most severe first), with
the label people read and the tone pages colour them by; and what a grading runs."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    INTERNAL_ERROR = "internal_error"
    SYNTAX_ERROR = "syntax_error"
    MISSING_ENTRY_POINT = "missing_entry_point"
    TIME_LIMIT_EXCEEDED = "time_limit_exceeded"
    MEMORY_LIMIT_EXCEEDED = "memory_limit_exceeded"
    OUTPUT_LIMIT_EXCEEDED = "output_limit_exceeded"
    RUNTIME_ERROR = "runtime_error"
    # Right or wrong outputs, but not built as the problem asks (grader/judging/requirements.py).
    REQUIREMENT_NOT_MET = "requirement_not_met"
    WRONG_ANSWER = "wrong_answer"
    ACCEPTED = "accepted"
    # A case that never ran because the submission had already failed in a
    # way that stopped it (a timeout kills the whole process).
    SKIPPED = "skipped"


HEADLINES: dict[Verdict, str] = {
    Verdict.ACCEPTED: "Accepted",
    Verdict.WRONG_ANSWER: "Wrong answer",
    Verdict.REQUIREMENT_NOT_MET: "Requirement not met",
    Verdict.RUNTIME_ERROR: "Runtime error",
    Verdict.TIME_LIMIT_EXCEEDED: "Time limit exceeded",
    Verdict.MEMORY_LIMIT_EXCEEDED: "Memory limit exceeded",
    Verdict.OUTPUT_LIMIT_EXCEEDED: "Output limit exceeded",
    Verdict.SYNTAX_ERROR: "Syntax error",
    Verdict.MISSING_ENTRY_POINT: "Missing entry point",
    Verdict.INTERNAL_ERROR: "Internal error",
    Verdict.SKIPPED: "Skipped",
}


def headline(verdict: Verdict) -> str:
    return HEADLINES[verdict]


# How pages colour a verdict (app/web builds its CSS classes from this).
TONES: dict[Verdict, str] = {
    Verdict.ACCEPTED: "good",
    Verdict.WRONG_ANSWER: "bad",
    Verdict.REQUIREMENT_NOT_MET: "bad",
    Verdict.RUNTIME_ERROR: "bad",
    Verdict.TIME_LIMIT_EXCEEDED: "bad",
    Verdict.MEMORY_LIMIT_EXCEEDED: "bad",
    Verdict.OUTPUT_LIMIT_EXCEEDED: "bad",
    Verdict.SYNTAX_ERROR: "bad",
    Verdict.MISSING_ENTRY_POINT: "bad",
    Verdict.INTERNAL_ERROR: "warn",
    Verdict.SKIPPED: "muted",
}


class Mode(StrEnum):
    """What a grading runs: ``run`` the samples only (not an attempt), ``submit`` all."""

    RUN = "run"
    SUBMIT = "submit"
