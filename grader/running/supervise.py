"""Run a job in a child process and supervise it to the end.

The parent owns every channel: the job goes in on the child's stdin, results
come back as frames on a dedicated pipe (grader/running/frames.py), and the child's
stdout/stderr are drained by a thread with a byte cap (grader/running/output.py).
Limits are applied from outside (grader/running/launch.py, grader/running/sandbox.py); the
wall clock by killing everything the child started. The wall clock starts
when the job is delivered, so start-up (imports) is never billed to the
learner.

A learner's job runs in two phases: the samples, then (after the child says
SAMPLES_DONE) the hidden cases, written by a separate thread so that a child
that stops reading can never block the supervisor past the time limit.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from grader.cases import Case
from grader.child import protocol
from grader.child.protocol import JobMessage, Kind, PartSpec, SourceRef
from grader.config import settings
from grader.judging.job import Job, RunOutcome
from grader.running.frames import CaseListener, FrameCollector
from grader.running.gpu_sharing import MemoryWatch
from grader.running.launch import Launcher, LaunchSpec, PlainLauncher, cpu_seconds_for
from grader.running.output import OutputDrain
from grader.running.timing import SandboxClock, machine_overloaded, process_tree, threads_of

log = logging.getLogger("jaxjudge.supervise")
STARTUP_SECONDS = 120.0
POLL_SECONDS = 0.05  # how often a running job's CPU time is read
NATIVE_LOG_KEEP = 8192  # bytes of a child's stderr kept for the operator's log
MAX_INPUT_ELEMENTS = 1 << 28
RLIMIT_CPU_SLACK = 5
CONFIRMATION_WALL_FACTOR = 4.0  # a time-out's confirmation on an overloaded machine
NICE_WHILE_AHEAD = 19  # a child working ahead of a submission (grader/parking.py)


def encode_job(job: Job, max_elements: int, address_space_bytes: int | None) -> bytes:
    """The JOB frame: solutions' sources, then the first cases' inputs."""
    refs: list[SourceRef] = []
    chunks: list[bytes] = []
    offset = 0
    for solution in job.solutions:
        raw = solution.source.encode()
        refs.append(SourceRef(solution.filename, offset, len(raw)))
        chunks.append(raw)
        offset += len(raw)
    cases, data = protocol.pack_cases([list(c.args.values()) for c in job.cases], offset)
    _name_parts(job, job.cases, cases)
    message = JobMessage(
        entry_point=job.entry_point,
        n_outputs=job.n_outputs,
        max_elements=max_elements,
        max_input_elements=MAX_INPUT_ELEMENTS,
        # The kernel's own stop, per process, a little past the supervisor's (which
        # counts every process of the sandbox and decides first).
        cpu_seconds=(
            cpu_seconds_for(job.wall_seconds)
            if job.cpu_seconds is None
            else math.ceil(job.cpu_seconds) + RLIMIT_CPU_SLACK
        ),
        address_space_bytes=address_space_bytes,
        solutions=tuple(refs),
        cases=tuple(cases),
        hidden_cases=len(job.hidden_cases),
        compiled=job.compiled,
        tree_outputs=tuple(sorted(job.tree_outputs)),
        analysed=job.analysed,
        compile_first=job.compile_first,
        parts=tuple(
            PartSpec(part.entry_point, part.n_outputs, tuple(sorted(part.tree_outputs)))
            for part in job.parts
        ),
    )
    return protocol.encode_frame(Kind.JOB, message.to_meta(), b"".join(chunks) + data)


def _name_parts(job: Job, cases: tuple[Case, ...], meta: list[dict[str, Any]]) -> None:
    """Each case's part (by index) on the wire, where the job calls several functions."""
    if job.parts:
        for case, entry in zip(cases, meta, strict=True):
            entry["part"] = job.part_index(case)


