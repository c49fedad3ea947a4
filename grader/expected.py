"""Trusted outputs: the reference's (what learners are compared with) and each
known mistake's (what diagnoses are matched against).

They are computed by running the reference and the mistakes together in one
trusted child process, in the same runtime learners get, on the samples and
on every variant's hidden cases, and cached on disk by a hash of everything
they depend on: the problem folder, the reference file, the library versions
and the device kind. Outputs are filed by case key (grader/cases.py
``case_key``). They never travel to a learner's child, and neither does the
trusted compilation cache these runs fill.

An untrusted problem's (a course's: ``Problem.trusted`` is false) reference and
mistakes are author code the grader does not trust: they run in the learner
sandbox (grader/running/sandbox.py) with the problem's memory limit and a finite
CPU budget (``UNTRUSTED_CPU_FACTOR`` times a learner's, per solution), never with
the trusted compilation cache and never in a plain process; their outputs come back
through the same frame validation as a learner's. Only what this process makes of
them (the outputs filed here, the calibration) is kept. Outside a check
(grader/author_code.py ``checking``) they never run: the outputs a passing check left
(``stored_bytes``, kept with the version by the platform, ``restore``d here) are used;
for a device or runtime the check did not run on, ``derive`` runs the reference and
mistakes once more, in a sandbox, on the check's bank, and keeps them only if they agree
with the check's outputs (else, and with nothing stored, ``CheckResultsMissingError``).
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from grader import author_code  # also lets untrusted problems' cases.py run, sandboxed
from grader.cases import Case, argument_signature
from grader.child.run import static_argnums
from grader.child.verdicts import Verdict
from grader.config import settings
from grader.errors import CheckResultsMissingError, DerivationRefusedError
from grader.judging.job import Job, RunOutcome, Solution, job_for
from grader.judging.requirements import unmet_requirement
from grader.judging.trees import Output, OutputTree, compare_output
from grader.judging.trusted import Outputs, TrustedOutputs
from grader.problems.problem import Problem
from grader.running.launch import PlainLauncher, clean_environment
from grader.running.sandbox import SandboxLauncher
from grader.running.supervise import ProcessRunner, Runner
from grader.versions import EXECUTION, runtime_record, runtime_versions

# An untrusted author's solution may use this many times a learner's CPU budget.
UNTRUSTED_CPU_FACTOR = 3.0


class ReferenceRunError(Exception):
    """The reference solution did not produce an output for every case."""


def runtime_key(device: str) -> str:
    """What ``cache_key`` says of the runtime: libraries, execution, environment, device."""
    digest = hashlib.sha256()
    _runtime(digest, device)
    return digest.hexdigest()[:32]


def _runtime(digest: Any, device: str) -> None:
    for name, value in sorted(runtime_versions().items()):
        digest.update(f"{name}={value}\0".encode())
    digest.update(
        f"{EXECUTION}\0{clean_environment(device, '/', settings.pool_memory_mb)}\0".encode()
    )
    digest.update(device.encode())


def cache_key(problem: Problem, device: str) -> str:
    digest = hashlib.sha256()
    for path in sorted(problem.folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(problem.folder)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    digest.update(problem.reference_path.read_bytes() + b"\0")
    _runtime(digest, device)
    if not problem.trusted:  # outputs of sandboxed runs, never mistaken for trusted ones
        digest.update(b"\0untrusted")
    return digest.hexdigest()[:32]


def trusted_job(problem: Problem, device: str, *, mistakes: bool = True) -> Job:
    """The reference and every mistake (or the reference alone) on the samples and every
    variant's hidden cases."""
    solutions = [Solution("reference", problem.reference_source, filename="reference.py")]
    if mistakes:
        solutions += [
            Solution(m.name, m.source, filename=f"mistakes/{m.name}.py") for m in problem.mistakes
        ]
    limits = problem.config.limits
    bank = problem.case_bank
    cases = tuple(case for _key, case in bank.keyed())
    # A learner's budget per solution, scaled by how many more cases this run has.
    scale = len(cases) / (len(bank.first_phase) + len(bank.for_variant(0)))
    # Trusted runs have a wall clock alone (CPU time None), generous enough for a
    # machine under a class's load; an untrusted author's have a CPU budget as well.
    wall_seconds = max(limits.wall_seconds, limits.cpu_seconds) * len(solutions) * scale
    return job_for(
        problem,
        # The samples and probes compile even op by op: requirements are read from them.
        compile_first=len(bank.first_phase) if problem.has_requirements else 0,
        solutions=tuple(solutions),
        cases=cases,
        wall_seconds=wall_seconds,
        cpu_seconds=None if problem.trusted else UNTRUSTED_CPU_FACTOR * wall_seconds,
        memory_mb=limits.memory_mb,
        device=device,
        compiled=trusted_runs_compiled(problem),
    )


