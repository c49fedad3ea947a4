"""The parent's frame reader against random and adversarial input, without a sandbox:
every malformed frame becomes the submission's protocol error, the reader never
dies, and the report built from whatever arrived is strict JSON."""

from __future__ import annotations

import io
import json
import struct
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.cases import Case
from grader.child import protocol
from grader.child.protocol import Kind
from grader.child.verdicts import Mode
from grader.grade import build_report
from grader.judging.job import Job, Solution
from grader.judging.report import GradeReport
from grader.judging.trusted import TrustedOutputs
from grader.problems.problem import Part, Problem, Tolerance, parts_of
from grader.running.frames import FrameCollector

SAMPLE = Case("sample", {"x": np.ones((2,), np.float32)}, sample=True)
HIDDEN = Case("hidden", {"x": np.ones((3,), np.float32)})
JOB = Job("solve", 1, (Solution("s", "pass"),), (SAMPLE,), 5.0, 2048, hidden_cases=(HIDDEN,))


def header(kind: int, meta: bytes, data: bytes = b"") -> bytes:
    return struct.pack("<4sB3xIQ", b"JJF1", kind, len(meta), len(data)) + meta + data


def frame(kind: Kind, meta: dict[str, Any], data: bytes = b"") -> bytes:
    return protocol.encode_frame(kind, meta, data)


HELLO = frame(Kind.HELLO, {"backend": "cpu", "pid": 7})


def good_result(case: int) -> bytes:
    specs, data = protocol.pack_arrays([np.zeros((2,), np.float32)])
    return frame(
        Kind.CASE_RESULT,
        {"solution": 0, "case": case, "program": None, "seconds": 0.1, "outputs": specs},
        data,
    )


def collect(stream: bytes, *, hidden_sent: bool = False) -> FrameCollector:
    collector = FrameCollector(max_elements=1000)
    collector.bind(JOB)
    if hidden_sent:
        collector.hidden_sent()
    errors: list[bool] = []
    collector.read_all(io.BytesIO(stream), 1 << 20, lambda: errors.append(True))
    assert collector.ended.is_set()
    assert bool(errors) == (collector.outcome.protocol_error is not None)
    return collector


def test_a_well_formed_run_is_collected() -> None:
    stream = HELLO + good_result(0) + frame(Kind.SAMPLES_DONE, {})
    collector = collect(stream)
    assert collector.outcome.protocol_error is None
    assert collector.samples_done.is_set()
    collector = collect(stream + good_result(1) + frame(Kind.DONE, {}), hidden_sent=True)
    assert collector.outcome.protocol_error is None and collector.outcome.finished
    assert sorted(collector.outcome.solutions[0].cases) == [0, 1]


NESTED = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


