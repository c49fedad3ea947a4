"""`jaxjudge check`: prove a problem folder is gradeable and its cases discriminate.

For each problem: the schema and files load; cases are deterministic for
every seed and follow the variant contract (grader/cases.py), and cover every
promised regime in every variant; the reference and the mistakes run on the
samples and every variant's hidden cases (one trusted child, or this machine's
cache of exactly that run); the reference is graded through the learner path on a fixed
variant and accepted, with outputs equal to the trusted run (a second process:
determinism across runs); the starter is not accepted; and on *every* variant
every mistake is rejected by at least one hidden case where it sits at least
``SEPARATION`` tolerances away from the reference, or by the problem's structure
or memory requirements (grader/judging/requirements.py; the reference, graded, meets them).

The web platform runs this check for authors in the background and keeps its report
with the version (app/grading/author_checks.py), with the lines ``progress`` hears as
each stage ends. An untrusted problem (``trusted=False``: a course's) is checked with
every piece of its author's code in sandboxes (grader/author_code.py, grader/expected.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grader import author_code, calibration, expected, tests_proof
from grader.cases import case_key, same_value
from grader.child.verdicts import Verdict, headline
from grader.errors import ProblemError
from grader.grade import grade, grade_reference
from grader.judging.report import GradeReport
from grader.judging.trees import compare_output
from grader.judging.trusted import Outputs, TrustedOutputs
from grader.problems.problem import Part, Problem, load_problem
from grader.problems.scaffold import leftover_todos

SEPARATION = 10.0
MIN_MISTAKES = 4
MIN_REGIMES = 2
# Two runs of the reference must agree far inside the tolerance.
DETERMINISM_FRACTION = 0.01


@dataclass
class CheckResult:
    slug: str
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Where the scaffold's TODO markers are left (``file:line``): shown to the author,
    # never a failure (a fresh scaffold passes as it stands; docs/authoring.md).
    todos: list[str] = field(default_factory=list)
    # What cases.py generated: samples, hidden cases per variant, variants (the preview
    # shows them; counting them means running cases.py, which the check does anyway).
    cases: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    # The mistake that comes closest to passing, by its best hidden case on its worst
    # variant, in tolerances (requirement-rejected mistakes and errors do not count).
    weakest: tuple[str, float] | None = None

    @property
    def ok(self) -> bool:
        return not self.errors


def _cases_deterministic(problem: Problem) -> str | None:
    again = problem.cases_again()
    for (key, first), (_, second) in zip(problem.case_bank.keyed(), again.keyed(), strict=True):
        for name, value in first.args.items():
            other = second.args[name]
            if not same_value(value, other):
                return f"cases.py: case {key!r} argument {name!r} differs between two generations; derive every random generator from the seed"
    return None


def separation(
    problem: Problem,
    reference: Outputs,
    candidate: Outputs | None,
    device: str = "cpu",
    part: Part | None = None,
) -> float:
    """How many of ``device``'s tolerances (of ``part``, else the first) `candidate` is
    from the reference (inf when not comparable)."""
    if candidate is None:
        return float("inf")
    worst = 0.0
    for index, (want, got) in enumerate(zip(reference, candidate, strict=True)):
        result = compare_output(got, want, problem.tolerance(index, device, part=part))
        worst = max(
            worst, float("inf") if result.tolerance_ratio is None else result.tolerance_ratio
        )
    return worst


def _best_separation(
    problem: Problem, trusted: TrustedOutputs, mistake: str, variant: int, device: str
) -> tuple[str, float]:
    """The hidden case of ``variant`` that puts ``mistake`` furthest from the reference,
    in ``device``'s tolerances: among the cases of the parts it defines."""
    outputs = trusted.mistakes.get(mistake, {})
    source = next(m.source for m in problem.mistakes if m.name == mistake)
    defined = {part.name for part in problem.parts_defined_by(source)}
    gaps = {
        case_key(case, variant): separation(
            problem,
            trusted.reference[case_key(case, variant)],
            outputs.get(case_key(case, variant)),
            device,
            problem.part_of(case),
        )
        for case in problem.case_bank.for_variant(variant)
        if problem.part_of(case).name in defined or not problem.has_parts
    }
    return max(gaps.items(), key=lambda item: item[1])