# ``trusted_runs = "auto"`` compiles when each program answers this many cases or more.
CASES_PER_PROGRAM = 4


def compile_signature(case: Case) -> tuple[object, ...]:
    """What a compiled call of an entry point on ``case`` depends on (grader/child/run.py
    ``_signature``): the value of every static argument (an integral float: a seed, a
    count) and every other argument's shapes and dtypes."""
    args = list(case.args.values())
    static = set(static_argnums(args))
    return tuple(arg if i in static else argument_signature(arg) for i, arg in enumerate(args))


def compile_signatures(problem: Problem) -> int:
    """How many programs the bank's cases make a compiled solution build: one per part
    and ``compile_signature``."""
    return len({(case.part, compile_signature(case)) for _key, case in problem.case_bank.keyed()})


def trusted_runs_compiled(problem: Problem) -> bool:
    """Whether the reference and mistakes run compiled (``trusted_runs`` in problem.toml;
    ``auto``: when few programs answer every variant's cases). Measured on 2 cores:
    scan-microbatched-grads 23.8 s op by op, 3.2 s compiled (4 programs for 66 cases);
    prng-layer-init's seed differs per variant (34 programs), and op by op wins."""
    mode = problem.config.trusted_runs
    if mode != "auto":
        return mode == "compiled"
    cases = sum(1 for _ in problem.case_bank.keyed())
    return compile_signatures(problem) * CASES_PER_PROGRAM <= cases


def runner_for(problem: Problem, runner: Runner | None = None) -> Runner:
    """What runs ``problem``'s reference and mistakes: ``runner`` if given, else a plain
    trusted child; an untrusted problem's always in a sandbox (a plain child refused)."""
    if problem.trusted:
        return runner or ProcessRunner()
    if isinstance(runner, ProcessRunner) and isinstance(runner.launcher, PlainLauncher):
        raise ReferenceRunError(
            "this problem's author is not trusted: its reference and mistakes run only in a"
            " sandbox, never in a plain process"
        )
    if runner is None and not settings.sandbox:
        raise ReferenceRunError(
            "this problem's author is not trusted: its reference and mistakes run only in a"
            " sandbox, and the sandbox is off (JAXJUDGE_SANDBOX=false)"
        )
    return runner or ProcessRunner(SandboxLauncher())


def _run_in_children(runner: Runner, job: Job, children: int) -> list[tuple[RunOutcome, int]]:
    """``job`` with its solutions dealt round-robin to ``children`` trusted children that
    run at once (the reference in the first): a problem computed alone, as `jaxjudge
    check` does, uses every core. Returns each solution's outcome and its index there."""
    indices = range(len(job.solutions))
    children = max(1, min(children, len(indices)))
    groups = [indices[first::children] for first in range(children)]
    if children == 1:
        outcome = runner.run(job)
        return [(outcome, index) for index in indices]
    parts = [replace(job, solutions=tuple(job.solutions[i] for i in group)) for group in groups]
    with ThreadPoolExecutor(max_workers=len(parts)) as executor:
        outcomes = list(executor.map(runner.run, parts))
    placed = {
        index: (outcome, position)
        for group, outcome in zip(groups, outcomes, strict=True)
        for position, index in enumerate(group)
    }
    return [placed[index] for index in indices]