@pytest.mark.parametrize(
    ("stream", "phrase"),
    [
        (HELLO + header(4, b'{"solution":0,"case":0,"seconds":1e999,"outputs":[]}'), "non-finite"),
        (HELLO + header(4, b'{"solution":0,"case":0,"seconds":-1e400,"outputs":[]}'), "non-finite"),
        (HELLO + header(5, NESTED), "nested"),
        (HELLO + header(4, b'{"solution":0,"case":' + b"9" * 5000 + b"}"), "too many digits"),
        (HELLO + frame(Kind.DONE, {"extra": 1}), "unknown fields"),
        (
            HELLO
            + frame(
                Kind.CASE_ERROR,
                {
                    "solution": 0,
                    "case": 0,
                    "program": None,
                    "seconds": "1",
                    "verdict": "runtime_error",
                    "exception": "",
                    "message": "",
                },
            ),
            "seconds",
        ),
        (
            HELLO
            + frame(
                Kind.CASE_ERROR,
                {
                    "solution": 0,
                    "case": True,
                    "program": None,
                    "seconds": 1,
                    "verdict": "runtime_error",
                    "exception": "",
                    "message": "",
                },
            ),
            "case index",
        ),
        (
            HELLO
            + frame(
                Kind.CASE_ERROR,
                {
                    "solution": 0,
                    "case": 0,
                    "program": None,
                    "seconds": 1,
                    "verdict": "accepted",
                    "exception": "",
                    "message": "",
                },
            ),
            "cannot report accepted",
        ),
        (
            HELLO
            + frame(
                Kind.CASE_ERROR,
                {
                    "solution": 0,
                    "case": 0,
                    "program": None,
                    "seconds": 1,
                    "verdict": "runtime_error",
                    "exception": "E",
                    "message": "x" * 20_000,
                },
            ),
            "message",
        ),
        (
            HELLO
            + frame(
                Kind.CASE_RESULT,
                {"solution": 0, "case": 0, "program": None, "seconds": 1, "outputs": {"a": 1}},
            ),
            "outputs",
        ),
        (HELLO + frame(Kind.SAMPLES_DONE, {}), "SAMPLES_DONE out of place"),
        (HELLO + good_result(1), "before its inputs were sent"),
        (HELLO + good_result(0) + good_result(0), "twice"),
        (
            HELLO
            + good_result(0)
            + frame(
                Kind.SOLUTION_ERROR,
                {"solution": 0, "verdict": "runtime_error", "exception": "", "message": ""},
            ),
            "solution error after results",
        ),
        (HELLO + frame(Kind.JOB, {}), "cannot send a JOB"),
        (HELLO + frame(Kind.HIDDEN_CASES, {"cases": []}), "cannot send a HIDDEN_CASES"),
        (HELLO + HELLO, "second HELLO"),
        (good_result(0), "unexpected"),
        (HELLO + frame(Kind.DONE, {}) + frame(Kind.DONE, {}), "after the run finished"),
        (
            HELLO
            + header(
                4,
                b'{"solution":0,"case":0,"program":null,"seconds":0.1,"outputs":[{"dtype":"float32","shape":[2],"offset":0,"nbytes":8,"x":1}]}',
                b"\0" * 8,
            ),
            "unknown fields",
        ),
        (HELLO + b"JJF1\x04", "truncated"),
    ],
)
def test_adversarial_frames_are_protocol_errors(stream: bytes, phrase: str) -> None:
    started = time.monotonic()
    collector = collect(stream)
    assert collector.outcome.protocol_error is not None
    assert phrase in collector.outcome.protocol_error
    assert time.monotonic() - started < 1.0


class _Bank:
    """Just enough of a Problem for build_report: one output, the job's cases."""

    def __init__(self) -> None:
        from grader.problems.problem import OutputConfig, ProblemConfig, ToleranceConfig

        self.slug = "fuzz"
        self.mistakes = ()
        self.has_requirements = False
        self.config = ProblemConfig(
            title="fuzz",
            track="fuzz",
            position=1,
            difficulty="easy",
            estimated_minutes=1,
            entry_point="solve",
            arguments=["x"],
            outputs=[OutputConfig(name="y", description="y")],
            tolerance=ToleranceConfig(rtol=1e-5, atol=1e-6),
        )

    def tolerance(self, index: int, device: str = "cpu") -> Tolerance:
        return Tolerance(1e-5, 1e-6)

    @property
    def parts(self) -> tuple[Part, ...]:
        return parts_of(self.config)  # the one implicit part

    has_parts = False

    def part_of(self, case: Case) -> Part:
        return self.parts[0]


TRUSTED = TrustedOutputs(
    reference={"sample": [np.zeros((2,), np.float32)], "hidden@0": [np.zeros((2,), np.float32)]}
)


def report_json(collector: FrameCollector) -> str:
    problem: Problem = _Bank()  # type: ignore[assignment]
    report = build_report(problem, Mode.SUBMIT, 0, JOB, collector.outcome, TRUSTED)
    return json.dumps(report.to_json(), allow_nan=False)  # strict JSON, always


# Random JSON values, with the numbers a hostile child might pick.
NUMBERS = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e308, -1e308, 5e-324, 0.0, -0.0]),
)
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=20)),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=5,
)
META_KEYS = [
    "solution",
    "case",
    "program",
    "seconds",
    "outputs",
    "verdict",
    "exception",
    "message",
    "backend",
    "pid",
]


@st.composite
def hostile_frames(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(min_value=0, max_value=10))
    keys = draw(st.lists(st.sampled_from(META_KEYS), max_size=4, unique=True))
    meta = {key: draw(JSON_VALUES) for key in keys}
    text = json.dumps(meta).encode()
    if draw(st.booleans()):  # a non-finite or oversized token spliced in
        text = text.replace(
            b"0", draw(st.sampled_from([b"1e999", b"-1e999", b"NaN", b"9" * 40])), 1
        )
    data = draw(st.binary(max_size=16))
    return header(kind, text, data)


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    # A loaded CI machine is slow to generate; the examples are the same (derandomized).
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(hostile_frames(), max_size=3), st.booleans())
def test_fuzzed_frames_never_crash_the_reader_or_the_report(
    frames: list[bytes], hello: bool
) -> None:
    stream = (HELLO if hello else b"") + b"".join(frames)
    collector = collect(stream, hidden_sent=True)
    report_json(collector)


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    # A loaded CI machine is slow to generate; the examples are the same (derandomized).
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.binary(max_size=400))
def test_random_bytes_never_crash_the_reader_or_the_report(noise: bytes) -> None:
    collector = collect(HELLO + good_result(0) + noise)
    report_json(collector)


