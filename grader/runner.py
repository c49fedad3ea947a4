"""Run a job in a child process and collect what it reports.

The parent owns every channel: the job goes in on the child's stdin, results
come back as frames on a dedicated pipe, and the child's stdout/stderr are
drained by a thread with a byte cap. Limits are applied from outside: the
address space, core dumps and file sizes with ``prlimit`` before Python starts,
the wall clock by killing the whole process group. The wall clock starts when
the job is delivered, so start-up (imports) is never billed to the learner.

``ProcessRunner`` is the plain, unsandboxed runner used for trusted runs and as
the base of the sandboxed runner; both speak the same protocol.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from grader import protocol
from grader.config import settings
from grader.job import CaseOutcome, Job, RunOutcome, SolutionOutcome
from grader.protocol import Frame, Kind, ProtocolError
from grader.verdicts import Verdict

STARTUP_SECONDS = 120.0
CHILD_VERDICTS = {
    Verdict.RUNTIME_ERROR,
    Verdict.MEMORY_LIMIT_EXCEEDED,
    Verdict.OUTPUT_LIMIT_EXCEEDED,
    Verdict.SYNTAX_ERROR,
    Verdict.MISSING_ENTRY_POINT,
}


def encode_job(job: Job, max_elements: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    solutions = []
    for solution in job.solutions:
        raw = solution.source.encode()
        solutions.append({"filename": solution.filename, "offset": offset, "length": len(raw)})
        chunks.append(raw)
        offset += len(raw)
    cases = []
    for case in job.cases:
        args: list[dict[str, Any]] = []
        for value in case.args.values():
            if isinstance(value, float):
                args.append({"kind": "float", "value": value})
                continue
            specs, raw = protocol.pack_arrays([value])
            args.append({"kind": "array", "spec": {**specs[0], "offset": offset}})
            chunks.append(raw)
            offset += len(raw)
        cases.append({"args": args})
    meta = {
        "entry_point": job.entry_point,
        "n_outputs": job.n_outputs,
        "max_elements": max_elements,
        "max_input_elements": 1 << 28,
        "memory_bytes": job.memory_mb * 1024 * 1024,
        "cpu_seconds": cpu_seconds_for(job.wall_seconds),
        "solutions": solutions,
        "cases": cases,
    }
    return protocol.encode_frame(Kind.JOB, meta, b"".join(chunks))


class _FrameCollector:
    """Validates frames from an untrusted child: kinds in order, indices in
    range, each case reported at most once, nothing after DONE."""

    def __init__(self, max_elements: int) -> None:
        self.job: Job | None = None
        self.max_elements = max_elements
        self.outcome = RunOutcome(solutions=[])
        self.hello = threading.Event()
        self.ended = threading.Event()  # the result channel closed (the child is gone)

    def started(self, timeout: float) -> bool:
        """Wait for HELLO, but not for a child that has already gone."""
        deadline = time.monotonic() + timeout
        while not self.hello.is_set() and not self.ended.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.hello.wait(min(remaining, 0.05))
        return self.hello.is_set()

    def bind(self, job: Job) -> None:
        """Called before the job is written: from here on frames refer to it."""
        self.outcome.solutions = [SolutionOutcome() for _ in job.solutions]
        self.job = job

    def _index(self, meta: dict[str, Any], key: str, limit: int) -> int:
        value = meta.get(key)
        if type(value) is not int or not 0 <= value < limit:
            raise ProtocolError(f"{key} index out of range")
        return value

    def _text(self, meta: dict[str, Any], key: str) -> str:
        value = meta.get(key, "")
        if not isinstance(value, str):
            raise ProtocolError(f"{key} is not text")
        return value[:16000]

    def _seconds(self, meta: dict[str, Any]) -> float:
        value = meta.get("seconds")
        if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            raise ProtocolError("seconds is not a non-negative number")
        return float(value)

    def _verdict(self, meta: dict[str, Any]) -> Verdict:
        try:
            verdict = Verdict(str(meta.get("verdict")))
        except ValueError:
            raise ProtocolError("unknown verdict from child") from None
        if verdict not in CHILD_VERDICTS:
            raise ProtocolError(f"a child cannot report {verdict.value}")
        return verdict

    def accept(self, frame: Frame) -> None:
        outcome = self.outcome
        if outcome.finished:
            raise ProtocolError("data on the result channel after the run finished")
        if frame.kind is Kind.HELLO:
            if self.hello.is_set():
                raise ProtocolError("second HELLO")
            backend = frame.meta.get("backend")
            outcome.backend = backend if isinstance(backend, str) else None
            self.hello.set()
            return
        job = self.job
        if not self.hello.is_set() or job is None or frame.kind is Kind.JOB:
            raise ProtocolError(f"unexpected {frame.kind.name} frame")
        if frame.kind is Kind.DONE:
            outcome.finished = True
            return
        solution = outcome.solutions[self._index(frame.meta, "solution", len(job.solutions))]
        if frame.kind is Kind.SOLUTION_ERROR:
            if solution.error_verdict or solution.cases:
                raise ProtocolError("solution error after results")
            solution.error_verdict = self._verdict(frame.meta)
            solution.message = self._text(frame.meta, "message")
            return
        case_index = self._index(frame.meta, "case", len(job.cases))
        if case_index in solution.cases or solution.error_verdict:
            raise ProtocolError("a case was reported twice")
        seconds = self._seconds(frame.meta)
        if frame.kind is Kind.CASE_ERROR:
            solution.cases[case_index] = CaseOutcome(
                seconds,
                error_verdict=self._verdict(frame.meta),
                message=self._text(frame.meta, "message"),
            )
            return
        specs = frame.meta.get("outputs")
        if not isinstance(specs, list) or len(specs) != job.n_outputs:
            raise ProtocolError("wrong number of outputs")
        outputs: list[Any] = []
        for spec in specs:
            if isinstance(spec, dict) and "invalid" in spec:
                outputs.append(self._text(spec, "invalid") or "invalid output")
            else:
                outputs.append(
                    protocol.unpack_array(spec, frame.data, max_elements=self.max_elements)
                )
        solution.cases[case_index] = CaseOutcome(seconds, outputs=outputs)

    def read_all(self, stream: BinaryIO, max_data_bytes: int, on_error: Any) -> None:
        try:
            self._read_frames(stream, max_data_bytes, on_error)
        finally:
            self.ended.set()

    def _read_frames(self, stream: BinaryIO, max_data_bytes: int, on_error: Any) -> None:
        try:
            while (frame := protocol.read_frame(stream, max_data_bytes=max_data_bytes)) is not None:
                self.accept(frame)
        except ProtocolError as error:
            self.outcome.protocol_error = str(error)
            on_error()
        except (OSError, ValueError) as error:
            self.outcome.protocol_error = f"result channel failed: {error}"
            on_error()


class _OutputDrain:
    """Keeps the first ``keep`` bytes of the child's output and counts the rest."""

    def __init__(self, keep: int, limit: int, on_limit: Any) -> None:
        self.keep, self.limit, self.on_limit = keep, limit, on_limit
        self.kept = bytearray()
        self.total = 0
        self.limit_hit = False

    def read_all(self, stream: BinaryIO) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := stream.read(65536):
                self.total += len(chunk)
                if len(self.kept) < self.keep:
                    self.kept += chunk[: self.keep - len(self.kept)]
                if self.total > self.limit and not self.limit_hit:
                    self.limit_hit = True
                    self.on_limit()