def _describe_failure(outcome: RunOutcome, solution_index: int, case_index: int) -> str:
    solution = outcome.solutions[solution_index]
    if solution.error_verdict:
        return f"{solution.error_verdict.value}: {solution.message.strip()}"
    case = solution.cases.get(case_index)
    if case is None:
        if outcome.timed_out:
            return "time limit exceeded"
        return (
            outcome.protocol_error
            or outcome.startup_error
            or f"no result (exit status {outcome.exit_status})"
        )
    if case.error_verdict:
        return f"{case.error_verdict.value}: {case.message.strip()}"
    return "; ".join(_invalid_parts(case.outputs or []))


def _invalid_parts(outputs: list[Output]) -> list[str]:
    parts = [o for o in outputs if isinstance(o, str)]
    for tree in (o for o in outputs if isinstance(o, OutputTree)):
        parts += [
            f"leaf {path}: {leaf}"
            for path, leaf in zip(tree.paths, tree.leaves, strict=True)
            if isinstance(leaf, str)
        ]
    return parts


def _arrays(outcome: RunOutcome, solution_index: int, case_index: int) -> Outputs | None:
    case = outcome.solutions[solution_index].cases.get(case_index)
    if case is None or case.outputs is None or _invalid_parts(case.outputs):
        return None
    return [o for o in case.outputs if not isinstance(o, str)]


def _part_left_out(outcome: RunOutcome, solution_index: int, case_index: int) -> bool:
    """Whether the solution left this case's part out (it defines other parts' entry
    points): a mistake of one part is not run on the others."""
    solution = outcome.solutions[solution_index]
    case = solution.cases.get(case_index)
    return (
        solution.error_verdict is None
        and case is not None
        and case.error_verdict is Verdict.MISSING_ENTRY_POINT
    )


def compute(
    problem: Problem,
    device: str = "cpu",
    runner: Runner | None = None,
    *,
    mistakes: bool = True,
    children: int = 1,
) -> TrustedOutputs:
    """Run the reference and the mistakes (or the reference alone) on every case of every
    variant (trusted: a plain child with the trusted compilation cache; untrusted: a
    sandbox), the solutions shared among ``children`` children at once."""
    job = trusted_job(problem, device, mistakes=mistakes)
    runs = _run_in_children(runner_for(problem, runner), job, children)
    for outcome, _index in runs:
        if outcome.startup_error:
            raise ReferenceRunError(outcome.startup_error)
    keys = [key for key, _case in problem.case_bank.keyed()]
    trusted = TrustedOutputs(
        reference={},
        seconds=max(outcome.wall_seconds for outcome, _index in runs),
        runtime=runtime_record(device),
        diagnoses_ready=mistakes,
    )
    known = problem.mistakes if mistakes else []
    names = ["reference", *(mistake.name for mistake in known)]
    first = problem.case_bank.first_phase
    probes = [i for i, case in enumerate(first) if case.probe]
    for name, (outcome, index) in zip(names, runs, strict=True):
        unmet = unmet_requirement(problem, outcome.solutions[index], range(len(first)), probes)
        if unmet is not None:
            trusted.unmet[name] = unmet
    for case_index, key in enumerate(keys):
        arrays = _arrays(*runs[0], case_index)
        if arrays is None:
            reason = _describe_failure(*runs[0], case_index)
            raise ReferenceRunError(f"the reference failed on case {key!r}: {reason}")
        trusted.reference[key] = arrays
    for mistake_index, mistake in enumerate(known, start=1):
        outputs = trusted.mistakes.setdefault(mistake.name, {})
        errors = trusted.mistake_errors.setdefault(mistake.name, {})
        run = runs[mistake_index]
        for case_index, key in enumerate(keys):
            if _part_left_out(*run, case_index):
                continue  # judged only on the parts whose entry points it defines
            arrays = _arrays(*run, case_index)
            if arrays is None:
                errors[key] = _describe_failure(*run, case_index)
            else:
                outputs[key] = arrays
    return trusted


