"""Each problem's time limits, calibrated against its reference on this machine.

A learner's job may use ``CPU_FACTOR`` times the CPU time the reference needs when it
is graded as a submission here (sandbox, samples, probes and one variant's hidden
cases), and never less than the problem's floor (``limits.cpu_seconds``); the wall
clock is a backstop (grader/running/timing.py). The reference's CPU time is measured once per
machine, problem version and runtime, by grading it (`jaxjudge prepare`, the server's
preparation, `jaxjudge check`, or the first grading that finds none) and kept in
``var/cache/calibration/``. Until a problem is calibrated its limits are provisional:
as much CPU time as the problem's wall-clock budget, the old rule.

Calibration measures CPU time, not wall time, so it means the same on a busy machine:
XLA's compile threads make CPU time a little larger than on a quiet one, which the
factor absorbs many times over.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader.config import settings
from grader.expected import cache_key
from grader.problems.problem import Problem
from grader.running.timing import TimeLimits

log = logging.getLogger("jaxjudge.calibration")
CPU_FACTOR = 5.0


@dataclass(frozen=True)
class Calibration:
    """The reference's CPU seconds as a submission on this machine, and the CPU count
    it was measured with."""

    reference_cpu_seconds: float
    cpus: int

    def limits(self, problem: Problem) -> TimeLimits:
        floor = problem.config.limits.cpu_seconds
        budget = max(floor, CPU_FACTOR * self.reference_cpu_seconds)
        return TimeLimits.for_budget(round(budget, 1), problem.config.limits.wall_seconds)


def provisional_limits(problem: Problem) -> TimeLimits:
    """Before calibration: CPU time as large as the wall-clock budget, the old rule."""
    limits = problem.config.limits
    return TimeLimits(max(limits.cpu_seconds, limits.wall_seconds), limits.wall_seconds)


def _path(problem: Problem, device: str) -> Path:
    key = cache_key(problem, device)
    return settings.data_dir / "cache" / "calibration" / f"{problem.slug}-{device}-{key}.json"


def load(problem: Problem, device: str) -> Calibration | None:
    try:
        data = json.loads(_path(problem, device).read_text())
        calibration = Calibration(float(data["reference_cpu_seconds"]), int(data["cpus"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return calibration if calibration.cpus == (os.cpu_count() or 1) else None


def store(problem: Problem, device: str, reference_cpu_seconds: float) -> Calibration:
    calibration = Calibration(round(reference_cpu_seconds, 3), os.cpu_count() or 1)
    path = _path(problem, device)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        json.dump(vars(calibration), handle)
    os.replace(temporary, path)
    return calibration


def limits_for(problem: Problem, device: str) -> TimeLimits:
    """The calibrated limits if this machine has measured them, else provisional ones."""
    calibration = load(problem, device)
    return calibration.limits(problem) if calibration else provisional_limits(problem)


# Grades the reference (a sandbox, no CPU limit) and returns its CPU seconds, or None.
Measure = Callable[[Problem, str], float | None]


def ensure(problem: Problem, device: str, measure: Measure) -> TimeLimits:
    """The calibrated limits, measuring the reference now if nobody has on this machine
    (one measurement at a time per problem, across processes: a lock file)."""
    if (found := load(problem, device)) is not None:
        return found.limits(problem)
    path = _path(problem, device)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (found := load(problem, device)) is not None:
            return found.limits(problem)
        seconds = measure(problem, device)
        if seconds is None:
            log.error("calibrating %s failed: its reference was not accepted", problem.slug)
            return provisional_limits(problem)
        limits = store(problem, device, seconds).limits(problem)
        log.info(
            "calibrated %s on the %s: the reference uses %.2f s of CPU; learners get %.1f s"
            " (wall-clock backstop %.0f s)",
            problem.slug,
            device,
            seconds,
            limits.cpu_seconds or 0.0,
            limits.wall_seconds,
        )
        return limits