def clean_environment(device: str, home: str) -> dict[str, str]:
    """The child's whole environment: an explicit allow-list, nothing inherited."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
    }
    if device == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
    return env


def cpu_seconds_for(wall_seconds: float) -> int:
    """CPU time a job may use: every core busy for the whole wall clock, plus slack.
    (XLA runs on several threads, so CPU time can exceed wall time.)"""
    return int(wall_seconds * (os.cpu_count() or 1)) + 10


def rlimit_command(memory_mb: int, cpu_seconds: int = 3600) -> list[str]:
    """Limits set by the kernel before Python starts, inherited by everything below."""
    return [
        "prlimit",
        f"--cpu={cpu_seconds}",
        f"--as={memory_mb * 1024 * 1024}",
        "--core=0",
        f"--fsize={64 * 1024 * 1024}",
        "--nofile=1024",
        "--",
    ]


@dataclass
class LaunchSpec:
    """How to start one child: argv, environment, extra fds, and the hooks
    the supervisor calls to kill everything and clean up."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    pass_fds: tuple[int, ...] = ()
    kill_all: Callable[[], None] | None = None
    memory_killed: Callable[[], bool] | None = None
    cleanup: list[Callable[[], None]] = field(default_factory=list)


class Launcher(Protocol):
    def launch(self, *, device: str, memory_mb: int, result_fd: int) -> LaunchSpec: ...


class PlainLauncher:
    """A child in an ordinary process: for trusted runs (references, mistakes)."""

    def __init__(self, *, compilation_cache_writable: bool = True) -> None:
        self.compilation_cache_writable = compilation_cache_writable

    def launch(self, *, device: str, memory_mb: int, result_fd: int) -> LaunchSpec:
        workdir = tempfile.mkdtemp(prefix="jaxjudge-run-")
        env = clean_environment(device, workdir)
        cache = compilation_cache_env(
            settings.compilation_cache_dir, writable=self.compilation_cache_writable
        )
        return LaunchSpec(
            plain_child_argv(memory_mb, result_fd),
            env | cache,
            workdir,
            cleanup=[lambda: shutil.rmtree(workdir, ignore_errors=True)],
        )