def _check_mistakes(
    problem: Problem, trusted: TrustedOutputs, result: CheckResult, device: str
) -> None:
    """Every mistake rejected on every variant by ``SEPARATION`` tolerances of the device
    checked on, and of every other device whose tolerance the problem states (measured
    on this device's outputs: how far a mistake sits from the reference is the
    mistake's, not the device's)."""
    if len(problem.mistakes) < MIN_MISTAKES:
        result.errors.append(
            f"mistakes/: {len(problem.mistakes)} known mistake(s); at least {MIN_MISTAKES} are required"
            " (one .py file each, docstring first line = diagnosis)"
        )
    for mistake in problem.mistakes:
        where = f"mistakes/{mistake.name}.py"
        if problem.has_parts and not problem.parts_defined_by(mistake.source):
            entry_points = ", ".join(part.entry_point for part in problem.parts)
            result.errors.append(
                f"{where}: defines none of the parts' entry points ({entry_points}); a mistake"
                " defines the functions it gets wrong"
            )
            continue
        unmet = trusted.unmet.get(mistake.name)
        if unmet:  # its outputs may be right; how it computes them is not
            result.notes.append(
                f"{where}: rejected on all {problem.case_bank.variants} variants by the"
                f" problem's requirements: {unmet}"
            )
            continue
        for tolerance_of in dict.fromkeys((device, *problem.tolerance_devices)):
            _check_separation(problem, trusted, result, mistake.name, tolerance_of, device)


def _check_separation(
    problem: Problem,
    trusted: TrustedOutputs,
    result: CheckResult,
    mistake: str,
    tolerance_of: str,
    device: str,
) -> None:
    where = f"mistakes/{mistake}.py"
    if problem.has_parts:
        source = next(m.source for m in problem.mistakes if m.name == mistake)
        where += f" (part {', '.join(p.name for p in problem.parts_defined_by(source))})"
    whose = "the tolerance" if tolerance_of == device else f"the {tolerance_of.upper()}'s tolerance"
    # Every variant must reject it: a learner gets one at random.
    per_variant = [
        _best_separation(problem, trusted, mistake, variant, tolerance_of)
        for variant in range(problem.case_bank.variants)
    ]
    weakest_case, weakest = min(per_variant, key=lambda item: item[1])
    if (
        tolerance_of == device
        and weakest != float("inf")
        and (result.weakest is None or weakest < result.weakest[1])
    ):
        result.weakest = (mistake, weakest)
    failing = [v for v, (_, gap) in enumerate(per_variant) if gap < SEPARATION]
    if (
        failing
        and tests_proof.has_tests(problem)
        and _rejected_by_tests(problem, trusted, mistake, failing, device)
    ):
        result.notes.append(
            f"{where}: rejected on all {len(per_variant)} variants, by a test of tests.py where"
            f" no hidden case separates it ({len(failing)} variant(s))"
        )
    elif weakest < SEPARATION:
        result.errors.append(
            f"{where}: on variant {weakest_case.rsplit('@', 1)[-1]} no hidden case separates it"
            f" from the reference by {SEPARATION:g}x {whose} (best:"
            f" {weakest_case!r} at {weakest:.3g}x); change the hidden cases or the tolerance"
        )
    elif weakest == float("inf"):
        result.notes.append(
            f"{where}: rejected on all {len(per_variant)} variants by an error or a wrong shape"
            f" (e.g. {weakest_case!r})"
        )
    else:
        result.notes.append(
            f"{where}: rejected on all {len(per_variant)} variants, weakest best separation"
            f" {weakest:.3g}x {whose} on {weakest_case!r}"
        )


def _rejected_by_tests(
    problem: Problem, trusted: TrustedOutputs, mistake: str, variants: list[int], device: str
) -> bool:
    source = next(m.source for m in problem.mistakes if m.name == mistake)
    return tests_proof.rejects(problem, source, variants, trusted, device)


class _Progress:
    """Tells ``progress`` one line as each stage ends, then the errors and notes that
    stage added, in the words ``render`` uses."""

    def __init__(self, result: CheckResult, progress: Callable[[str], None] | None) -> None:
        self.result, self.progress = result, progress
        self.errors = self.notes = 0

    def __call__(self, line: str) -> None:
        if self.progress is not None:
            self.progress(line)
        self.flush()

    def flush(self) -> None:
        """The errors and notes added since the last line."""
        if self.progress is None:
            return
        for error in self.result.errors[self.errors :]:
            self.progress(f"  error: {error}")
        for note in self.result.notes[self.notes :]:
            self.progress(f"  {note}")
        self.errors, self.notes = len(self.result.errors), len(self.result.notes)


def check_problem(
    folder: Path,
    *,
    device: str = "cpu",
    trusted: bool = True,
    progress: Callable[[str], None] | None = None,
    children: int = 1,
) -> CheckResult:
    """Validate one problem folder; the trusted runs and gradings on ``device`` (each
    device has its own expected outputs: reduction order and TF32 differ). ``trusted``:
    whether its author's code may run outside sandboxes (``load_problem``'s);
    ``progress``: called with one line per stage as the check goes (and the stage's
    errors and notes after it), ending with the verdict; ``children``: how many children
    share the reference's and mistakes' run (`jaxjudge check` on a machine of its own:
    one per core). An untrusted author's code runs (in sandboxes) within a check alone
    (grader/author_code.py ``checking``)."""
    with author_code.checking():
        return _check(folder, device, trusted, progress, children)