def test_huge_float64_outputs_still_give_strict_json() -> None:
    specs, data = protocol.pack_arrays([np.array([1e308, -1e308], np.float64)])
    result = frame(
        Kind.CASE_RESULT,
        {"solution": 0, "case": 0, "program": None, "seconds": 0.1, "outputs": specs},
        data,
    )
    trusted = TrustedOutputs(
        reference={"sample": [np.array([-1e308, 1e308])], "hidden@0": [np.zeros(2)]}
    )
    collector = collect(HELLO + result)
    problem: Problem = _Bank()  # type: ignore[assignment]
    report = build_report(problem, Mode.SUBMIT, 0, JOB, collector.outcome, trusted)
    assert report.cases[0].verdict.value == "wrong_answer"
    json.dumps(report.to_json(), allow_nan=False)


def test_a_lone_surrogate_from_the_child_becomes_a_replacement_character() -> None:
    raw = (
        b'{"solution":0,"case":0,"program":null,"seconds":0.1,"verdict":"runtime_error",'
        b'"exception":"ValueError","message":"bad \\ud800 input \\udfff"}'
    )
    collector = collect(HELLO + header(int(Kind.CASE_ERROR), raw))
    assert collector.outcome.protocol_error is None
    message = collector.outcome.solutions[0].cases[0].message
    assert "\ufffd" in message and message.encode("utf-8")
    stored = json.dumps(json.loads(report_json(collector)))
    assert GradeReport.from_stored(stored) is not None  # reads back, staff output and all


ANALYSED = Job(
    "solve",
    1,
    (Solution("s", "pass"),),
    (SAMPLE,),
    5.0,
    2048,
    hidden_cases=(HIDDEN,),
    analysed=True,
)


def analysis(program: int, **fields: Any) -> bytes:
    meta = {"solution": 0, "program": program, "primitives": [["scan", 1]], "temp_bytes": 64}
    return frame(Kind.ANALYSIS, {**meta, "error": "", **fields})


def result_of(program: int | None) -> bytes:
    specs, data = protocol.pack_arrays([np.zeros((2,), np.float32)])
    meta = {"solution": 0, "case": 0, "program": program, "seconds": 0.1, "outputs": specs}
    return frame(Kind.CASE_RESULT, meta, data)


def collect_analysed(stream: bytes) -> FrameCollector:
    collector = FrameCollector(max_elements=1000)
    collector.bind(ANALYSED)
    collector.read_all(io.BytesIO(stream), 1 << 20, lambda: None)
    return collector


def test_a_case_names_the_announced_program_that_answered_it() -> None:
    collector = collect_analysed(HELLO + analysis(0) + result_of(0))
    assert collector.outcome.protocol_error is None
    solution = collector.outcome.solutions[0]
    assert solution.cases[0].program == 0
    assert solution.programs[0].primitives == {"scan": 1} and not solution.programs[0].hidden


@pytest.mark.parametrize(
    ("stream", "phrase"),
    [
        (HELLO + result_of(0), "program index"),  # never announced
        (HELLO + analysis(0) + result_of(None), "program index"),  # analysed: must name one
        (HELLO + analysis(1), "in order"),
        (HELLO + analysis(0) + analysis(0), "in order"),
        (HELLO + analysis(0, primitives=[["scan", 1], ["scan", 2]]), "distinct"),
        (HELLO + analysis(0, primitives=[["scan", 0]]), "distinct"),
        (HELLO + analysis(0, primitives=[["x" * 101, 1]]), "distinct"),
        (HELLO + analysis(0, temp_bytes=-1), "byte count"),
        (HELLO + analysis(0, temp_bytes=1.5), "byte count"),
    ],
)
def test_malformed_analyses_are_protocol_errors(stream: bytes, phrase: str) -> None:
    error = collect_analysed(stream).outcome.protocol_error
    assert error is not None and phrase in error


def test_a_job_that_is_not_analysed_takes_no_analysis_and_no_program() -> None:
    assert "out of place" in (collect(HELLO + analysis(0)).outcome.protocol_error or "")
    assert "not analysed" in (collect(HELLO + result_of(0)).outcome.protocol_error or "")