def plain_child_argv(memory_mb: int, result_fd: int) -> list[str]:
    """The child as an ordinary process under rlimits (no sandbox)."""
    return [
        *rlimit_command(memory_mb),
        str(settings.child_python),
        "-I",
        "-u",
        "-m",
        "grader.child",
        str(result_fd),
    ]


def compilation_cache_env(directory: Path, *, writable: bool) -> dict[str, str]:
    """JAX's persistent compilation cache: written only by trusted runs.

    Untrusted children read it through a read-only mount and are told never to
    write (a compile would have to take 10^9 seconds to qualify)."""
    return {
        "JAX_COMPILATION_CACHE_DIR": str(directory),
        # No eviction (JAX's default, stated): with eviction on, every read
        # takes a lock file and writes an access time, which a read-only
        # mount refuses.
        "JAX_COMPILATION_CACHE_MAX_SIZE": "-1",
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0" if writable else "1e9",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1" if writable else str(1 << 62),
    }


class StartedChild:
    """A child process that is starting or waiting (after HELLO) for its one job."""

    def __init__(self, launcher: Launcher, *, device: str, memory_mb: int) -> None:
        self.device = device
        self.max_elements = settings.max_output_elements
        self.collector = _FrameCollector(self.max_elements)
        read_end, write_end = os.pipe()
        self.spec = launcher.launch(device=device, memory_mb=memory_mb, result_fd=write_end)
        try:
            self.process = subprocess.Popen(
                self.spec.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(write_end, *self.spec.pass_fds),
                env=self.spec.env,
                cwd=self.spec.cwd,
                start_new_session=True,
            )
        finally:
            for fd in (write_end, *self.spec.pass_fds):
                os.close(fd)
        assert self.process.stdout is not None
        self.drain = _OutputDrain(
            settings.stdout_keep_bytes, settings.stdout_limit_bytes, self.kill
        )
        self.results = os.fdopen(read_end, "rb")
        self.threads = [
            threading.Thread(target=self.drain.read_all, args=(self.process.stdout,), daemon=True),
            threading.Thread(
                target=self.collector.read_all,
                args=(self.results, 4 * self.max_elements * 8 + (1 << 20), self.kill),
                daemon=True,
            ),
        ]
        for thread in self.threads:
            thread.start()
        self.closed = False

    def ready(self, timeout: float) -> bool:
        return self.collector.started(timeout) and self.process.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.spec.kill_all:
            self.spec.kill_all()

    def run(self, job: Job) -> RunOutcome:
        """Deliver the job, supervise it to the end, and close the child."""
        outcome = self.collector.outcome
        started = time.monotonic()
        assert self.process.stdin is not None
        try:
            if not self.ready(STARTUP_SECONDS):
                outcome.startup_error = "the grading runtime did not start"
            else:
                self.collector.bind(job)
                with contextlib.suppress(BrokenPipeError):
                    self.process.stdin.write(encode_job(job, self.max_elements))
                with contextlib.suppress(BrokenPipeError):
                    self.process.stdin.close()
                try:
                    self.process.wait(timeout=job.wall_seconds)
                except subprocess.TimeoutExpired:
                    outcome.timed_out = True
        finally:
            self.close()
        outcome.wall_seconds = time.monotonic() - started
        outcome.exit_status = self.process.returncode
        outcome.output_limit_hit = self.drain.limit_hit
        outcome.memory_killed = bool(self.spec.memory_killed and self.spec.memory_killed())
        outcome.stdout = bytes(self.drain.kept).decode("utf-8", errors="replace")
        outcome.stdout_truncated = self.drain.total > len(self.drain.kept)
        if outcome.startup_error and self.drain.kept:
            outcome.startup_error += ": " + outcome.stdout[-2000:]
        return outcome

    def close(self) -> None:
        """Kill everything the child started and release every resource."""
        if self.closed:
            return
        self.closed = True
        self.kill()
        self.process.wait()
        for thread in self.threads:
            thread.join(timeout=2.0)
        self.results.close()
        for stream in (self.process.stdout, self.process.stdin):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        for step in self.spec.cleanup:
            step()


class Runner(Protocol):
    def run(self, job: Job) -> RunOutcome: ...


class ProcessRunner:
    """A fresh child per job, started on demand by a launcher."""

    def __init__(self, launcher: Launcher | None = None) -> None:
        self.launcher = launcher or PlainLauncher()

    def run(self, job: Job) -> RunOutcome:
        child = StartedChild(self.launcher, device=job.device, memory_mb=job.memory_mb)
        return child.run(job)
