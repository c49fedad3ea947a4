"""Frames from an untrusted child, validated into a ``RunOutcome`` (parent side).

Every frame is checked against the shape its kind allows (exact keys, exact
types, bounded text, indices in range) and against the job's order: HELLO
first, each case at most once, SAMPLES_DONE only once every first case is in,
a hidden case only after its inputs were sent, nothing after DONE. Anything
else is a ``ProtocolError``: the submission's failure ("interfered with the
result channel"), never the grader's. The reader thread survives every input:
whatever goes wrong while reading becomes ``outcome.protocol_error``.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

import numpy as np

from grader.child import protocol
from grader.child.protocol import Frame, Kind, ProtocolError
from grader.child.verdicts import Verdict
from grader.judging.job import CaseOutcome, Job, JobPart, Program, RunOutcome, SolutionOutcome
from grader.judging.report import CaseReport
from grader.judging.trees import Output, OutputTree

log = logging.getLogger("jaxjudge.frames")


class CaseListener(Protocol):
    """What the frame reader hands every accepted case to as it arrives
    (grader/judging/judge.py's ``CaseJudge`` in a grading)."""

    def __call__(self, position: int, outcome: CaseOutcome) -> CaseOutcome:
        """The case at ``position`` in the job, turned into what is kept of it."""
        ...

    def samples_done(self, reports: list[CaseReport]) -> None:
        """Every first-phase case is in (their reports), before any hidden input is sent."""
        ...


# What a child may propose; accepted, wrong answer and the rest are the parent's to decide.
CHILD_VERDICTS = frozenset(
    {
        Verdict.RUNTIME_ERROR,
        Verdict.MEMORY_LIMIT_EXCEEDED,
        Verdict.OUTPUT_LIMIT_EXCEEDED,
        Verdict.SYNTAX_ERROR,
        Verdict.MISSING_ENTRY_POINT,
    }
)
MAX_TEXT = 16_000
MAX_NAME = 100
_KEYS: dict[Kind, frozenset[str]] = {
    Kind.HELLO: frozenset({"backend", "pid"}),
    Kind.SOLUTION_ERROR: frozenset({"solution", "verdict", "exception", "message"}),
    Kind.CASE_RESULT: frozenset({"solution", "case", "program", "seconds", "outputs"}),
    Kind.CASE_ERROR: frozenset(
        {"solution", "case", "program", "seconds", "verdict", "exception", "message"}
    ),
    Kind.ANALYSIS: frozenset({"solution", "program", "primitives", "temp_bytes", "error"}),
    Kind.SAMPLES_DONE: frozenset(),
    Kind.DONE: frozenset(),
}


def _is_invalid(spec: Any) -> bool:
    return type(spec) is dict and set(spec) == {"invalid"}


def _primitives(value: Any) -> dict[str, int] | None:
    """``[[name, count], ...]``: bounded names, bounded counts, each name once."""
    if value is None:
        return None
    if type(value) is not list or len(value) > protocol.MAX_PRIMITIVES:
        raise ProtocolError("primitives is not a bounded list")
    counts: dict[str, int] = {}
    for entry in value:
        if (
            type(entry) is not list
            or len(entry) != 2
            or type(entry[0]) is not str
            or len(entry[0]) > protocol.MAX_PRIMITIVE_CHARS
            or type(entry[1]) is not int
            or not 0 < entry[1] <= protocol.MAX_PRIMITIVE_COUNT
            or entry[0] in counts
        ):
            raise ProtocolError("primitives is not a list of distinct [name, count] pairs")
        counts[entry[0]] = entry[1]
    return counts


def _program(meta: dict[str, Any], hidden: bool) -> Program:
    temp = meta["temp_bytes"]
    if temp is not None and (type(temp) is not int or not 0 <= temp < 1 << 50):
        raise ProtocolError("temp_bytes is not a byte count")
    return Program(
        primitives=_primitives(meta["primitives"]),
        temp_bytes=temp,
        error=_text(meta, "error", 2000),
        hidden=hidden,
    )


def _keys(frame: Frame) -> None:
    allowed = _KEYS.get(frame.kind)
    if allowed is None:
        raise ProtocolError(f"a child cannot send a {frame.kind.name} frame")
    if set(frame.meta) != allowed:
        raise ProtocolError(f"{frame.kind.name} frame has missing or unknown fields")


def _index(meta: dict[str, Any], key: str, limit: int) -> int:
    value = meta[key]
    if type(value) is not int or not 0 <= value < limit:
        raise ProtocolError(f"{key} index out of range")
    return value


def _text(meta: dict[str, Any], key: str, limit: int = MAX_TEXT) -> str:
    value = meta[key]
    if type(value) is not str or len(value) > limit:
        raise ProtocolError(f"{key} is not text of at most {limit} characters")
    return value


def _seconds(meta: dict[str, Any]) -> float:
    value = meta["seconds"]
    if type(value) not in (int, float) or not 0 <= value < 1e6:
        raise ProtocolError("seconds is not a plausible duration")
    return float(value)


def _verdict(meta: dict[str, Any]) -> Verdict:
    try:
        verdict = Verdict(_text(meta, "verdict", MAX_NAME))
    except ValueError:
        raise ProtocolError("unknown verdict from child") from None
    if verdict not in CHILD_VERDICTS:
        raise ProtocolError(f"a child cannot report {verdict.value}")
    return verdict


class FrameCollector:
    """Accepts frames for one job, in order, into ``outcome``."""

    def __init__(self, max_elements: int) -> None:
        self.job: Job | None = None
        self.max_elements = max_elements
        self.judge: CaseListener | None = None
        self.outcome = RunOutcome(solutions=[])
        self.hello = threading.Event()
        self.samples_done = threading.Event()  # the child may now receive hidden cases
        self.ended = threading.Event()  # the result channel closed (the child is gone)
        self.done = threading.Event()  # DONE arrived: every case is in
        self._hidden_sent = False
        self._lock = threading.Lock()  # a frame is accepted whole before a snapshot is taken

    def snapshot(self) -> RunOutcome:
        """A copy of the outcome as it stands, while frames may still arrive."""
        with self._lock:
            return copy.deepcopy(self.outcome)

    def started(self, timeout: float) -> bool:
        """Wait for HELLO, but not for a child that has already gone."""
        deadline = time.monotonic() + timeout
        while not self.hello.is_set() and not self.ended.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.hello.wait(min(remaining, 0.05))
        return self.hello.is_set()

    def bind(self, job: Job, judge: CaseListener | None = None) -> None:
        """Called before the job is written: from here on frames refer to it. ``judge``
        compares each case the moment it is accepted and keeps its report instead of
        its arrays (grader/judging/judge.py): a grading then holds one case's outputs at a time."""
        self.outcome.solutions = [SolutionOutcome() for _ in job.solutions]
        self.judge = judge
        self.job = job

    def hidden_sent(self) -> None:
        """Called right before the hidden cases are written to the child."""
        self._hidden_sent = True
        self.outcome.hidden_started = True

    def accept(self, frame: Frame) -> None:
        with self._lock:
            self._accept(frame)

    def _accept(self, frame: Frame) -> None:
        outcome = self.outcome
        if outcome.finished:
            raise ProtocolError("data on the result channel after the run finished")
        _keys(frame)
        if frame.kind is Kind.HELLO:
            if self.hello.is_set():
                raise ProtocolError("second HELLO")
            outcome.backend = _text(frame.meta, "backend", 32)
            if type(frame.meta["pid"]) is not int:
                raise ProtocolError("pid is not an integer")
            self.hello.set()
            return
        job = self.job
        if not self.hello.is_set() or job is None:
            raise ProtocolError(f"unexpected {frame.kind.name} frame")
        if frame.kind is Kind.DONE:
            outcome.finished = True
            self.done.set()
            return
        if frame.kind is Kind.SAMPLES_DONE:
            self._accept_samples_done(job)
            return
        solution = outcome.solutions[_index(frame.meta, "solution", len(job.solutions))]
        if frame.kind is Kind.SOLUTION_ERROR:
            if solution.error_verdict or solution.cases or self._hidden_sent:
                raise ProtocolError("solution error after results")
            solution.error_verdict = _verdict(frame.meta)
            solution.message = _text(frame.meta, "message")
            solution.exception = _text(frame.meta, "exception", MAX_NAME)
            return
        if frame.kind is Kind.ANALYSIS:
            if not job.analysed or solution.error_verdict:
                raise ProtocolError("an ANALYSIS frame out of place")
            if _index(frame.meta, "program", protocol.MAX_PROGRAMS) != len(solution.programs):
                raise ProtocolError("programs must be announced once each, in order")
            solution.programs.append(_program(frame.meta, hidden=self._hidden_sent))
            return
        case_index = _index(frame.meta, "case", len(job.all_cases))
        if case_index in solution.cases or solution.error_verdict:
            raise ProtocolError("a case was reported twice")
        if case_index >= len(job.cases) and not self._hidden_sent:
            raise ProtocolError("a hidden case was reported before its inputs were sent")
        case = self._case(frame, job.part_specs[job.part_index(job.all_cases[case_index])])
        case.program = self._case_program(frame, job, solution)
        if self.judge is not None:
            case = self.judge(case_index, case)
        solution.cases[case_index] = case

    @staticmethod
    def _case_program(frame: Frame, job: Job, solution: SolutionOutcome) -> int | None:
        """The announced program that answered the case: required where the job is
        analysed (an error may have none), absent otherwise."""
        if frame.meta["program"] is None and (not job.analysed or frame.kind is Kind.CASE_ERROR):
            return None
        if not job.analysed:
            raise ProtocolError("a case names a program in a job that is not analysed")
        return _index(frame.meta, "program", len(solution.programs))

    def _accept_samples_done(self, job: Job) -> None:
        solution = self.outcome.solutions[0]
        if (
            not job.hidden_cases
            or self.samples_done.is_set()
            or solution.error_verdict
            or len(solution.cases) != len(job.cases)
        ):
            raise ProtocolError("SAMPLES_DONE out of place")
        self.samples_done.set()
        if self.judge is not None:  # it reads the samples' reports before the hidden inputs go
            judged = [solution.cases[i] for i in range(len(job.cases))]
            self.judge.samples_done([c.judged.report for c in judged if c.judged is not None])

    def _case(self, frame: Frame, part: JobPart) -> CaseOutcome:
        """One case's frame, its outputs read as ``part`` returns them."""
        seconds = _seconds(frame.meta)
        if frame.kind is Kind.CASE_ERROR:
            return CaseOutcome(
                seconds,
                error_verdict=_verdict(frame.meta),
                message=_text(frame.meta, "message"),
                exception=_text(frame.meta, "exception", MAX_NAME),
            )
        specs = frame.meta["outputs"]
        if type(specs) is not list or len(specs) != part.n_outputs:
            raise ProtocolError("wrong number of outputs")
        outputs: list[Output] = []
        for index, spec in enumerate(specs):
            if index in part.tree_outputs and not _is_invalid(spec):
                outputs.append(self._tree(spec, frame.data))
            else:
                outputs.append(self._leaf(spec, frame.data))
        return CaseOutcome(seconds, outputs=outputs)

    def _leaf(self, spec: Any, data: bytes) -> np.ndarray[Any, Any] | str:
        if _is_invalid(spec):
            return _text(spec, "invalid", 2000) or "invalid output"
        return protocol.unpack_array(spec, data, max_elements=self.max_elements)

    def _tree(self, spec: Any, data: bytes) -> OutputTree | str:
        """A pytree output: at most MAX_TREE_LEAVES leaves, each {"path", "leaf"}. Two
        leaves with one path (dict keys 1 and "1") make the output invalid, not the
        channel: the learner's answer is wrong, not hostile."""
        if type(spec) is not dict or set(spec) != {"tree"} or type(spec["tree"]) is not list:
            raise ProtocolError("a tree output is not {tree: [...]}")
        entries = spec["tree"]
        if len(entries) > protocol.MAX_TREE_LEAVES:
            raise ProtocolError("a tree output has too many leaves")
        paths: list[str] = []
        leaves: list[np.ndarray[Any, Any] | str] = []
        for entry in entries:
            if type(entry) is not dict or set(entry) != {"path", "leaf"}:
                raise ProtocolError("a tree leaf is not {path, leaf}")
            paths.append(_text(entry, "path", protocol.MAX_TREE_PATH_CHARS))
            leaves.append(self._leaf(entry["leaf"], data))
        if len(set(paths)) != len(paths):
            repeated = next(p for p in paths if paths.count(p) > 1)
            return f"the returned tree has two leaves at the path {repeated!r}"
        return OutputTree(tuple(paths), tuple(leaves))

    def read_all(self, stream: BinaryIO, max_data_bytes: int, on_error: Callable[[], None]) -> None:
        """The reader thread's body: every failure is the child's, and ends the run."""
        try:
            while (frame := protocol.read_frame(stream, max_data_bytes=max_data_bytes)) is not None:
                self.accept(frame)
        except ProtocolError as error:
            self.outcome.protocol_error = str(error)
            on_error()
        except (OSError, ValueError, MemoryError, RecursionError) as error:
            self.outcome.protocol_error = f"result channel failed: {type(error).__name__}"
            on_error()
        except Exception as error:  # a bug of ours met hostile input: fail closed, say so
            log.exception("unexpected error while reading a child's frames")
            self.outcome.protocol_error = f"unreadable frame ({type(error).__name__})"
            on_error()
        finally:
            self.ended.set()
