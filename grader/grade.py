"""Grade one submission: run it in a child, compare in this process, diagnose.

A submit grades the samples, then the hidden cases of one *variant* of the
hidden inputs (grader/cases.py), drawn at random unless the caller names one
(a regrade reproduces the draw a submission got). The report holds every
detail; grader/judging/feedback.py decides what a learner may see of it. What the
caller decides beyond the report (grade again later, record another draw) rides
beside it, in a ``GradingOutcome``; what it hears while the grading runs, it asks
for with ``GradingHooks`` (grader/judging/judge.py).
"""

from __future__ import annotations

import logging
import secrets
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from grader import author_tests, calibration, expected
from grader.cases import case_key
from grader.child.verdicts import Mode, Verdict
from grader.config import settings
from grader.errors import ProblemError
from grader.judging import credit
from grader.judging.diagnose import diagnose, diagnoses
from grader.judging.drawn_tests import AuthorTestDraw
from grader.judging.job import Job, RunOutcome, Solution, job_for
from grader.judging.judge import NO_HOOKS, CaseJudge, GradingHooks
from grader.judging.report import CaseReport, GradeReport
from grader.judging.requirements import unmet_requirement
from grader.judging.trusted import TrustedOutputs
from grader.problems.problem import Problem
from grader.running.launch import PlainLauncher
from grader.running.supervise import (
    Pause,
    PausingRunner,
    ProcessRunner,
    Runner,
    StartedChild,
)
from grader.running.timing import BACKSTOP_FACTOR, TimeLimits
from grader.versions import runtime_record

log = logging.getLogger("jaxjudge.grade")


@dataclass(frozen=True)
class GradingOutcome:
    """A grading's report and the decisions its caller takes with it, which the report
    (what staff read, and a learner through grader/judging/feedback.py) does not carry."""

    report: GradeReport
    # The grader's own failure (its runtime did not start, or started on the wrong
    # device): not the learner's verdict; grade it again later (app/grading/worker.py).
    retry_later: bool = False
    # The draw of the hidden inputs the submission records in place of its own: a held
    # run's secret draw, which the verdict is for (grader/parking.py); None keeps its own.
    draw_to_record: int | None = None


def draw_variant(problem: Problem) -> int:
    """A secret, uniform draw of the hidden inputs for one submission."""
    return secrets.randbelow(problem.config.variants)


def _missing_case_verdict(outcome: RunOutcome, memory_mb: int) -> tuple[Verdict, str]:
    """Why a case has no result when the process stopped before reporting it."""
    if outcome.timed_out and outcome.time_limit == "cpu":
        return (
            Verdict.TIME_LIMIT_EXCEEDED,
            "the submission used more CPU time than its limit allows and was stopped",
        )
    if outcome.timed_out:
        return (
            Verdict.TIME_LIMIT_EXCEEDED,
            "the submission ran past its wall-clock limit and was stopped (code that sleeps"
            " or waits stops here; CPU time is limited separately)",
        )
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


def _case_reports(
    problem: Problem, job: Job, outcome: RunOutcome, judge: CaseJudge
) -> list[CaseReport]:
    solution = outcome.solutions[0]
    reports: list[CaseReport] = []
    stopped = False
    test_calls = job.test_calls  # kept for the author tests, not reported as cases
    for position, case in enumerate(job.all_cases):
        if position in test_calls:
            continue
        got = solution.cases.get(position)
        if got is not None and got.judged is None:  # not judged as it arrived
            got = solution.cases[position] = judge(position, got)
        if got is not None and got.judged is not None:
            reports.append(got.judged.report)
            continue
        report = CaseReport(
            name=case.name, hidden=case.hidden, probe=case.probe, verdict=Verdict.SKIPPED
        )
        if not stopped and not solution.error_verdict:
            report.verdict, report.message = _missing_case_verdict(
                outcome, problem.config.limits.memory_mb
            )
            stopped = True
        reports.append(report)
    return reports