def _check(
    folder: Path,
    device: str,
    trusted: bool,
    progress: Callable[[str], None] | None,
    children: int,
) -> CheckResult:
    result = CheckResult(slug=folder.name)
    say = _Progress(result, progress)
    started = time.monotonic()
    try:
        problem = load_problem(folder, trusted=trusted)
        who = "trusted" if trusted else "not trusted: its code runs in sandboxes"
        say(f"loaded {len(problem.mistakes)} known mistake(s); the author is {who}")
        bank = problem.case_bank  # loads and validates cases.py, every variant
    except ProblemError as error:
        result.errors.append(str(error))
        say("loading failed")
        say(_verdict(result))
        return result
    say(
        f"cases generated for {bank.variants} variants: {len(bank.samples)} sample(s),"
        f" {len(bank.for_variant(0))} hidden case(s) each"
        + (f", {len(bank.probes)} memory probe(s)" if bank.probes else "")
    )
    result.todos = leftover_todos(problem.source)
    result.cases = {
        "samples": len(problem.case_bank.samples),
        "hidden": len(problem.case_bank.for_variant(0)),
        "variants": problem.case_bank.variants,
    }
    if _cases_are_deterministic(problem, result):
        say("cases: a second generation gives the same inputs")
        _check_regimes(problem, result)
        say(f"regimes: {len(problem.config.regimes)} promised")
        _check_runs(problem, result, device, say, children)
        if result.weakest is not None:
            name, gap = result.weakest
            result.notes.append(
                f"weakest separation: mistakes/{name}.py at {gap:.3g}x the tolerance"
            )
            say.flush()
    else:
        say("cases: two generations differ")
    result.timings["total"] = time.monotonic() - started
    say(_verdict(result))
    return result


def _verdict(result: CheckResult) -> str:
    if result.ok:
        return f"verdict: ok in {result.timings.get('total', 0.0):.0f} s"
    return f"verdict: FAILED with {len(result.errors)} error(s)"


def _check_regimes(problem: Problem, result: CheckResult) -> None:
    """Every regime problem.toml promises has a predicate in cases.py, and every
    variant has a hidden case in it: a case set catches only the mistakes its inputs
    exercise."""
    promised = {regime.name: regime for regime in problem.config.regimes}
    answers = problem.regime_answers
    if answers.invalid is not None:
        result.errors.append(answers.invalid)
        return
    tests = set(answers.covering) | set(answers.errors)
    if len(promised) < MIN_REGIMES:
        result.errors.append(
            f"problem.toml: {len(promised)} regime(s) promised; at least {MIN_REGIMES} are required"
            " ([[regimes]] with a name and the statement's promise, and a predicate for each in"
            " cases.py regimes())"
        )
    for name in sorted(set(tests) - set(promised)):
        result.errors.append(
            f"cases.py: regimes() names {name!r}, which problem.toml does not promise"
        )
    for name, regime in promised.items():
        if name not in tests:
            result.errors.append(f"cases.py: regimes() has no predicate for {name!r}")
            continue
        if name in answers.errors:
            result.errors.append(answers.errors[name])
            continue
        covering = answers.covering[name]
        empty = [v for v, names in enumerate(covering) if not names]
        if empty:
            result.errors.append(
                f"regime {name!r} ({regime.promise}): no hidden case of variant"
                f" {empty[0]} is in it ({len(empty)} variant(s) without one); add hidden cases"
                " that exercise it in every variant"
            )
        else:
            fewest = min(covering, key=len)
            result.notes.append(
                f"regime {name!r}: in every variant (at least {len(fewest)} hidden case(s),"
                f" e.g. {', '.join(fewest[:3])})"
            )


def _cases_are_deterministic(problem: Problem, result: CheckResult) -> bool:
    try:
        message = _cases_deterministic(problem)
    except ProblemError as error:
        message = str(error)
    if message:
        result.errors.append(message)
    return message is None