def encode_hidden_cases(job: Job) -> bytes:
    cases, data = protocol.pack_cases([list(c.args.values()) for c in job.hidden_cases])
    _name_parts(job, job.hidden_cases, cases)
    return protocol.encode_frame(Kind.HIDDEN_CASES, {"cases": cases}, data)


def can_renice() -> bool:
    """Whether this process may give a child's niceness back once lowered (root, or an
    RLIMIT_NICE that allows nice 0): only then is it lowered at all."""
    return os.geteuid() == 0 or resource.getrlimit(resource.RLIMIT_NICE)[0] >= 20


class Pause:
    """Asked of a learner's job with hidden cases: stop once every first case is in and
    keep the child, its hidden cases not yet sent (grader/parking.py continues it).
    ``child`` is the one that paused; None when the run ended before its samples did."""

    def __init__(self) -> None:
        self.child: StartedChild | None = None


class StartedChild:
    """A child process that is starting or waiting (after HELLO) for its one job."""

    def __init__(
        self,
        launcher: Launcher,
        *,
        device: str,
        memory_mb: int,
        boosted: bool = False,
        standby: bool = False,
        jax_only: bool = False,
    ) -> None:
        """``jax_only``: the child's one job names neither flax nor optax
        (``protocol.JAX_ONLY``); a pool's child, whose job is not known yet, imports them."""
        self.device = device
        self.boosted = (
            boosted  # confirming a time-out: a large CPU share (grader/running/timing.py)
        )
        self.max_elements = settings.max_output_elements
        self.collector = FrameCollector(self.max_elements)
        read_end, write_end = os.pipe()
        try:
            self.spec: LaunchSpec = launcher.launch(
                device=device, memory_mb=memory_mb, result_fd=write_end, standby=standby
            )
        except BaseException:
            os.close(read_end)
            os.close(write_end)
            raise
        try:
            self.process = subprocess.Popen(
                [*self.spec.argv, protocol.JAX_ONLY] if jax_only else self.spec.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(write_end, *self.spec.pass_fds),
                env=self.spec.env,
                cwd=self.spec.cwd,
                start_new_session=True,
            )
        except BaseException:
            os.close(read_end)
            for step in self.spec.cleanup:  # a GPU slot, a cgroup: nothing is left held
                step()
            raise
        finally:
            for fd in (write_end, *self.spec.pass_fds):
                os.close(fd)
        assert self.process.stdout is not None and self.process.stderr is not None
        self.drain = OutputDrain(settings.stdout_keep_bytes, settings.stdout_limit_bytes, self.kill)
        # fd 2: the runtime's native log lines (XLA, CUDA) for the operator; capped
        # like the learner's output, since learner code can write there too.
        self.native = OutputDrain(NATIVE_LOG_KEEP, settings.stdout_limit_bytes, self.kill)
        self.results = os.fdopen(read_end, "rb")
        self.threads = [
            threading.Thread(target=self.drain.read_all, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self.native.read_all, args=(self.process.stderr,), daemon=True),
            threading.Thread(
                target=self.collector.read_all,
                args=(self.results, settings.max_result_frame_bytes + (1 << 20), self.kill),
                daemon=True,
            ),
        ]
        for thread in self.threads:
            thread.start()
        self.closed = False
        self.stopped_by_us = False  # killed by this supervisor (a limit, the protocol), not outside
        self._clock: SandboxClock | None = None
        self._cpu_at_start = 0.0
        self._sched_at_start: Any = None
        self._started = 0.0
        self._watch: MemoryWatch | None = None

    def ready(self, timeout: float) -> bool:
        return self.collector.started(timeout) and self.process.poll() is None

    def backend_mismatch(self) -> str | None:
        """Why this child must not run a job for its device, if it must not: JAX started on
        another backend than the one asked for (a GPU that failed to initialise makes JAX
        fall back to the CPU; outputs compared with the wrong device's expected values
        would be wrong). Said in HELLO, before any job's code has run."""
        backend = self.collector.outcome.backend
        if backend == self.device:
            return None
        return f"the runtime started on {backend!r}, not on the {self.device!r} device asked for"

    def kill(self) -> None:
        if self.process.poll() is None:
            self.stopped_by_us = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.spec.kill_all:
            self.spec.kill_all()

    def _write(self, data: bytes, *, close: bool) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        with contextlib.suppress(BrokenPipeError, ValueError, OSError):
            stdin.write(data)
            stdin.flush()
            if close:
                stdin.close()

    def _deliver(self, job: Job, judge: CaseListener | None) -> None:
        """Bind the job's limits, then write its first phase."""
        if self.spec.set_memory_limit is not None:
            self.spec.set_memory_limit(job.memory_mb * 2**20)
        self._cgroup_share(busy=True)
        self.collector.bind(job, judge)
        frame = encode_job(job, self.max_elements, self.spec.address_space_bytes(job.memory_mb))
        self._write(frame, close=not job.hidden_cases)

    def _send_hidden_cases(self, job: Job) -> None:
        """The hidden cases, once every sample is reported and not before, written by a
        thread of their own: a child that stops reading cannot block the supervisor."""
        self.drain.cut()
        self.collector.hidden_sent()
        writer = threading.Thread(
            target=self._write,
            args=(encode_hidden_cases(job),),
            kwargs={"close": True},
            daemon=True,
        )
        writer.start()
        self.threads.append(writer)

    def _supervise(
        self,
        job: Job,
        outcome: RunOutcome,
        clock: SandboxClock,
        *,
        deadline: float,
        hidden_pending: bool,
        pause: bool = False,
    ) -> bool:
        """Until the child exits or a limit stops it: its CPU time from the delivery on
        (every process of the sandbox), and the wall clock as a backstop. With ``pause``,
        return True the moment every first case is in (the child waits for its hidden
        cases, which are not sent)."""
        cpu_at_start, sched_at_start = self._cpu_at_start, self._sched_at_start
        while True:
            if hidden_pending:  # wake the moment the samples are in, not a poll later
                if self.collector.samples_done.wait(POLL_SECONDS):
                    if pause:
                        outcome.cpu_seconds = clock.cpu_seconds() - cpu_at_start
                        return True
                    self._send_hidden_cases(job)
                    hidden_pending = False
                if self.process.poll() is not None:
                    break
            elif self.collector.done.wait(POLL_SECONDS) or self.process.poll() is not None:
                break  # every case is in (the child only exits after DONE), or it is gone
            # Read even without a CPU limit (calibration measures the reference so): a
            # process tree (no cgroup: containers) forgets a process once it exits.
            used = clock.cpu_seconds() - cpu_at_start
            outcome.cpu_seconds = max(used, outcome.cpu_seconds or 0.0)
            if job.cpu_seconds is not None and used > job.cpu_seconds:
                outcome.timed_out, outcome.time_limit = True, "cpu"
            if not outcome.timed_out and time.monotonic() >= deadline:
                outcome.timed_out, outcome.time_limit = True, "wall"
            if outcome.timed_out:
                outcome.starved = (
                    clock.sched().since(sched_at_start).mostly_waiting or machine_overloaded()
                )
                break
        # A cgroup keeps counting what exited processes used; a process tree forgets it,
        # so there the last reading while it ran is kept if larger.
        final = clock.cpu_seconds() - cpu_at_start
        if final > (outcome.cpu_seconds or 0.0):
            outcome.cpu_seconds = final
        return False

    def run(
        self, job: Job, judge: CaseListener | None = None, pause: Pause | None = None
    ) -> RunOutcome:
        """Deliver the job, supervise it to the end, and close the child; with ``pause``
        (a job with hidden cases), stop after the samples instead and keep the child
        (``pause.child``): what it printed so far is sealed into ``outcome.stdout``, and
        ``resume`` or ``close`` must follow."""
        outcome = self.collector.outcome
        self._started = time.monotonic()
        try:
            if not self.ready(STARTUP_SECONDS):
                outcome.startup_error = "the grading runtime did not start"
            elif (mismatch := self.backend_mismatch()) is not None:
                log.error("%s", mismatch)
                outcome.startup_error = mismatch
            else:
                clock = SandboxClock(self.process.pid, self.spec.cpu_seconds, self.spec.threads)
                self._clock = clock
                self._started = time.monotonic()
                self._deliver(job, judge)
                self._cpu_at_start, self._sched_at_start = clock.cpu_seconds(), clock.sched()
                if self.device == "gpu":  # device memory, from outside
                    self._watch = MemoryWatch(self.process.pid, job.memory_mb, self.kill).start()
                paused = self._supervise(
                    job,
                    outcome,
                    clock,
                    deadline=self._started + job.wall_seconds,
                    hidden_pending=bool(job.hidden_cases),
                    pause=pause is not None and bool(job.hidden_cases),
                )
                if paused and pause is not None:
                    self.drain.cut()  # what it printed for its samples, and nothing after
                    outcome.stdout = bytes(self.drain.shown).decode("utf-8", errors="replace")
                    outcome.stdout_truncated = self.drain.shown_truncated
                    outcome.wall_seconds = time.monotonic() - self._started
                    pause.child = self
                    return outcome
            self._finish(outcome)
        finally:
            if pause is None or pause.child is not self:
                self.close()
        return outcome

    def resume(self, job: Job, *, wall_seconds: float) -> RunOutcome:
        """The hidden phase of a job paused after its samples (``run`` with a pause),
        supervised to the end and the child closed. Its CPU time counts from the job's
        delivery, as if it had never paused; the wall clock gives it ``wall_seconds``
        from now (a paused child may run at a low CPU share)."""
        outcome = self.collector.outcome
        try:
            assert self._clock is not None, "resume follows a paused run"
            self._send_hidden_cases(job)
            self._supervise(
                job,
                outcome,
                self._clock,
                deadline=time.monotonic() + wall_seconds,
                hidden_pending=False,
            )
            self._finish(outcome)
        finally:
            self.close()
        return outcome

    def prioritise(self, busy: bool) -> None:
        """A full CPU share (a job is delivered, a submission waits for this child) or the
        lowest (it starts and waits, or works ahead for a submission that may never
        come): the sandbox's cgroup where the host delegates its cpu controller, and the
        nice value of every thread of the sandbox where this process may give it back."""
        self._cgroup_share(busy)
        if not can_renice():
            return
        # Thread by thread: the sandboxed process has a session (and process group) of
        # its own, and a thread started later inherits its creator's niceness.
        threads = (
            self.spec.threads()
            if self.spec.threads is not None
            else threads_of(process_tree(self.process.pid))
        )
        for thread in threads:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, thread, 0 if busy else NICE_WHILE_AHEAD)

    def _cgroup_share(self, busy: bool) -> None:
        """The sandbox cgroup's CPU share, where the host delegates its cpu controller."""
        if self.spec.set_busy is not None:
            self.spec.set_busy(busy, boosted=busy and self.boosted)

    def _finish(self, outcome: RunOutcome) -> None:
        self._stop()
        self._record(outcome, self._started)  # before the cgroup that knows OOM kills goes
        if self._watch is not None:
            self._watch.stop()
            outcome.memory_killed = outcome.memory_killed or self._watch.exceeded

    def _record(self, outcome: RunOutcome, started: float) -> None:
        outcome.wall_seconds = time.monotonic() - started
        outcome.exit_status = self.process.returncode
        outcome.output_limit_hit = self.drain.limit_hit or self.native.limit_hit
        outcome.memory_killed = bool(self.spec.memory_killed and self.spec.memory_killed())
        outcome.killed_from_outside = (
            self.process.returncode == -signal.SIGKILL
            and not self.stopped_by_us
            and not outcome.memory_killed
        )
        outcome.stdout = bytes(self.drain.shown).decode("utf-8", errors="replace")
        outcome.stdout_truncated = self.drain.shown_truncated
        outcome.hidden_output = bytes(self.drain.hidden).decode("utf-8", errors="replace")
        native = bytes(self.native.shown + self.native.hidden).decode("utf-8", errors="replace")
        if native.strip():
            log.info("child %s (%s) logged on stderr:\n%s", self.process.pid, self.device, native)
        said = (outcome.stdout + native).strip()
        if outcome.startup_error and said:
            outcome.startup_error += ": " + said[-2000:]

    def _stop(self) -> None:
        """Kill everything the child started and collect what it wrote."""
        self.kill()
        self.process.wait()
        for thread in self.threads:
            thread.join(timeout=2.0)

    def close(self) -> None:
        """Stop the child if it still runs, and release every resource."""
        if self.closed:
            return
        self.closed = True
        self._stop()
        self.results.close()
        for stream in (self.process.stdout, self.process.stderr, self.process.stdin):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        for step in self.spec.cleanup:
            step()


