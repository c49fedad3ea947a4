"""What the parent asks a child to run, and what comes back (plain data)."""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.cases import Case
from grader.child.verdicts import Verdict
from grader.judging.drawn_tests import AuthorTestDraw
from grader.judging.report import CaseReport
from grader.judging.trees import Output
from grader.problems.problem import Problem


@dataclass(frozen=True)
class Solution:
    name: str
    source: str
    filename: str = "submission.py"


@dataclass(frozen=True)
class JobPart:
    """One function a job calls: the cases of part ``name`` (None: the problem's one
    function) call ``entry_point`` and get ``n_outputs`` outputs back."""

    name: str | None
    entry_point: str
    n_outputs: int
    tree_outputs: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Job:
    """One child's work. ``cases`` run first; ``hidden_cases`` reach the child
    only after it has reported every one of ``cases`` (a learner's submit:
    samples and memory probes, then hidden cases). A job with hidden cases has
    one solution.

    ``analysed``: the child sends one ANALYSIS frame per program it compiles (its
    primitives and temporary bytes, grader/judging/requirements.py) and each case names the
    program that answered it. ``compile_first``: that many leading cases are compiled
    even in an op-by-op run (a trusted run's samples and probes, for their analysis)."""

    entry_point: str
    n_outputs: int
    solutions: tuple[Solution, ...]
    cases: tuple[Case, ...]
    wall_seconds: float
    memory_mb: int
    device: str = "cpu"
    hidden_cases: tuple[Case, ...] = ()
    compiled: bool = False  # whole-function jax.jit where it traces (grader/child/protocol.py)
    tree_outputs: frozenset[int] = (
        frozenset()
    )  # outputs returned as pytrees (grader/judging/trees.py)
    analysed: bool = False
    compile_first: int = 0
    # CPU time the whole job may use, every process and thread of its sandbox together
    # (grader/running/timing.py); None: the wall clock is the only limit (trusted runs).
    cpu_seconds: float | None = None
    # The functions of a problem with [[parts]]; empty: the one of entry_point above.
    parts: tuple[JobPart, ...] = ()
    # The problem's author tests (grader/judging/drawn_tests.py): their calls are the last
    # of ``cases`` (visible tests) and of ``hidden_cases`` (hidden ones); kept, not judged.
    tests: AuthorTestDraw | None = None

    @property
    def test_calls(self) -> dict[int, tuple[int, int]]:
        """The positions of the tests' calls in ``all_cases``: (test index, call index)."""
        if self.tests is None:
            return {}
        first = len(self.cases) - len(self.tests.calls(hidden=False))
        hidden = len(self.all_cases) - len(self.tests.calls(hidden=True))
        return self.tests.positions(first, hidden if self.hidden_cases else None)

    @property
    def part_specs(self) -> tuple[JobPart, ...]:
        """Every function the job calls, the first being ``entry_point``'s."""
        return self.parts or (JobPart(None, self.entry_point, self.n_outputs, self.tree_outputs),)

    def part_index(self, case: Case) -> int:
        """Which of ``part_specs`` answers ``case``."""
        if case.part is None:
            return 0
        for index, part in enumerate(self.part_specs):
            if case.part in (part.name, part.entry_point):
                return index
        raise ValueError(f"case {case.name!r} names a part the job does not call")

    def __post_init__(self) -> None:
        if self.hidden_cases and len(self.solutions) != 1:
            raise ValueError("a job with hidden cases runs exactly one solution")

    @property
    def all_cases(self) -> tuple[Case, ...]:
        return self.cases + self.hidden_cases


def job_for(
    problem: Problem,
    *,
    solutions: tuple[Solution, ...],
    cases: tuple[Case, ...],
    wall_seconds: float,
    memory_mb: int,
    device: str,
    compiled: bool,
    hidden_cases: tuple[Case, ...] = (),
    cpu_seconds: float | None = None,
    compile_first: int = 0,
) -> Job:
    """The one construction of a ``Job``: what every job takes from its problem (entry
    point, outputs, which are trees, whether programs are analysed) and what its caller
    decides (a learner's submit in grader/grade.py, a trusted run in grader/expected.py)."""
    parts = tuple(
        JobPart(
            part.name if problem.has_parts else None,
            part.entry_point,
            len(part.outputs),
            part.tree_outputs,
        )
        for part in problem.parts
    )
    return Job(
        entry_point=parts[0].entry_point,
        n_outputs=parts[0].n_outputs,
        tree_outputs=parts[0].tree_outputs,
        parts=parts if problem.has_parts else (),
        analysed=problem.has_requirements,
        solutions=solutions,
        cases=cases,
        hidden_cases=hidden_cases,
        wall_seconds=wall_seconds,
        cpu_seconds=cpu_seconds,
        memory_mb=memory_mb,
        device=device,
        compiled=compiled,
        compile_first=compile_first,
    )


@dataclass(frozen=True)
class Judged:
    """A case compared as soon as it arrived (grader/judging/judge.py): its report, and the
    known mistakes whose outputs it matches, so that its arrays need not be kept."""

    report: CaseReport
    mistakes: frozenset[str] = frozenset()
    # A wrong answer's outputs, kept only while the known mistakes' outputs are not
    # ready (a first start): matched once they are (grader/grade.py ``grade``).
    wrong_outputs: list[Output] | None = None


@dataclass
class CaseOutcome:
    """One case as the child reported it: outputs (each an array or a reason it is
    not one), or an error with the verdict the child proposed and the
    exception's class name; the program that answered it (None: not analysed);
    once judged, its report instead of its outputs."""

    seconds: float
    outputs: list[Output] | None = None
    error_verdict: Verdict | None = None
    message: str = ""
    exception: str = ""
    program: int | None = None
    judged: Judged | None = None


@dataclass(frozen=True)
class Program:
    """One program a solution ran its cases with, as the child analysed it: the
    primitives of its jaxpr after dead-code elimination, with how often each occurs
    (nested ones also as ``outer>inner``), and the temporary bytes XLA's memory
    analysis gives for its executable. ``primitives`` None: the solution ran op by
    op (it could not be traced, ``error`` says why). ``hidden``: analysed after the
    hidden inputs reached the child (nothing of it may reach the learner but which
    rule it broke)."""

    primitives: dict[str, int] | None = None
    temp_bytes: int | None = None
    error: str = ""
    hidden: bool = False


@dataclass
class SolutionOutcome:
    error_verdict: Verdict | None = None
    message: str = ""
    exception: str = ""
    cases: dict[int, CaseOutcome] = field(default_factory=dict)
    programs: list[Program] = field(default_factory=list)


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
    cpu_seconds: float | None = None  # the sandbox's CPU time from the job's delivery on
    time_limit: str | None = None  # which limit stopped it: "cpu" or "wall"
    starved: bool = False  # stopped by a time limit while the machine was overloaded
    confirmed: bool = False  # this outcome is a time-out's confirmation on a quiet child
