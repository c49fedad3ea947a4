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
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any, BinaryIO

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
        "solutions": solutions,
        "cases": cases,
    }
    return protocol.encode_frame(Kind.JOB, meta, b"".join(chunks))


class _FrameCollector:
    """Validates frames from an untrusted child: kinds in order, indices in
    range, each case reported at most once, nothing after DONE."""

    def __init__(self, job: Job, max_elements: int) -> None:
        self.job = job
        self.max_elements = max_elements
        self.outcome = RunOutcome(solutions=[SolutionOutcome() for _ in job.solutions])
        self.hello = threading.Event()

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
        if not self.hello.is_set() or frame.kind is Kind.JOB:
            raise ProtocolError(f"unexpected {frame.kind.name} frame")
        if frame.kind is Kind.DONE:
            outcome.finished = True
            return
        solution = outcome.solutions[self._index(frame.meta, "solution", len(self.job.solutions))]
        if frame.kind is Kind.SOLUTION_ERROR:
            if solution.error_verdict or solution.cases:
                raise ProtocolError("solution error after results")
            solution.error_verdict = self._verdict(frame.meta)
            solution.message = self._text(frame.meta, "message")
            return
        case_index = self._index(frame.meta, "case", len(self.job.cases))
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
        if not isinstance(specs, list) or len(specs) != self.job.n_outputs:
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


class ProcessRunner:
    """Runs a job in a fresh child process (no namespaces: see SandboxRunner)."""

    def command(self, job: Job, result_fd: int, workdir: str) -> tuple[list[str], dict[str, str]]:
        limits = [
            f"--as={job.memory_mb * 1024 * 1024}",
            "--core=0",
            f"--fsize={64 * 1024 * 1024}",
            "--nofile=1024",
        ]
        argv = [
            "prlimit",
            *limits,
            "--",
            str(settings.child_python),
            "-I",
            "-u",
            "-m",
            "grader.child",
            str(result_fd),
        ]
        return argv, clean_environment(job.device, workdir)

    def run(self, job: Job) -> RunOutcome:
        max_elements = settings.max_output_elements
        collector = _FrameCollector(job, max_elements)
        read_end, write_end = os.pipe()
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="jaxjudge-run-") as workdir:
            argv, env = self.command(job, write_end, workdir)
            try:
                process = subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    pass_fds=(write_end,),
                    env=env,
                    cwd=workdir,
                    start_new_session=True,
                )
            finally:
                os.close(write_end)
            outcome = self._supervise(process, job, collector, read_end, max_elements)
        outcome.wall_seconds = time.monotonic() - started
        return outcome

    def _supervise(
        self,
        process: subprocess.Popen[bytes],
        job: Job,
        collector: _FrameCollector,
        read_end: int,
        max_elements: int,
    ) -> RunOutcome:
        outcome = collector.outcome

        def kill() -> None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

        assert process.stdout is not None
        assert process.stdin is not None
        drain = _OutputDrain(settings.stdout_keep_bytes, settings.stdout_limit_bytes, kill)
        results = os.fdopen(read_end, "rb")
        threads = [
            threading.Thread(target=drain.read_all, args=(process.stdout,), daemon=True),
            threading.Thread(
                target=collector.read_all,
                args=(results, 4 * max_elements * 8 + (1 << 20), kill),
                daemon=True,
            ),
        ]
        for thread in threads:
            thread.start()
        try:
            if not collector.hello.wait(STARTUP_SECONDS) or process.poll() is not None:
                outcome.startup_error = "the grading runtime did not start"
                kill()
            else:
                with contextlib.suppress(BrokenPipeError):
                    process.stdin.write(encode_job(job, max_elements))
                with contextlib.suppress(BrokenPipeError):
                    process.stdin.close()
                try:
                    process.wait(timeout=job.wall_seconds)
                except subprocess.TimeoutExpired:
                    outcome.timed_out = True
        finally:
            kill()  # also reaps anything the child left behind in its group
            process.wait()
            for thread in threads:
                thread.join(timeout=2.0)
            results.close()
            process.stdout.close()
        outcome.exit_status = process.returncode
        outcome.output_limit_hit = drain.limit_hit
        outcome.stdout = bytes(drain.kept).decode("utf-8", errors="replace")
        outcome.stdout_truncated = drain.total > len(drain.kept)
        if outcome.startup_error and drain.kept:
            outcome.startup_error += ": " + outcome.stdout[-2000:]
        return outcome


def default_runner() -> ProcessRunner:
    return ProcessRunner()


def run_job(job: Job, runner: ProcessRunner | None = None) -> RunOutcome:
    return (runner or default_runner()).run(job)