def _entries(prefix: str, outputs: Outputs) -> dict[str, np.ndarray[Any, Any]]:
    """One case's outputs as archive entries: ``{prefix}/{i}`` for an array; for a
    tree, ``{prefix}/{i}.paths`` and ``{prefix}/{i}.{j}`` for its j-th leaf."""
    entries: dict[str, np.ndarray[Any, Any]] = {}
    for i, output in enumerate(outputs):
        if isinstance(output, OutputTree):
            entries[f"{prefix}/{i}.paths"] = np.array(output.paths, dtype=np.str_)
            entries.update(
                {f"{prefix}/{i}.{j}": leaf for j, leaf in enumerate(output.arrays().values())}
            )
        else:
            entries[f"{prefix}/{i}"] = output
    return entries


def _outputs(entries: dict[str, np.ndarray[Any, Any]]) -> Outputs:
    """The inverse of ``_entries`` for one case (keys without the prefix)."""
    outputs: Outputs = []
    for i in range(len({key.split(".")[0] for key in entries})):
        if f"{i}.paths" in entries:
            paths = tuple(str(p) for p in entries[f"{i}.paths"])
            leaves = tuple(entries[f"{i}.{j}"] for j in range(len(paths)))
            outputs.append(OutputTree(paths, leaves))
        else:
            outputs.append(entries[str(i)])
    return outputs


def _save(path: os.PathLike[str], trusted: TrustedOutputs) -> None:
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    for case, outputs in trusted.reference.items():
        arrays.update(_entries(f"reference/{case}", outputs))
    for mistake, cases in trusted.mistakes.items():
        for case, outputs in cases.items():
            arrays.update(_entries(f"mistake/{mistake}/{case}", outputs))
    for name, why in trusted.unmet.items():
        arrays[f"unmet/{name}/why"] = np.array([why], dtype=np.str_)
    arrays["runtime/record"] = np.array([json.dumps(trusted.runtime, sort_keys=True)])
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        np.savez(handle, allow_pickle=False, **arrays)
    os.replace(temporary, path)  # atomic: concurrent writers each leave a whole file


def _load(path: Path) -> TrustedOutputs:
    """The outputs in ``path``, read once per process for as long as the file is the
    same (a worker grades with them on every submission; reading costs 60-90 ms). No
    caller changes a ``TrustedOutputs``: a fresh run makes a new one."""
    stat = path.stat()
    return _read(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=32)
def _read(path: Path, _mtime_ns: int, _size: int) -> TrustedOutputs:
    return _parse(path, diagnoses_ready=not path.name.endswith(REFERENCE_ONLY))


def _parse(source: Path | io.BytesIO, *, diagnoses_ready: bool) -> TrustedOutputs:
    trusted = TrustedOutputs(reference={}, from_cache=True, diagnoses_ready=diagnoses_ready)
    by_case: dict[tuple[str, ...], dict[str, np.ndarray[Any, Any]]] = {}
    with np.load(source, allow_pickle=False) as archive:
        for key in archive.files:
            *where, entry = key.split("/")
            by_case.setdefault(tuple(where), {})[entry] = archive[key]
    for where, entries in by_case.items():
        if where[0] == "runtime":
            trusted.runtime = json.loads(str(entries["record"][0]))
        elif where[0] == "unmet":
            trusted.unmet[where[1]] = str(entries["why"][0])
        elif where[0] == "reference":
            trusted.reference[where[1]] = _outputs(entries)
        else:
            trusted.mistakes.setdefault(where[1], {})[where[2]] = _outputs(entries)
    return trusted


