"""Author-written tests (a problem's tests.py): the author's API and the grader's side.

tests.py imports ``test`` and ``call`` from here::

    from grader.author_tests import call, test

    @test(points=2, message="Shuffling the rows must shuffle the answer the same way")
    def rows_are_independent(rng):
        x = rng.normal(size=(6, 3)).astype(np.float32)
        a, b = yield [call("pairwise", x=x), call("pairwise", x=x[rng.permutation(6)])]
        ...

No test's code runs in this process, nor in the learner's: tests.py runs only in an
author-code sandbox (grader/child/author_tests.py, started by grader/author_code.py's
``sandbox_frames``: the limits an untrusted cases.py gets), for a bank problem as for a
course problem. A grading goes in three phases, and holds only data throughout:

1. ``draw``: the sandbox declares every test and draws each one's calls with its seed
   (visible tests: a fixed seed; hidden tests, on a submit: the submission's secret draw);
   what comes back is validated into ``AuthorTestDraw`` (grader/judging/drawn_tests.py):
   each call a case of the part it names.
2. grader/grade.py sends the calls to the learner's child as extra cases (the visible
   ones after the samples, the hidden ones after the hidden cases); their outputs come
   back as data and are never compared with the reference.
3. ``judge``: a sandbox draws each test's calls again with the same seed (a different
   digest: the test is broken), hands it the learner's outputs and sends back each
   test's passed/failed and the first line of what it raised.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from grader import author_code
from grader.cases import Case, _check_argument
from grader.child import protocol
from grader.child.author_tests import MAX_CALLS, MAX_TESTS, call, test
from grader.child.protocol import Frame, Kind, ProtocolError
from grader.child.verdicts import Mode, Verdict
from grader.errors import ProblemError
from grader.judging import credit
from grader.judging.drawn_tests import VISIBLE_SEED, AuthorTest, AuthorTestDraw, hidden_seed
from grader.judging.job import Job, RunOutcome
from grader.judging.report import AuthorTestReport, GradeReport
from grader.judging.trees import Output, OutputTree
from grader.problems.problem import Part, Problem

__all__ = [
    "TestVerdict",
    "apply",
    "call",
    "draw",
    "draw_for",
    "draws",
    "has_tests",
    "judge",
    "judge_all",
    "test",
]

FILENAME = "tests.py"
MAX_TEXT = 2000
ADVICE = "draw smaller inputs, make fewer calls or assert less"


@dataclass(frozen=True)
class TestVerdict:
    """One test's outcome: ``status`` passed, failed (the learner's code broke the
    property) or broken (the test itself failed: not the learner's fault)."""

    __test__ = False  # not a pytest class

    status: str
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def has_tests(problem: Problem) -> bool:
    return (problem.folder / FILENAME).is_file()


def draw(problem: Problem, *, hidden_variant: int | None) -> AuthorTestDraw:
    """Phase 1: every test of ``problem`` declared, visible ones drawn with the fixed
    seed and, when ``hidden_variant`` is given, hidden ones with its seed. A ProblemError
    naming tests.py when it fails, breaks a limit or sends anything malformed."""
    return draws(problem, [hidden_variant])[0]


def draws(problem: Problem, hidden_variants: list[int | None]) -> list[AuthorTestDraw]:
    """``draw`` for each of ``hidden_variants``, in one sandbox (a check draws every
    variant's)."""
    path = problem.folder / FILENAME
    source = path.read_bytes()
    seeds = [
        {"visible": VISIBLE_SEED, "hidden": None if v is None else hidden_seed(v)}
        for v in hidden_variants
    ]
    request = {"phase": "calls", "draws": seeds, "source_bytes": len(source)}
    frames = author_code.sandbox_frames(
        path,
        program="author_tests",
        request=Frame(Kind.AUTHOR_TESTS, request, source),
        memory_mb=problem.config.limits.memory_mb,
        max_frames=len(seeds) + 2,
        advice=ADVICE,
    )
    try:
        found = [frame for frame in frames if frame.kind is Kind.TEST_CALLS]
        if [frame.meta["draw"] for frame in found] != list(range(len(seeds))):
            raise ValueError("draws missing or out of order")
        return [
            _draw_of(problem, path, frame, these["hidden"])
            for frame, these in zip(found, seeds, strict=True)
        ]
    except ProblemError:
        raise
    except (ProtocolError, KeyError, TypeError, ValueError, IndexError) as error:
        raise ProblemError(
            path, None, f"its sandbox sent malformed data ({_text(error)})"
        ) from None


def _text(value: object) -> str:
    return str(value)[:MAX_TEXT]


def _part(problem: Problem, path: Path, test_name: str, target: str) -> Part:
    for part in problem.parts:
        if target in (part.name, part.entry_point):
            return part
    names = ", ".join(
        sorted({p.name for p in problem.parts} | {p.entry_point for p in problem.parts})
    )
    raise ProblemError(
        path, f"test {test_name}", f"calls {target!r}, which is no part of this problem ({names})"
    )


def _draw_of(problem: Problem, path: Path, frame: Frame, seed: int | None) -> AuthorTestDraw:
    declared = frame.meta["tests"]
    if not isinstance(declared, list) or not 0 < len(declared) <= MAX_TESTS:
        raise ValueError("no list of tests")
    calls: dict[int, list[Case]] = {}
    if len(frame.meta["calls"]) > MAX_CALLS:
        raise ValueError("too many calls")
    for index, item in enumerate(frame.meta["calls"]):
        owner = declared[int(item["test"])]
        name = _text(owner["name"])
        part = _part(problem, path, name, _text(item["target"]))
        args: dict[str, Any] = {}
        for argument, encoded in zip(item["names"], item["args"], strict=True):
            if encoded["kind"] not in ("float", "array", "tree"):
                raise ProblemError(
                    path,
                    f"test {name}, argument {_text(argument)!r}",
                    _text(encoded.get("why"))
                    or "must be a Python float, a float32 numpy array or a dict of them, got"
                    f" {_text(encoded.get('type'))}",
                )
            args[_text(argument)] = protocol.unpack_cases(
                [{"args": [encoded]}], frame.data, max_elements=author_code.MAX_INPUT_ELEMENTS
            )[0][0]
        if sorted(args) != sorted(part.arguments):
            raise ProblemError(
                path,
                f"test {name}",
                f"calls {part.name} with arguments {sorted(args)}; it takes {list(part.arguments)}",
            )
        case = Case(
            f"test-{name}-call-{index}",
            {argument: args[argument] for argument in part.arguments},
            sample=owner["hidden"] is not True,
            part=part.name if problem.has_parts else None,
        )
        for argument, value in case.args.items():
            _check_argument(path, case, argument, value)
        calls.setdefault(int(item["test"]), []).append(case)
    tests = []
    for index, owner in enumerate(declared):
        points = owner["points"]
        if not isinstance(points, int | float) or not (math.isfinite(points) and points > 0):
            raise ValueError("points")
        if type(owner["hidden"]) is not bool or not isinstance(owner["name"], str):
            raise ValueError("a test's declaration")
        digest = owner["digest"]
        if (digest is None) != (index not in calls) or (
            digest is not None and not isinstance(digest, str)
        ):
            raise ValueError("digest")
        tests.append(
            AuthorTest(
                name=_text(owner["name"]),
                points=float(points),
                message=_text(owner["message"]),
                hidden=owner["hidden"],
                digest=None if digest is None else _text(digest),
                calls=tuple(calls.get(index, ())),
            )
        )
    return AuthorTestDraw(tuple(tests), hidden_seed=seed)


Returned = dict[int, list[list[Output] | str]]  # by test index: each call's outputs, or why none


def _arrays_of(
    where: dict[str, int], output: Output, offset: int, chunks: list[bytes]
) -> tuple[dict[str, Any] | str, int]:
    """One output described for phase 3 (``where``: its job, test and call), or why it
    cannot be a test's input."""
    if isinstance(output, str):
        return f"your code's output was not an array of numbers ({output})", offset
    if isinstance(output, OutputTree):
        leaves = list(zip(output.paths, output.leaves, strict=True))
        if any(isinstance(leaf, str) for _, leaf in leaves):
            return "your code returned a tree with a leaf that is not an array of numbers", offset
        if not _a_tree(list(output.paths)):  # the test rebuilds it by path: "a" and "a/b"
            return (
                "your code returned a tree whose keys collide once joined with '/' (a key"
                " that holds '/', or two named alike)",
                offset,
            )
        specs, raw = protocol.pack_arrays([np.asarray(leaf) for _, leaf in leaves], offset)
        chunks.append(raw)
        meta: dict[str, Any] = {"kind": "tree", "paths": [p for p, _ in leaves], "specs": specs}
    else:
        specs, raw = protocol.pack_arrays([output], offset)
        chunks.append(raw)
        meta = {"kind": "array", "spec": specs[0]}
    return {**where, **meta}, offset + len(raw)


def _a_tree(paths: list[str]) -> bool:
    """Whether the leaves' paths rebuild one tree: none twice, none also a branch."""
    named = set(paths)
    if len(named) != len(paths):
        return False
    return not any(path[:cut] in named for path in paths for cut in _slashes(path))


def _slashes(path: str) -> list[int]:
    return [index for index, char in enumerate(path) if char == "/"]


def judge(problem: Problem, drawn: AuthorTestDraw, outputs: Returned) -> dict[int, TestVerdict]:
    """Phase 3: the verdict of each test in ``outputs`` (by test index: each call's
    outputs, or why the learner's code gave none). A test with a call that gave no
    output fails without running; the others run in one sandbox. A ProblemError when
    tests.py fails there as a whole (its limits, its import)."""
    return judge_all(problem, [(drawn, outputs)])[0]


def judge_all(
    problem: Problem, gradings: list[tuple[AuthorTestDraw, Returned]]
) -> list[dict[int, TestVerdict]]:
    """``judge`` for several gradings' tests (a check's, one per variant), in one sandbox."""
    verdicts: list[dict[int, TestVerdict]] = [{} for _ in gradings]
    jobs: list[dict[str, Any]] = []
    described: list[dict[str, Any]] = []
    chunks: list[bytes] = []
    offset = 0
    for number, (drawn, outputs) in enumerate(gradings):
        asked: list[dict[str, Any]] = []
        for index, returned in outputs.items():
            test_ = drawn.tests[index]
            failure = next((item for item in returned if isinstance(item, str)), None)
            start = (len(described), len(chunks), offset)
            for call_index, item in enumerate(returned):
                if failure is not None or isinstance(item, str):
                    break
                for output in item:
                    where = {"job": number, "test": len(asked), "call": call_index}
                    meta, offset = _arrays_of(where, output, offset, chunks)
                    if isinstance(meta, str):
                        failure = meta
                        break
                    described.append(meta)
            if failure is not None:
                del described[start[0] :], chunks[start[1] :]
                offset = start[2]
                verdicts[number][index] = TestVerdict("failed", failure)
                continue
            asked.append({"name": test_.name, "digest": test_.digest, "calls": len(returned)})
        seeds = {"visible": VISIBLE_SEED, "hidden": drawn.hidden_seed}
        jobs.append({"seeds": seeds, "tests": asked})
    if not any(job["tests"] for job in jobs):
        return verdicts
    path = problem.folder / FILENAME
    source = path.read_bytes()
    listed = json.dumps(described).encode()
    request = {
        "phase": "verdicts",
        "jobs": jobs,
        "source_bytes": len(source),
        "outputs_bytes": len(listed),
    }
    frames = author_code.sandbox_frames(
        path,
        program="author_tests",
        request=Frame(Kind.AUTHOR_TESTS, request, source + listed + b"".join(chunks)),
        memory_mb=problem.config.limits.memory_mb,
        max_frames=len(jobs) + 2,
        advice=ADVICE,
    )
    try:
        found = [frame for frame in frames if frame.kind is Kind.TEST_RESULTS]
        if [frame.meta["job"] for frame in found] != list(range(len(jobs))):
            raise ValueError("results missing or out of order")
        for number, (frame, job) in enumerate(zip(found, jobs, strict=True)):
            drawn = gradings[number][0]
            by_name = {test_.name: index for index, test_ in enumerate(drawn.tests)}
            for entry in job["tests"]:
                verdicts[number][by_name[entry["name"]]] = _verdict_of(
                    frame.meta["results"].get(entry["name"])
                )
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise ProblemError(
            path, None, f"its sandbox sent malformed data ({_text(error)})"
        ) from None
    return verdicts


def _verdict_of(result: object) -> TestVerdict:
    if not isinstance(result, dict) or result.get("status") not in ("passed", "failed", "broken"):
        return TestVerdict("broken", "sent no verdict")
    message = result.get("message")
    return TestVerdict(result["status"], _text(message) if isinstance(message, str) else "")


def without_hidden(drawn: AuthorTestDraw) -> AuthorTestDraw:
    """The draw as a Run sees it: hidden tests declared but not drawn."""
    return replace(
        drawn,
        tests=tuple(replace(t, digest=None, calls=()) if t.hidden else t for t in drawn.tests),
        hidden_seed=None,
    )


def draw_for(problem: Problem, mode: Mode, variant: int) -> AuthorTestDraw | None:
    """Phase 1 for one grading: None without tests.py; hidden tests drawn on a submit."""
    if not has_tests(problem):
        return None
    return draw(problem, hidden_variant=variant if mode is Mode.SUBMIT else None)


NOT_LEARNERS_FAULT = (
    "The problem's tests could not judge this submission; this is not your code's fault"
    " (the course staff can see why)."
)


def _call_outputs(job: Job, outcome: RunOutcome) -> Returned:
    """Each test whose calls were all in ``job``: each call's outputs, or why none."""
    assert job.tests is not None
    solution = outcome.solutions[0]
    by_test: dict[int, dict[int, int]] = {}
    for position, (test_index, call_index) in job.test_calls.items():
        by_test.setdefault(test_index, {})[call_index] = position
    found: dict[int, list[list[Output] | str]] = {}
    for test_index, positions in by_test.items():
        returned: list[list[Output] | str] = []
        for call_index in range(len(job.tests.tests[test_index].calls)):
            got = solution.cases.get(positions[call_index])
            if got is None:
                returned.append("your code stopped before this test's call returned")
            elif got.outputs is None:
                why = got.message.strip().splitlines()[0] if got.message.strip() else ""
                returned.append(f"your code failed on this test's call{': ' + why if why else ''}")
            else:
                returned.append(got.outputs)
        found[test_index] = returned
    return found


def apply(problem: Problem, report: GradeReport, job: Job, outcome: RunOutcome) -> None:
    """Phase 3 into ``report``: each test run in ``job`` judged on the learner's outputs,
    the verdict (a failed test makes an accepted grading a wrong answer) and the score."""
    if job.tests is None:
        return
    solution = outcome.solutions[0] if outcome.solutions else None
    stopped = (
        solution is None
        or solution.error_verdict is not None
        or bool(outcome.startup_error or outcome.killed_from_outside or outcome.protocol_error)
    )
    returned = _call_outputs(job, outcome)
    try:
        verdicts = (
            {index: TestVerdict("failed", "not run: the submission stopped") for index in returned}
            if stopped
            else judge(problem, job.tests, returned)
        )
    except ProblemError as error:
        report.tests_error = _text(error)
        verdicts = {index: TestVerdict("broken", "not run") for index in returned}
    report.tests = []
    for index in sorted(returned):
        test_, verdict = job.tests.tests[index], verdicts[index]
        message = "" if verdict.passed else f"{test_.message}\n{verdict.message}".strip()
        if verdict.status == "broken" and not report.tests_error:
            report.tests_error = f"test {test_.name} {verdict.message}"
        report.tests.append(
            AuthorTestReport(
                name=test_.name,
                hidden=test_.hidden,
                points=test_.points,
                passed=verdict.passed,
                message=message,
            )
        )
    judged = report.verdict in (Verdict.ACCEPTED, Verdict.WRONG_ANSWER)
    if report.tests_error and judged:
        report.verdict, report.score, report.message = (
            Verdict.INTERNAL_ERROR,
            0.0,
            NOT_LEARNERS_FAULT,
        )
        return
    failed = [test_ for test_ in report.tests if not test_.passed]
    if report.verdict is Verdict.ACCEPTED and failed:
        report.verdict = Verdict.WRONG_ANSWER
        visible = next((test_ for test_ in failed if not test_.hidden), None)
        report.message = (
            f"Test {visible.name} failed: {visible.message}"
            if visible is not None
            else "A hidden test failed."
        )
    if judged:  # the parts' credit and the tests' points, as problem.toml's credit says
        parts = report.parts or credit.part_reports(problem, report.cases)
        report.score = credit.score(
            problem.config.credit, parts, report.tests, accepted=report.accepted
        )
