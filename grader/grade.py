"""Grade one submission: run it in a child, compare in this process, diagnose.

A submit grades the samples, then the hidden cases of one *variant* of the
hidden inputs (grader/cases.py), drawn at random unless the caller names one
(a regrade reproduces the draw a submission got). The report holds every
detail; grader/feedback.py decides what a learner may see of it.
"""

from __future__ import annotations

import logging
import secrets
import signal
import time

from grader import expected
from grader.cases import Case, case_key
from grader.compare import Failure
from grader.config import settings
from grader.diagnose import diagnose
from grader.job import CaseOutcome, Job, RunOutcome, Solution
from grader.launch import PlainLauncher
from grader.problem import Problem
from grader.report import CaseReport, GradeReport, describe_value, shown_output
from grader.requirements import unmet_requirement
from grader.supervise import ProcessRunner, Runner
from grader.trees import compare_output
from grader.verdicts import Mode, Verdict
from grader.versions import runtime_versions

log = logging.getLogger("jaxjudge.grade")


def draw_variant(problem: Problem) -> int:
    """A secret, uniform draw of the hidden inputs for one submission."""
    return secrets.randbelow(problem.config.variants)


def _missing_case_verdict(outcome: RunOutcome, memory_mb: int) -> tuple[Verdict, str]:
    """Why a case has no result when the process stopped before reporting it."""
    if outcome.timed_out:
        return Verdict.TIME_LIMIT_EXCEEDED, "the submission ran past its time limit and was stopped"
    if outcome.output_limit_hit:
        return (
            Verdict.OUTPUT_LIMIT_EXCEEDED,
            "the submission printed more than the output limit and was stopped",
        )
    if outcome.memory_killed:
        return (
            Verdict.MEMORY_LIMIT_EXCEEDED,
            f"the submission used more than its {memory_mb} MB of memory and was stopped",
        )
    status = outcome.exit_status
    if status == -signal.SIGXCPU:
        return (
            Verdict.TIME_LIMIT_EXCEEDED,
            "the submission used more CPU time than allowed and was stopped",
        )
    if status is not None and status < 0:
        name = signal.Signals(-status).name
        hint = (
            f"; this usually means it ran out of memory (limit {memory_mb} MB)"
            if name in {"SIGABRT", "SIGSEGV", "SIGBUS"}
            else ""
        )
        return (
            Verdict.RUNTIME_ERROR,
            f"the process was killed by {name} before reporting this case{hint}",
        )
    return (
        Verdict.RUNTIME_ERROR,
        f"the process exited (status {status}) before reporting this case; a solution must return, not exit",
    )


def _compare_case(
    problem: Problem, report: CaseReport, outcome: CaseOutcome, desired: expected.Outputs
) -> None:
    assert outcome.outputs is not None
    report.verdict = Verdict.ACCEPTED
    worst_ratio = -1.0
    for index, (actual, want) in enumerate(zip(outcome.outputs, desired, strict=True)):
        name = problem.config.outputs[index].name
        result = compare_output(actual, want, problem.tolerance(index), name)
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


def _case_reports(
    problem: Problem,
    cases: tuple[Case, ...],
    keys: list[str],
    outcome: RunOutcome,
    trusted: expected.TrustedOutputs,
) -> list[CaseReport]:
    solution = outcome.solutions[0]
    reports: list[CaseReport] = []
    stopped = False
    for position, (case, key) in enumerate(zip(cases, keys, strict=True)):
        report = CaseReport(name=case.name, hidden=not case.sample, verdict=Verdict.SKIPPED)
        reports.append(report)
        if not report.hidden:
            report.inputs = {name: describe_value(value) for name, value in case.args.items()}
            report.expected = [shown_output(out) for out in trusted.reference[key]]
        got = solution.cases.get(position)
        if got is None:
            if not stopped and not solution.error_verdict:
                report.verdict, report.message = _missing_case_verdict(
                    outcome, problem.config.limits.memory_mb
                )
                stopped = True
            continue
        report.seconds = round(got.seconds, 6)
        if got.error_verdict:
            report.verdict, report.message = got.error_verdict, got.message
            report.exception = got.exception or None
            continue
        _compare_case(problem, report, got, trusted.reference[key])
        if not report.hidden and got.outputs is not None:
            report.actual = [shown_output(o) for o in got.outputs]
    return reports


def _overall(reports: list[CaseReport]) -> Verdict:
    for report in reports:
        if report.verdict not in (Verdict.ACCEPTED, Verdict.SKIPPED):
            return report.verdict
    return Verdict.ACCEPTED if reports else Verdict.INTERNAL_ERROR