# The reference's outputs alone: enough to grade, not to diagnose (see ``for_grading``).
REFERENCE_ONLY = ".reference.npz"


def _path(problem: Problem, device: str, *, mistakes: bool = True) -> Path:
    name = f"{problem.slug}-{device}-{cache_key(problem, device)}"
    return settings.expected_cache_dir / (name + (".npz" if mistakes else REFERENCE_ONLY))


def load_or_compute(
    problem: Problem,
    device: str = "cpu",
    runner: Runner | None = None,
    *,
    mistakes: bool = True,
    children: int = 1,
) -> TrustedOutputs:
    """The cached outputs, or a trusted run now. Concurrent callers for the same
    outputs (the start-up preparation and a worker; two processes) wait for one
    run instead of repeating it: a file lock beside the cache file.

    ``mistakes=False``: the reference's outputs are enough (the whole set when it is
    there already), a fraction of the run. ``children``: how many children share a run
    (``compute``)."""
    whole = _path(problem, device)
    path = whole if mistakes else _path(problem, device, mistakes=False)
    for ready in (whole, path):
        if ready.is_file():
            return _load(ready)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for ready in (whole, path):
            if ready.is_file():  # another caller finished it while we waited
                return _load(ready)
        if not problem.trusted and not author_code.in_check():
            raise CheckResultsMissingError(
                problem.slug, f"no expected outputs for device {device!r}"
            )
        trusted = compute(problem, device, runner, mistakes=mistakes, children=children)
        _save(path, trusted)
        return trusted


def on_disk(problem: Problem, device: str = "cpu", *, mistakes: bool = True) -> bool:
    """Whether ``load_or_compute`` would read a file (no trusted run), without reading it."""
    return _path(problem, device).is_file() or (
        not mistakes and _path(problem, device, mistakes=False).is_file()
    )


def for_grading(
    problem: Problem, device: str = "cpu", *, reference_first: bool = False
) -> TrustedOutputs:
    """What a platform worker grades with: the whole set, or, while a server's
    preparation has computed only the reference's outputs so far (references come
    before mistakes at a first start, app/grading/preparation.py), those: the verdict
    is the same, only a known mistake cannot be named yet. With neither on disk: the
    reference's alone when ``reference_first`` (a preparation in this process runs the
    mistakes later), else the whole set now."""
    reference = _path(problem, device, mistakes=False)
    if not _path(problem, device).is_file() and reference.is_file():
        return _load(reference)
    return load_or_compute(problem, device, mistakes=not reference_first)


def stored_bytes(problem: Problem, device: str = "cpu") -> bytes:
    """The whole set of outputs (reference and mistakes) this machine keeps for
    ``problem`` on ``device``, to store with its version; OSError if there is none."""
    return _path(problem, device).read_bytes()


def parse_stored(problem: Problem, data: bytes) -> TrustedOutputs:
    """``data`` (``stored_bytes`` of a passing check, any device or runtime) read back,
    with the reference's outputs for every case of ``problem``'s bank; a ReferenceRunError
    if not."""
    try:
        trusted = _parse(io.BytesIO(data), diagnoses_ready=True)
    except (OSError, ValueError, KeyError, IndexError) as error:
        raise ReferenceRunError(f"the stored expected outputs are malformed ({error})") from None
    missing = [key for key, _case in problem.case_bank.keyed() if key not in trusted.reference]
    if missing:
        raise ReferenceRunError(f"the stored expected outputs lack case {missing[0]!r}")
    return trusted


def restore(problem: Problem, device: str, data: bytes) -> None:
    """Keep ``data`` (``stored_bytes`` of a passing check on this runtime, ``runtime_key``)
    as this machine's outputs for ``problem`` on ``device``, once they read back with the
    reference's outputs for every case of its bank; a ReferenceRunError if not."""
    parse_stored(problem, data)
    path = _path(problem, device)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(temporary, path)