def judge_for(
    problem: Problem,
    job: Job,
    variant: int,
    trusted: TrustedOutputs,
    hooks: GradingHooks = NO_HOOKS,
) -> CaseJudge:
    """The judge of ``job``'s cases, each filed under its key for ``variant``."""
    keys = [case_key(case, variant) for case in job.all_cases]
    kept = frozenset(job.test_calls)
    return CaseJudge(problem, job.all_cases, keys, trusted, job.device, hooks, kept=kept)


def _overall(reports: list[CaseReport]) -> Verdict:
    for report in reports:
        if report.verdict not in (Verdict.ACCEPTED, Verdict.SKIPPED):
            return report.verdict
    return Verdict.ACCEPTED if reports else Verdict.INTERNAL_ERROR


def _kept_wrong(outcome: RunOutcome) -> bool:
    return any(
        case.judged is not None and case.judged.wrong_outputs is not None
        for case in outcome.solutions[0].cases.values()
    )


def build_report(
    problem: Problem,
    mode: Mode,
    variant: int,
    job: Job,
    outcome: RunOutcome,
    trusted: TrustedOutputs,
) -> GradeReport:
    versions = {**runtime_record(job.device), "backend": outcome.backend or "unknown"}
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
    report.cases = _case_reports(problem, job, outcome, judge_for(problem, job, variant, trusted))
    report.credit = problem.config.credit.value
    report.parts = credit.part_reports(problem, report.cases, solution.error_verdict)
    if solution.error_verdict:
        report.verdict, report.message = solution.error_verdict, solution.message
    else:
        report.verdict = credit.overall_verdict(report.parts) if report.cases else _overall([])
        report.score = credit.score(
            problem.config.credit, report.parts, accepted=report.verdict is Verdict.ACCEPTED
        )
        missing = [p for p in report.parts if p.verdict is Verdict.MISSING_ENTRY_POINT]
        if missing and report.verdict is Verdict.MISSING_ENTRY_POINT:
            report.message = missing[0].message
    _apply_stops(problem, report, outcome)
    probes = [i for i, case in enumerate(job.all_cases) if case.probe]
    unmet = unmet_requirement(problem, solution, range(len(job.all_cases)), probes)
    if unmet and report.verdict in (Verdict.ACCEPTED, Verdict.WRONG_ANSWER):
        # The cases keep their verdicts: the learner sees whether the numbers are right too.
        report.verdict, report.score, report.message = Verdict.REQUIREMENT_NOT_MET, 0.0, unmet
    if report.verdict is Verdict.WRONG_ANSWER:
        report.diagnosis = diagnose(problem, solution)
        found = diagnoses(problem, solution)
        for part in report.parts if problem.has_parts else ():
            part.diagnosis = found.get(part.name)
    author_tests.apply(problem, report, job, outcome)  # phase 3: the tests on the outputs
    return report


def _apply_stops(problem: Problem, report: GradeReport, outcome: RunOutcome) -> None:
    """What stopped the run decides the verdict, whatever the cases said."""
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


def learner_runner() -> Runner:
    """A fresh sandbox per submission (or, with JAXJUDGE_SANDBOX=false, a plain child)."""
    if settings.sandbox:
        from grader.running.sandbox import SandboxLauncher

        return ProcessRunner(SandboxLauncher())
    return ProcessRunner(PlainLauncher(trusted=False))


def learner_job(
    problem: Problem,
    source: str,
    mode: Mode,
    variant: int,
    device: str,
    limits: TimeLimits,
    tests: AuthorTestDraw | None = None,
) -> Job:
    """A learner's job; ``tests``: the author tests' calls (phase 1, as data), the visible
    ones after the samples, the hidden ones after the hidden cases."""
    bank = problem.case_bank
    visible = tests.calls(hidden=False) if tests else ()
    hidden = tests.calls(hidden=True) if tests else ()
    job = job_for(
        problem,
        solutions=(Solution("submission", source),),
        cases=bank.first_phase + visible,
        hidden_cases=bank.for_variant(variant) + hidden if mode is Mode.SUBMIT else (),
        wall_seconds=limits.wall_seconds,
        cpu_seconds=limits.cpu_seconds,
        memory_mb=problem.config.limits.memory_mb,
        device=device,
        compiled=True,
    )
    return replace(job, tests=tests) if tests is not None else job