def _check_runs(
    problem: Problem,
    result: CheckResult,
    device: str,
    say: Callable[[str], None],
    children: int,
) -> None:
    try:
        # The trusted outputs of exactly this folder, reference and runtime: from this
        # machine's cache when an earlier run (`prepare`, another check) left them,
        # else computed now and left there (publishing then finds them ready). Either
        # way the reference graded below, in another process, must agree with them.
        trusted = expected.load_or_compute(problem, device, children=children)
    except expected.ReferenceRunError as error:
        result.errors.append(f"{problem.reference_path.name}: {error}")
        say("reference and mistakes: the run failed")
        return
    where = "" if problem.trusted else " in a sandbox"
    if expected.trusted_runs_compiled(problem):
        where += f", compiled ({expected.compile_signatures(problem)} compile signature(s))"
    else:
        where += ", op by op"
    if trusted.from_cache:
        result.notes.append("reference and mistakes: outputs from this machine's cache")
        say(
            f"reference and mistakes run on every variant{where} (outputs from this machine's cache)"
        )
    else:
        result.timings["reference and mistakes"] = trusted.seconds
        say(f"reference and mistakes run on every variant{where} in {trusted.seconds:.1f} s")
    _check_mistakes(problem, trusted, result, device)
    say(f"mistakes: {len(problem.mistakes)} checked for separation on every variant")

    # The run calibration measures (grade_reference), kept here for its report too.
    reference_report = grade_reference(problem, device, trusted=trusted)
    if reference_report.accepted and reference_report.cpu_seconds is not None:
        limits = calibration.store(problem, device, reference_report.cpu_seconds).limits(problem)
        result.notes.append(
            f"limits: the reference used {reference_report.cpu_seconds:.2f} s of CPU graded as a"
            f" submission; learners get {limits.cpu_seconds:g} s of CPU, {limits.wall_seconds:g} s"
            " of wall clock"
        )
    result.timings["reference graded"] = reference_report.seconds or 0.0
    _reference_verdict(problem, result, reference_report, device)
    if tests_proof.has_tests(problem):
        result.errors += tests_proof.errors_of_tests(problem, trusted, device)
        say("tests.py: drawn twice with the same seed; the reference judged on every variant")
    say(
        "reference graded as a submission: "
        + ("accepted; limits calibrated" if reference_report.accepted else "not accepted")
    )

    starter_report = grade(problem, problem.starter, device=device, trusted=trusted, variant=0)
    result.timings["starter graded"] = starter_report.seconds or 0.0
    accepted_parts = [p.name for p in starter_report.parts if p.verdict is Verdict.ACCEPTED]
    if starter_report.accepted:
        result.errors.append(
            "starter.py: the starter is accepted as it is; it must leave the work to the learner"
        )
    elif problem.has_parts and accepted_parts:
        result.errors.append(
            f"starter.py: part {accepted_parts[0]!r} is accepted as it is; the starter must"
            " leave every part's work to the learner"
        )
    elif starter_report.verdict is Verdict.INTERNAL_ERROR:
        result.errors.append(f"starter.py: grading it failed internally: {starter_report.message}")
    else:
        result.notes.append(f"starter: {headline(starter_report.verdict).lower()}, as it should be")
    say(
        "starter graded: "
        + ("accepted (it must not be)" if starter_report.accepted else "rejected")
    )


def _reference_verdict(
    problem: Problem, result: CheckResult, reference_report: GradeReport, device: str
) -> None:
    if not reference_report.accepted:
        failing = next(
            (c for c in reference_report.cases if c.verdict is not Verdict.ACCEPTED), None
        )
        of = f" (part {failing.part})" if failing and failing.part else ""
        detail = (
            f" on case {failing.name!r}{of}: {failing.message}"
            if failing
            else f": {reference_report.message}"
        )
        result.errors.append(
            f"reference is not accepted when graded as a submission ({headline(reference_report.verdict)}){detail};"
            " it is not deterministic across runs, or its outputs vary by more than the tolerance"
        )
    else:
        worst = max((c.max_abs_error or 0.0) for c in reference_report.cases)
        tightest = min(
            part.tolerance(i, device).atol
            for part in problem.parts
            for i in range(len(part.outputs))
        )
        if worst > DETERMINISM_FRACTION * max(tightest, 1e-12) and worst > 0:
            result.notes.append(
                f"reference: two runs differ by up to {worst:.3g} (inside the tolerance)"
            )
        else:
            result.notes.append("reference: accepted; two runs agree")


def render(result: CheckResult, *, verbose: bool = False) -> str:
    status = "ok" if result.ok else "FAILED"
    timing = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in result.timings.items())
    lines = [f"{result.slug}: {status}" + (f" ({timing})" if timing else "")]
    lines += [f"  error: {error}" for error in result.errors]
    lines += [f"  todo: {where}: still holds the scaffold's TODO" for where in result.todos]
    if verbose or not result.ok:
        lines += [f"  {note}" for note in result.notes]
    return "\n".join(lines)