def derive(
    problem: Problem,
    device: str,
    anchors: Sequence[TrustedOutputs],
    runner: Runner | None = None,
) -> TrustedOutputs:
    """An untrusted problem's outputs on a device or runtime its check did not run on
    (a GPU worker, an upgraded JAX): its reference and mistakes run now, in a sandbox, on
    the bank its check kept (the hidden inputs are the check's), and are kept here only if
    the reference's outputs agree with every one of ``anchors`` (what its checks stored,
    ``parse_stored``) within ``device``'s tolerance on every case. Otherwise, or if the
    reference fails there, ``DerivationRefusedError`` naming the device and the worst case:
    a reference that answers differently after its check (a time bomb) is never graded
    against. The one use of an untrusted author's code outside a check."""
    if not anchors:
        raise CheckResultsMissingError(problem.slug, "no stored expected outputs to agree with")
    path = _path(problem, device)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.is_file():  # another worker of this machine derived them while we waited
            return _load(path)
        try:
            derived = compute(problem, device, runner)  # sandboxed: runner_for
        except ReferenceRunError as error:
            raise DerivationRefusedError(problem.slug, device, str(error)) from None
        for anchor in anchors:
            why = _disagreement(problem, device, derived, anchor)
            if why is not None:
                raise DerivationRefusedError(problem.slug, device, why)
        _save(path, derived)
        return derived


def _disagreement(
    problem: Problem, device: str, derived: TrustedOutputs, anchor: TrustedOutputs
) -> str | None:
    """Why ``derived``'s reference does not agree with ``anchor``'s on every case within
    ``device``'s tolerance (its worst case), or None when it does."""
    worst: tuple[float, str, str] = (0.0, "", "")
    cases = dict(problem.case_bank.keyed())
    for key, outputs in derived.reference.items():
        want = anchor.reference.get(key)
        if want is None or len(want) != len(outputs):
            return f"its check stored no matching outputs for case {key!r}"
        for index, (got, expected_output) in enumerate(zip(outputs, want, strict=True)):
            part = problem.part_of(cases[key]) if key in cases else problem.parts[0]
            result = compare_output(got, expected_output, part.tolerance(index, device))
            ratio = float("inf") if result.tolerance_ratio is None else result.tolerance_ratio
            if not result.ok and ratio >= worst[0]:
                worst = (ratio, key, f"output {index}: {result.reason}")
    if not worst[1]:
        return None
    return (
        f"its reference's outputs differ from its check's, worst on case {worst[1]!r} ({worst[2]})"
    )


def store(problem: Problem, trusted: TrustedOutputs, device: str = "cpu") -> None:
    _save(_path(problem, device, mistakes=trusted.diagnoses_ready), trusted)


def longest_first(problems: list[Problem]) -> list[Problem]:
    """``problems`` in the order that keeps every core busy to the end of a preparation:
    the ones that run op by op first (their cases cost the most: 202-221 s for the two
    slowest of the bank on 2 cores), then the compiled ones, each by how many case runs
    (cases times solutions) it has, most first. Started last, one slow problem would run
    alone while the other cores wait (the bank's wall clock in alphabetical order)."""

    def cost(problem: Problem) -> tuple[bool, int]:
        runs = sum(1 for _ in problem.case_bank.keyed()) * (1 + len(problem.mistakes))
        return trusted_runs_compiled(problem), -runs

    return sorted(problems, key=cost)


def prepare_all(
    problems: list[Problem],
    device: str = "cpu",
    workers: int | None = None,
    *,
    mistakes: bool = True,
) -> Iterator[tuple[Problem, TrustedOutputs | Exception]]:
    """``load_or_compute`` for many problems, one trusted child per core at a time, started
    in the order given; yields each problem with its outputs (or what went wrong) as it
    finishes."""
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as executor:
        futures = {
            executor.submit(load_or_compute, problem, device, mistakes=mistakes): problem
            for problem in problems
        }
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except Exception as error:  # reported per problem; the others go on
                yield futures[future], error
