"""What the parent asks a child to run, and what comes back (plain data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grader.cases import Case
from grader.verdicts import Verdict


@dataclass(frozen=True)
class Solution:
    name: str
    source: str
    filename: str = "submission.py"


@dataclass(frozen=True)
class Job:
    entry_point: str
    n_outputs: int
    solutions: tuple[Solution, ...]
    cases: tuple[Case, ...]
    wall_seconds: float
    memory_mb: int
    device: str = "cpu"


@dataclass
class CaseOutcome:
    """One case as the child reported it: outputs (each an array or a reason it is
    not one), or an error with the verdict the child proposed."""

    seconds: float
    outputs: list[np.ndarray[Any, Any] | str] | None = None
    error_verdict: Verdict | None = None
    message: str = ""


@dataclass
class SolutionOutcome:
    error_verdict: Verdict | None = None
    message: str = ""
    cases: dict[int, CaseOutcome] = field(default_factory=dict)


@dataclass
class RunOutcome:
    solutions: list[SolutionOutcome]
    stdout: str = ""
    stdout_truncated: bool = False
    timed_out: bool = False
    output_limit_hit: bool = False
    memory_killed: bool = False  # the cgroup's memory limit killed a process
    finished: bool = False  # the child sent DONE
    exit_status: int | None = None
    protocol_error: str | None = None
    startup_error: str | None = None
    backend: str | None = None
    wall_seconds: float = 0.0
