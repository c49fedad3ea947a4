"""Run a job in a child process and supervise it to the end.

The parent owns every channel: the job goes in on the child's stdin, results
come back as frames on a dedicated pipe (grader/frames.py), and the child's
stdout/stderr are drained by a thread with a byte cap (grader/output.py).
Limits are applied from outside (grader/launch.py, grader/sandbox.py); the
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
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from grader import protocol
from grader.config import settings
from grader.frames import FrameCollector
from grader.gpu_sharing import MemoryWatch
from grader.job import Job, RunOutcome
from grader.launch import Launcher, LaunchSpec, PlainLauncher, cpu_seconds_for
from grader.output import OutputDrain
from grader.protocol import JobMessage, Kind, SourceRef

log = logging.getLogger("jaxjudge.supervise")
STARTUP_SECONDS = 120.0
NATIVE_LOG_KEEP = 8192  # bytes of a child's stderr kept for the operator's log
MAX_INPUT_ELEMENTS = 1 << 28


def _probe_meta(job: Job) -> list[dict[str, Any]]:
    """Memory probes travel as metadata alone: floats and shapes, no array data."""
    meta, data = protocol.pack_cases([list(probe.args.values()) for probe in job.memory_probes])
    if data:
        raise ValueError("memory probes hold floats and Abstract shapes only")
    return meta


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
    message = JobMessage(
        entry_point=job.entry_point,
        n_outputs=job.n_outputs,
        max_elements=max_elements,
        max_input_elements=MAX_INPUT_ELEMENTS,
        cpu_seconds=cpu_seconds_for(job.wall_seconds),
        address_space_bytes=address_space_bytes,
        solutions=tuple(refs),
        cases=tuple(cases),
        hidden_cases=len(job.hidden_cases),
        compiled=job.compiled,
        tree_outputs=tuple(sorted(job.tree_outputs)),
        trace_structure=job.trace_structure,
        memory_probes=tuple(_probe_meta(job)),
    )
    return protocol.encode_frame(Kind.JOB, message.to_meta(), b"".join(chunks) + data)


def encode_hidden_cases(job: Job) -> bytes:
    cases, data = protocol.pack_cases([list(c.args.values()) for c in job.hidden_cases])
    return protocol.encode_frame(Kind.HIDDEN_CASES, {"cases": cases}, data)


class StartedChild:
    """A child process that is starting or waiting (after HELLO) for its one job."""

    def __init__(self, launcher: Launcher, *, device: str, memory_mb: int) -> None:
        self.device = device
        self.max_elements = settings.max_output_elements
        self.collector = FrameCollector(self.max_elements)
        read_end, write_end = os.pipe()
        self.spec: LaunchSpec = launcher.launch(
            device=device, memory_mb=memory_mb, result_fd=write_end
        )
        try:
            self.process = subprocess.Popen(
                self.spec.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(write_end, *self.spec.pass_fds),
                env=self.spec.env,
                cwd=self.spec.cwd,
                start_new_session=True,
            )
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

    def _deliver(self, job: Job) -> None:
        """Bind the job's limits, then write its first phase."""
        if self.spec.set_memory_limit is not None:
            self.spec.set_memory_limit(job.memory_mb * 2**20)
        if self.spec.set_busy is not None:
            self.spec.set_busy(True)
        self.collector.bind(job)
        frame = encode_job(job, self.max_elements, self.spec.address_space_bytes(job.memory_mb))
        self._write(frame, close=not job.hidden_cases)

    def _hidden_phase(self, job: Job, deadline: float) -> None:
        """Send the hidden cases once every sample is reported, and not before."""
        collector = self.collector
        while not collector.samples_done.is_set():
            if collector.ended.is_set() or self.process.poll() is not None:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            collector.samples_done.wait(min(remaining, 0.05))
        self.drain.cut()
        collector.hidden_sent()
        writer = threading.Thread(
            target=self._write,
            args=(encode_hidden_cases(job),),
            kwargs={"close": True},
            daemon=True,
        )
        writer.start()
        self.threads.append(writer)

    def run(self, job: Job) -> RunOutcome:
        """Deliver the job, supervise it to the end, and close the child."""
        outcome = self.collector.outcome
        started = time.monotonic()
        watch: MemoryWatch | None = None  # device memory, from outside (GPU jobs)
        try:
            if not self.ready(STARTUP_SECONDS):
                outcome.startup_error = "the grading runtime did not start"
            elif (mismatch := self.backend_mismatch()) is not None:
                log.error("%s", mismatch)
                outcome.startup_error = mismatch
            else:
                started = time.monotonic()
                deadline = started + job.wall_seconds
                self._deliver(job)
                if self.device == "gpu":
                    watch = MemoryWatch(self.process.pid, job.memory_mb, self.kill).start()
                if job.hidden_cases:
                    self._hidden_phase(job, deadline)
                try:
                    self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    outcome.timed_out = True
            self._stop()
            self._record(outcome, started)  # before the cgroup that knows about OOM kills goes
            if watch is not None:
                watch.stop()
                outcome.memory_killed = outcome.memory_killed or watch.exceeded
        finally:
            self.close()
        return outcome

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
    def run(self, job: Job) -> RunOutcome: ...


def run_retrying(first: StartedChild, start: Callable[[], StartedChild], job: Job) -> RunOutcome:
    """Run ``job`` on ``first``; once more on a fresh child if the first failed for a
    reason that is not the submission's: it never started (the job was not even
    delivered), or something outside the sandbox killed it (not one of its
    limits). A second such failure stays in the outcome: the grader's, not the
    learner's (grader/grade.py says so)."""
    outcome = first.run(job)
    if outcome.startup_error is None and not outcome.killed_from_outside:
        return outcome
    reason = outcome.startup_error or "killed from outside the sandbox"
    log.warning(
        "a child failed through no fault of the submission (%s); retrying on a fresh one", reason
    )
    return start().run(job)


class ProcessRunner:
    """A fresh child per job, started on demand by a launcher (trusted by default)."""

    def __init__(self, launcher: Launcher | None = None) -> None:
        self.launcher = launcher or PlainLauncher(trusted=True)

    def _start(self, job: Job) -> StartedChild:
        return StartedChild(self.launcher, device=job.device, memory_mb=job.memory_mb)

    def run(self, job: Job) -> RunOutcome:
        return run_retrying(self._start(job), lambda: self._start(job), job)
