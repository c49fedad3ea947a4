"""What the parent asks a child to run, and what comes back (plain data)."""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.cases import Case
from grader.trees import Output
from grader.verdicts import Verdict


@dataclass(frozen=True)
class Solution:
    name: str
    source: str
    filename: str = "submission.py"


@dataclass(frozen=True)
class Job:
    """One child's work. ``cases`` run first; ``hidden_cases`` reach the child
    only after it has reported every one of ``cases`` (a learner's submit:
    samples, then hidden cases). A job with hidden cases has one solution."""

    entry_point: str
    n_outputs: int
    solutions: tuple[Solution, ...]
    cases: tuple[Case, ...]
    wall_seconds: float
    memory_mb: int
    device: str = "cpu"
    hidden_cases: tuple[Case, ...] = ()
    compiled: bool = False  # whole-function jax.jit where it traces (grader/protocol.py)
    tree_outputs: frozenset[int] = frozenset()  # outputs returned as pytrees (grader/trees.py)
    # Requirements' evidence (grader/requirements.py): trace each solution's primitives,
    # compile it at each memory probe's shapes.
    trace_structure: bool = False
    memory_probes: tuple[Case, ...] = ()

    @property
    def analysed(self) -> bool:
        return self.trace_structure or bool(self.memory_probes)

    def __post_init__(self) -> None:
        if self.hidden_cases and len(self.solutions) != 1:
            raise ValueError("a job with hidden cases runs exactly one solution")

    @property
    def all_cases(self) -> tuple[Case, ...]:
        return self.cases + self.hidden_cases


@dataclass
class CaseOutcome:
    """One case as the child reported it: outputs (each an array or a reason it is
    not one), or an error with the verdict the child proposed and the
    exception's class name."""

    seconds: float
    outputs: list[Output] | None = None
    error_verdict: Verdict | None = None
    message: str = ""
    exception: str = ""


@dataclass(frozen=True)
class Analysis:
    """What the child found of a solution before running it: its primitives (None:
    not traced), the temporary bytes of its compilation at each memory probe (None: not
    measured), and the error that stopped either, if one did."""

    primitives: frozenset[str] | None = None
    temp_bytes: tuple[int, ...] | None = None
    error: str = ""


@dataclass
class SolutionOutcome:
    error_verdict: Verdict | None = None
    message: str = ""
    exception: str = ""
    cases: dict[int, CaseOutcome] = field(default_factory=dict)
    analysis: Analysis | None = None


@dataclass
class RunOutcome:
    solutions: list[SolutionOutcome]
    stdout: str = ""  # printed before any hidden input reached the child
    stdout_truncated: bool = False
    hidden_output: str = ""  # printed once hidden inputs were there: never shown to learners
    hidden_started: bool = False  # the hidden cases' inputs were sent to the child
    timed_out: bool = False
    output_limit_hit: bool = False
    memory_killed: bool = False  # the cgroup's memory limit killed a process
    killed_from_outside: bool = False  # SIGKILL that no limit of ours sent
    finished: bool = False  # the child sent DONE
    exit_status: int | None = None
    protocol_error: str | None = None
    startup_error: str | None = None
    backend: str | None = None
    wall_seconds: float = 0.0