def tests_failed(problem: Problem, mode: Mode, error: ProblemError) -> GradingOutcome:
    """A grading whose author tests could not even be drawn: the problem's fault, said
    to the learner without the author's details (staff read them)."""
    report = GradeReport(
        problem=problem.slug,
        mode=mode,
        verdict=Verdict.INTERNAL_ERROR,
        score=0.0,
        message=author_tests.NOT_LEARNERS_FAULT,
        tests_error=str(error)[: author_tests.MAX_TEXT],
    )
    return GradingOutcome(report)


def grade_outcome(
    problem: Problem,
    source: str,
    *,
    mode: Mode = Mode.SUBMIT,
    device: str = "cpu",
    runner: Runner | None = None,
    trusted: TrustedOutputs | None = None,
    variant: int | None = None,
    limits: TimeLimits | None = None,
    whole: Callable[[], TrustedOutputs] | None = None,
    hooks: GradingHooks = NO_HOOKS,
) -> GradingOutcome:
    """Grade ``source``; ``variant`` picks the hidden inputs (drawn at random when None,
    taken modulo the problem's variants otherwise); ``limits``: this machine's
    calibrated ones (grader/calibration.py) unless given. ``whole``: where ``trusted``
    holds the reference's outputs alone (a first start), the whole set, asked for only
    when an answer is wrong, so that its diagnosis can still name a known mistake (the
    wrong outputs were kept for it; the learner's code does not run again). ``hooks``:
    who hears what while it runs."""
    started = time.monotonic()
    trusted = trusted or expected.load_or_compute(problem, device)
    limits = limits or calibration.limits_for(problem, device)
    chosen = draw_variant(problem) if variant is None else variant % problem.config.variants
    try:  # phase 1: the author tests' calls, drawn in a sandbox
        tests = author_tests.draw_for(problem, mode, chosen)
    except ProblemError as error:
        return tests_failed(problem, mode, error)
    job = learner_job(problem, source, mode, chosen, device, limits, tests)
    judge = judge_for(problem, job, chosen, trusted, hooks)
    outcome = (runner or learner_runner()).run(job, judge)
    if not trusted.diagnoses_ready and whole is not None and _kept_wrong(outcome):
        judge.match_later(outcome, whole())
    report = build_report(problem, mode, chosen, job, outcome, trusted)
    report.seconds = round(time.monotonic() - started, 3)
    report.cpu_seconds = None if outcome.cpu_seconds is None else round(outcome.cpu_seconds, 3)
    report.cpu_limit_seconds = limits.cpu_seconds
    # build_report's internal_error for a runtime that did not start: the grader's fault.
    return GradingOutcome(report, retry_later=bool(outcome.startup_error))


def grade(
    problem: Problem,
    source: str,
    *,
    mode: Mode = Mode.SUBMIT,
    device: str = "cpu",
    runner: Runner | None = None,
    trusted: TrustedOutputs | None = None,
    variant: int | None = None,
    limits: TimeLimits | None = None,
    whole: Callable[[], TrustedOutputs] | None = None,
) -> GradeReport:
    """``grade_outcome``'s report alone, for whoever only reads it (the command line,
    checks, calibration)."""
    return grade_outcome(
        problem,
        source,
        mode=mode,
        device=device,
        runner=runner,
        trusted=trusted,
        variant=variant,
        limits=limits,
        whole=whole,
    ).report


def grade_reference(
    problem: Problem,
    device: str,
    *,
    runner: Runner | None = None,
    trusted: TrustedOutputs | None = None,
) -> GradeReport:
    """The reference graded as a submission on variant 0, with no CPU limit and a
    generous wall clock: the run calibration measures (grader/calibration.py) and
    `jaxjudge check` inspects. An untrusted author's reference gets a CPU limit too:
    ``UNTRUSTED_CPU_FACTOR`` times a learner's provisional budget."""
    wall = max(
        problem.config.limits.wall_seconds, BACKSTOP_FACTOR * problem.config.limits.cpu_seconds
    )
    cpu = None
    if not problem.trusted:
        learner = calibration.provisional_limits(problem).cpu_seconds or wall
        cpu = expected.UNTRUSTED_CPU_FACTOR * learner
    return grade(
        problem,
        problem.reference_source,
        device=device,
        runner=runner,
        trusted=trusted,
        variant=0,
        limits=TimeLimits(cpu, 2 * wall),
    )