class Runner(Protocol):
    def run(self, job: Job, judge: CaseListener | None = None) -> RunOutcome: ...


class PausingRunner(Protocol):
    """A runner that can stop a learner's job after its samples and hand over the child."""

    def run(
        self, job: Job, judge: CaseListener | None = None, pause: Pause | None = None
    ) -> RunOutcome: ...


def run_retrying(
    first: StartedChild,
    start: Callable[[bool], StartedChild],
    job: Job,
    judge: CaseListener | None = None,
    pause: Pause | None = None,
) -> RunOutcome:
    """Run ``job`` on ``first`` (pausing after its samples with ``pause``); once more on a fresh child (``start(boosted)``) if the
    first failed for a reason that is not the submission's: it never started (the job
    was not even delivered), something outside the sandbox killed it (not one of its
    limits), or it ran out of time while the machine was overloaded (grader/running/timing.py:
    the time-out is confirmed on a child with a large CPU share, whose outcome
    stands). A second failure of the grader's own stays in the outcome (grader/grade.py
    says so)."""
    outcome = first.run(job, judge, pause)
    if outcome.timed_out and outcome.starved:
        log.warning(
            "a %s time-out while the machine was overloaded; confirming it on a quiet child",
            outcome.time_limit,
        )
        # A large CPU share wins against other sandboxes but not against everything else
        # the machine runs, so the confirmation also gets a longer wall clock: its CPU
        # budget, the limit that measures the submission, stays what it was.
        patient = replace(job, wall_seconds=job.wall_seconds * CONFIRMATION_WALL_FACTOR)
        confirmed = start(True).run(patient, judge, pause)
        confirmed.confirmed = True
        return confirmed
    if outcome.startup_error is None and not outcome.killed_from_outside:
        return outcome
    reason = outcome.startup_error or "killed from outside the sandbox"
    log.warning(
        "a child failed through no fault of the submission (%s); retrying on a fresh one", reason
    )
    return start(False).run(job, judge, pause)


class ProcessRunner:
    """A fresh child per job, started on demand by a launcher (trusted by default)."""

    def __init__(self, launcher: Launcher | None = None) -> None:
        self.launcher = launcher or PlainLauncher(trusted=True)

    def _start(self, job: Job, boosted: bool = False) -> StartedChild:
        return StartedChild(
            self.launcher,
            device=job.device,
            memory_mb=job.memory_mb,
            boosted=boosted,
            jax_only=not protocol.names_the_libraries([s.source for s in job.solutions]),
        )

    def run(
        self, job: Job, judge: CaseListener | None = None, pause: Pause | None = None
    ) -> RunOutcome:
        return run_retrying(
            self._start(job), lambda boosted: self._start(job, boosted), job, judge, pause
        )
