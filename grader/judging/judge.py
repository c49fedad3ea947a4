"""Judge each case the moment it arrives (grading process only).

The frame reader hands every accepted case to a ``CaseJudge`` (grader/running/frames.py),
which compares its outputs with the reference's, notes which known mistakes they
match (for the diagnosis, grader/judging/diagnose.py), and keeps the case's report instead
of its arrays. A grading therefore holds at most one case's outputs at a time,
however many cases there are and however large each is: the frame being read (at
most ``settings.max_result_frame_bytes``, 32 MiB by default), its arrays rebuilt from
it (as much again), and the comparison's float64 temporaries for one output (a few
times its elements); docs/security.md states the bound.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from grader.cases import Case
from grader.child.verdicts import Verdict
from grader.judging.compare import Failure, format_shape
from grader.judging.job import CaseOutcome, Judged, RunOutcome
from grader.judging.report import CaseReport, ComparedOutput, describe_value, shown_output
from grader.judging.trees import Output, OutputTree, compare_output
from grader.judging.trusted import Outputs, TrustedOutputs
from grader.problems.problem import Part, Problem


def _expected_shapes(part: Part, desired: Outputs) -> dict[str, str] | None:
    """Each array output's expected shape by name (what the statement fixes); None
    when an output is a tree (its leaves' shapes would name the leaf that failed)."""
    shapes: dict[str, str] = {}
    for output, want in zip(part.outputs, desired, strict=True):
        if isinstance(want, OutputTree):
            return None
        shapes[output.name] = format_shape(want.shape)
    return shapes


def compare_case(
    part: Part,
    report: CaseReport,
    outputs: list[Output],
    desired: Outputs,
    device: str = "cpu",
) -> None:
    """Judge one case's outputs (of ``part``) into ``report``: accepted, or the first
    wrong output."""
    report.verdict = Verdict.ACCEPTED
    worst_ratio = -1.0
    for index, (actual, want) in enumerate(zip(outputs, desired, strict=True)):
        name = part.outputs[index].name
        result = compare_output(actual, want, part.tolerance(index, device), name)
        ratio = result.tolerance_ratio if result.tolerance_ratio is not None else float("inf")
        if ratio > worst_ratio or not result.ok:
            worst_ratio = ratio
            report.expected_shape, report.actual_shape = result.expected_shape, result.actual_shape
            report.max_abs_error, report.max_rel_error = result.max_abs_error, result.max_rel_error
            report.leaf = result.leaf
        if not result.ok:
            if result.leaf is not None and result.failure is not Failure.STRUCTURE:
                prefix = f"leaf {result.leaf}: "
            else:  # with one output, its name adds nothing
                prefix = f"output {name}: " if len(desired) > 1 else ""
            report.verdict, report.message = Verdict.WRONG_ANSWER, prefix + result.reason
            report.failure = result.failure.value if result.failure else None
            return


def matching_mistakes(
    problem: Problem,
    part: Part,
    key: str,
    outputs: list[Output],
    trusted: TrustedOutputs,
    device: str = "cpu",
) -> frozenset[str]:
    """The known mistakes whose outputs on this case (of ``part``) the learner's match,
    each output within the part's tolerance."""
    found = set()
    for mistake in problem.mistakes:
        theirs = trusted.mistakes.get(mistake.name, {}).get(key)
        if theirs is not None and all(
            compare_output(mine, their, part.tolerance(index, device)).ok
            for index, (mine, their) in enumerate(zip(outputs, theirs, strict=True))
        ):
            found.add(mistake.name)
    return frozenset(found)


log = logging.getLogger("jaxjudge.judge")
MAX_KEPT_BYTES = 256 << 20


def _nbytes(output: Output) -> int:
    if isinstance(output, OutputTree):
        return sum(leaf.nbytes for leaf in output.leaves if not isinstance(leaf, str))
    return 0 if isinstance(output, str) else int(output.nbytes)


@dataclass(frozen=True)
class GradingHooks:
    """What a grading tells its caller while it runs, each optional. A hook is called
    from the thread that reads the child's frames, so it returns quickly; its failure is
    logged and never the grading's.

    ``samples_seen``: the samples' reports, the moment the child has answered them all,
    before any hidden input exists in its memory (app/grading/worker.py: the page shows
    them while the hidden cases run); the samples' own reports, never a hidden case's.
    Only a submit has a hidden phase to be told ahead of."""

    samples_seen: Callable[[list[CaseReport]], None] | None = None


NO_HOOKS = GradingHooks()


class CaseJudge:
    """Turns each case a child reports into its report, keeping no array."""

    def __init__(
        self,
        problem: Problem,
        cases: tuple[Case, ...],
        keys: list[str],
        trusted: TrustedOutputs,
        device: str = "cpu",
        hooks: GradingHooks = NO_HOOKS,
        kept: frozenset[int] = frozenset(),
    ) -> None:
        self.problem, self.cases, self.keys, self.trusted = problem, cases, keys, trusted
        self.device = device  # whose tolerance holds
        self.on_samples = hooks.samples_seen
        # Author tests' calls (grader/judging/drawn_tests.py): their outputs are kept for
        # the tests, never compared, up to MAX_KEPT_BYTES together.
        self.kept, self.kept_bytes = kept, 0

    def samples_done(self, reports: list[CaseReport]) -> None:
        """Every first-phase case is judged: tell whoever listens. Their failure is
        logged and never the grading's."""
        if self.on_samples is None:
            return
        try:
            self.on_samples([r for r in reports if not r.hidden])
        except Exception:
            log.exception("reporting the samples early failed; grading goes on")

    def __call__(self, position: int, outcome: CaseOutcome) -> CaseOutcome:
        if position in self.kept:
            return self._keep(outcome)
        case, key = self.cases[position], self.keys[position]
        part = self.problem.part_of(case)
        desired = self.trusted.reference[key]
        report = CaseReport(
            name=case.name,
            hidden=case.hidden,
            probe=case.probe,
            verdict=Verdict.SKIPPED,
            part=case.part,
        )
        report.seconds = round(outcome.seconds, 6)
        if case.hidden:
            report.expected_shapes = _expected_shapes(part, desired)
        else:
            report.inputs = {name: describe_value(value) for name, value in case.args.items()}
            report.expected = [shown_output(out) for out in desired]
            report.compared = _compared(part, self.device)
        mistakes: frozenset[str] = frozenset()
        kept: list[Output] | None = None
        if outcome.error_verdict or outcome.outputs is None:
            report.verdict = outcome.error_verdict or Verdict.RUNTIME_ERROR
            report.message, report.exception = outcome.message, outcome.exception or None
        else:
            compare_case(part, report, outcome.outputs, desired, self.device)
            if not case.hidden:
                report.actual = [shown_output(o) for o in outcome.outputs]
            if report.verdict is Verdict.WRONG_ANSWER:
                if not self.trusted.diagnoses_ready:
                    kept = outcome.outputs  # matched when the mistakes' outputs are ready
                mistakes = matching_mistakes(
                    self.problem, part, key, outcome.outputs, self.trusted, self.device
                )
        return CaseOutcome(
            outcome.seconds,
            error_verdict=outcome.error_verdict,
            message=outcome.message,
            exception=outcome.exception,
            program=outcome.program,
            judged=Judged(report, mistakes, kept),
        )

    def _keep(self, outcome: CaseOutcome) -> CaseOutcome:
        """A test's call: its outputs as they came, while they fit in the budget."""
        size = sum(_nbytes(output) for output in outcome.outputs or [])
        if self.kept_bytes + size > MAX_KEPT_BYTES:
            outcome.outputs = None
            outcome.message = (
                f"the outputs of the tests' calls together exceed {MAX_KEPT_BYTES >> 20} MiB"
            )
            return outcome
        self.kept_bytes += size
        return outcome

    def match_later(self, outcome: RunOutcome, whole: TrustedOutputs) -> None:
        """Match the wrong answers kept while the mistakes' outputs were not ready."""
        for position, case in outcome.solutions[0].cases.items():
            judged = case.judged
            if judged is not None and judged.wrong_outputs is not None:
                key = self.keys[position]
                part = self.problem.part_of(self.cases[position])
                matched = matching_mistakes(
                    self.problem, part, key, judged.wrong_outputs, whole, self.device
                )
                case.judged = Judged(judged.report, matched)


def _compared(part: Part, device: str) -> list[ComparedOutput]:
    """Each output's name and the tolerance it is compared within on ``device``."""
    held = (part.tolerance(index, device) for index in range(len(part.outputs)))
    return [
        ComparedOutput(name=output.name, rtol=tolerance.rtol, atol=tolerance.atol)
        for output, tolerance in zip(part.outputs, held, strict=True)
    ]