def measure_reference(
    problem: Problem,
    device: str,
    *,
    runner: Runner | None = None,
    trusted: TrustedOutputs | None = None,
) -> float | None:
    """The reference's CPU seconds graded as a submission (``grade_reference``), or None
    when it is not accepted: what calibration multiplies."""
    report = grade_reference(problem, device, runner=runner, trusted=trusted)
    return report.cpu_seconds if report.accepted else None


@dataclass
class HeldRun:
    """A run that passed every sample, its child paused before the hidden cases of a
    secret draw (``variant``): ``job`` is that draw's submit, whose first phase the run
    was. grader/parking.py continues it for the learner's next submission."""

    problem: Problem
    child: StartedChild
    job: Job
    variant: int
    outcome: RunOutcome
    trusted: TrustedOutputs
    limits: TimeLimits
    whole: Callable[[], TrustedOutputs] | None = None  # as ``grade``'s

    def submit_report(self) -> GradeReport:
        """The submission's report once the child has finished its hidden phase."""
        if (
            not self.trusted.diagnoses_ready
            and self.whole is not None
            and _kept_wrong(self.outcome)
        ):
            judge = judge_for(self.problem, self.job, self.variant, self.trusted)
            judge.match_later(self.outcome, self.whole())
        report = build_report(
            self.problem, Mode.SUBMIT, self.variant, self.job, self.outcome, self.trusted
        )
        report.cpu_seconds = (
            None if self.outcome.cpu_seconds is None else round(self.outcome.cpu_seconds, 3)
        )
        report.cpu_limit_seconds = self.limits.cpu_seconds
        return report


def run_and_hold(
    problem: Problem,
    source: str,
    *,
    device: str,
    runner: PausingRunner,
    trusted: TrustedOutputs,
    limits: TimeLimits,
    variant: int,
    whole: Callable[[], TrustedOutputs] | None = None,
) -> tuple[GradingOutcome, HeldRun | None]:
    """A run of ``source`` (its samples: the same grading as ``grade`` in run mode) as the
    first phase of a submit on ``variant``'s hidden cases; when every sample passes,
    the child is kept, paused before those hidden cases (``HeldRun``), the report
    already made. The hidden inputs are not in the child yet: the report and the
    output it shows are sealed before they are sent."""
    started = time.monotonic()
    chosen = variant % problem.config.variants
    try:  # phase 1: the author tests' calls, drawn in a sandbox
        tests = author_tests.draw_for(problem, Mode.SUBMIT, chosen)
    except ProblemError as error:
        return tests_failed(problem, Mode.RUN, error), None
    job = learner_job(problem, source, Mode.SUBMIT, chosen, device, limits, tests)
    pause = Pause()
    outcome = runner.run(job, judge_for(problem, job, chosen, trusted), pause)
    first_phase = replace(job, hidden_cases=())
    # What the run reports is a copy: the paused child's outcome goes on filling.
    seen = pause.child.collector.snapshot() if pause.child is not None else outcome
    report = build_report(problem, Mode.RUN, chosen, first_phase, seen, trusted)
    report.seconds = round(time.monotonic() - started, 3)
    report.cpu_seconds = None if seen.cpu_seconds is None else round(seen.cpu_seconds, 3)
    report.cpu_limit_seconds = limits.cpu_seconds
    graded = GradingOutcome(report, retry_later=bool(seen.startup_error))
    if pause.child is None:
        return graded, None
    if not report.accepted:
        pause.child.close()
        return graded, None
    return graded, HeldRun(problem, pause.child, job, chosen, outcome, trusted, limits, whole)