def build_report(
    problem: Problem,
    mode: Mode,
    variant: int,
    job: Job,
    outcome: RunOutcome,
    trusted: expected.TrustedOutputs,
) -> GradeReport:
    versions = {**runtime_versions(), "backend": outcome.backend or "unknown"}
    report = GradeReport(
        problem=problem.slug,
        mode=mode,
        verdict=Verdict.ACCEPTED,
        score=0.0,
        stdout=outcome.stdout,
        versions=versions,
        variant=variant if job.hidden_cases else None,
        hidden_output=outcome.hidden_output,
    )
    if outcome.stdout_truncated:
        report.stdout += "\n[output truncated]"
    if outcome.startup_error:
        report.verdict, report.message = (
            Verdict.INTERNAL_ERROR,
            "The grader could not start the runtime; please try again.",
        )
        report.retry_later = True
        log.error("the grading runtime failed to start: %s", outcome.startup_error)
        return report
    if outcome.killed_from_outside:
        report.verdict, report.message = (
            Verdict.INTERNAL_ERROR,
            "The grader's sandbox was stopped from outside, twice; this is not your code's"
            " fault. Please submit again.",
        )
        return report
    solution = outcome.solutions[0]
    keys = [case_key(case, variant) for case in job.all_cases]
    report.cases = _case_reports(problem, job.all_cases, keys, outcome, trusted)
    if solution.error_verdict:
        report.verdict, report.message = solution.error_verdict, solution.message
    else:
        report.verdict = _overall(report.cases)
        report.score = round(
            sum(c.verdict is Verdict.ACCEPTED for c in report.cases) / len(report.cases), 4
        )
    # A limit that stopped the run explains it better than the half-written frame
    # the stop may have left on the result channel.
    if outcome.protocol_error and not (outcome.timed_out or outcome.memory_killed):
        # Anything odd on the result channel fails the submission, whatever the cases said.
        report.verdict, report.score = Verdict.RUNTIME_ERROR, 0.0
        report.message = (
            "Your code interfered with the grader's result channel; results cannot be trusted."
        )
    if outcome.output_limit_hit:
        report.verdict, report.score = Verdict.OUTPUT_LIMIT_EXCEEDED, 0.0
        report.message = "Your code printed more than the output limit allows."
    if outcome.memory_killed:
        # Whichever process the kernel stopped, the sandbox as a whole went over.
        report.verdict, report.score = Verdict.MEMORY_LIMIT_EXCEEDED, 0.0
        report.message = (
            f"Your code used more than the {problem.config.limits.memory_mb} MB memory limit"
            " (all of its processes together)."
        )
    unmet = unmet_requirement(problem, solution.analysis)
    if unmet and report.verdict in (Verdict.ACCEPTED, Verdict.WRONG_ANSWER):
        # The cases keep their verdicts: the learner sees whether the numbers are right too.
        report.verdict, report.score, report.message = Verdict.REQUIREMENT_NOT_MET, 0.0, unmet
    if report.verdict is Verdict.WRONG_ANSWER:
        report.diagnosis = diagnose(problem, keys, solution, report.cases, trusted)
    return report


def learner_runner() -> Runner:
    """A fresh sandbox per submission (or, with JAXJUDGE_SANDBOX=false, a plain child)."""
    if settings.sandbox:
        from grader.sandbox import SandboxLauncher

        return ProcessRunner(SandboxLauncher())
    return ProcessRunner(PlainLauncher(trusted=False))


def learner_job(problem: Problem, source: str, mode: Mode, variant: int, device: str) -> Job:
    limits = problem.config.limits
    bank = problem.case_bank
    return Job(
        entry_point=problem.config.entry_point,
        n_outputs=len(problem.config.outputs),
        tree_outputs=problem.tree_outputs,
        trace_structure=problem.config.structure is not None,
        memory_probes=problem.memory_probes,
        solutions=(Solution("submission", source),),
        cases=bank.samples,
        hidden_cases=bank.for_variant(variant) if mode is Mode.SUBMIT else (),
        wall_seconds=limits.wall_seconds,
        memory_mb=limits.memory_mb,
        device=device,
        compiled=True,
    )


def grade(
    problem: Problem,
    source: str,
    *,
    mode: Mode = Mode.SUBMIT,
    device: str = "cpu",
    runner: Runner | None = None,
    trusted: expected.TrustedOutputs | None = None,
    variant: int | None = None,
) -> GradeReport:
    """Grade ``source``; ``variant`` picks the hidden inputs (drawn at random when None,
    taken modulo the problem's variants otherwise)."""
    started = time.monotonic()
    trusted = trusted or expected.load_or_compute(problem, device)
    chosen = draw_variant(problem) if variant is None else variant % problem.config.variants
    job = learner_job(problem, source, mode, chosen, device)
    outcome = (runner or learner_runner()).run(job)
    report = build_report(problem, mode, chosen, job, outcome, trusted)
    report.seconds = round(time.monotonic() - started, 3)
    return report
