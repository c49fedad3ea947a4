"""An untrusted author's cases.py, run in the learner sandbox and read back as data.

A course problem is written by an instructor, whom the grader does not trust
(docs/security.md): its cases.py never runs in the grader's process. This module
starts grader/child/author_cases.py in a sandbox of its own (grader/running/sandbox.py:
namespaces, read-only binds, seccomp, the problem's memory limit and the sandbox's
process limit in a cgroup, CPU and wall-clock limits), sends it the source, and reads
back every variant's cases, the memory probes and the regimes' answers as frames of
numbers and text (grader/child/protocol.py: no pickle). It validates them with the very
code that validates a trusted problem's (grader/cases.py ``assemble``), so both give the
same ``CaseBank`` and the same errors; whatever goes wrong in the sandbox (an exception
and its line, the time or memory limit, malformed data) is a ``ProblemError`` naming
cases.py.

What a sandbox sent is kept, once it validated, in ``settings.author_cases_dir``, one
file per content hash of cases.py, its settings and the runtime: graders read it rather
than start a sandbox per submission. Only this process writes there, and no sandbox has
that folder (or any of the data directory) bound: one problem's hidden cases are never
readable from another's sandbox.

That folder is a cache, not a store: the platform keeps what a passing check generated
with the problem's version (``stored_bytes``, ``restore``), and outside a check
(``checking``) an untrusted cases.py never runs: with no kept bank a problem's cases
fail closed (``CheckResultsMissingError``), so a new worker, a cleared cache or an upgraded
runtime cannot make a time-bomb cases.py change hidden inputs after its check passed.

Importing this module is what lets ``Problem.case_bank`` of an untrusted problem work
(grader/problems/problem.py ``run_untrusted_cases_with``); grader/expected.py imports it.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import io
import json
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from grader.cases import Case, CaseBank, RegimeAnswers, assemble
from grader.child import protocol
from grader.child.protocol import Frame, Kind, ProtocolError
from grader.config import settings
from grader.errors import CheckResultsMissingError, ProblemError
from grader.problems.problem import Problem, run_untrusted_cases_with
from grader.running.sandbox import SandboxLauncher, SandboxUnavailableError
from grader.versions import runtime_versions

# Every frame the sandbox sends, together: 25 times the largest bank problem's cases
# (memory-bounded-accumulation, 10 MB), what a grader may hold while it validates them.
MAX_ANSWER_BYTES = 256 << 20
MAX_INPUT_ELEMENTS = 1 << 28
MAX_TEXT = 2000


_checking: contextvars.ContextVar[bool] = contextvars.ContextVar("checking", default=False)


@contextlib.contextmanager
def checking() -> Iterator[None]:
    """Within: an untrusted author's code may run (in sandboxes) to produce what a check
    proves (grader/check.py ``check_problem``). Outside, only what a check left is used."""
    token = _checking.set(True)
    try:
        yield
    finally:
        _checking.reset(token)


def in_check() -> bool:
    return _checking.get()


def sandboxed_cases(problem: Problem, *, fresh: bool = False) -> tuple[CaseBank, RegimeAnswers]:
    """``problem``'s cases and regimes' answers, from this machine's file of them or,
    within a check, from a sandbox now (always a sandbox when ``fresh``; the file is then
    left alone). Outside a check with no file: ``CheckResultsMissingError``."""
    path = problem.folder / "cases.py"
    if not path.is_file():
        raise ProblemError(
            path, None, "missing: every problem needs a cases.py defining cases(seed)"
        )
    kept = _kept(problem)
    if not fresh and kept.is_file():
        with contextlib.suppress(OSError, ValueError, KeyError, ProtocolError):
            return _answer(problem, path, _read(kept))
    if not in_check():
        raise CheckResultsMissingError(problem.slug)
    frames = _run(problem, path)
    answer = _answer(problem, path, frames)
    if not fresh:
        _write(kept, frames)
    return answer


def _kept(problem: Problem) -> Path:
    path = problem.folder / "cases.py"
    return settings.author_cases_dir / f"{problem.slug}-{_key(problem, path)}.npz"


def runtime_key() -> str:
    """What the bank's file name says of the runtime (the library versions)."""
    digest = hashlib.sha256()
    for name, value in sorted(runtime_versions().items()):
        digest.update(f"{name}={value}\0".encode())
    return digest.hexdigest()[:32]


def on_disk(problem: Problem) -> bool:
    """Whether this machine keeps a bank for ``problem`` (no sandbox needed to read it)."""
    return _kept(problem).is_file()


def stored_bytes(problem: Problem) -> bytes:
    """The bank this machine keeps for ``problem`` (what its check generated), to store
    with its version; OSError if there is none."""
    return _kept(problem).read_bytes()


def restore(problem: Problem, data: bytes) -> None:
    """Keep ``data`` (``stored_bytes`` of a passing check, from any runtime: the hidden
    inputs are the check's) as this machine's bank for ``problem``, once it validates;
    a ProblemError if it does not."""
    path = problem.folder / "cases.py"
    try:
        frames = _read(io.BytesIO(data))
    except (OSError, ValueError, KeyError, ProtocolError) as error:
        raise ProblemError(path, None, f"its stored cases are malformed ({error})") from None
    _answer(problem, path, frames)
    _write(_kept(problem), frames)


def _key(problem: Problem, path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes() + b"\0")
    config = problem.config
    settings_of = [problem.part_arguments, config.variants, config.memory_budget is not None]
    digest.update(json.dumps(settings_of).encode() + b"\0")
    for name, value in sorted(runtime_versions().items()):
        digest.update(f"{name}={value}\0".encode())
    return digest.hexdigest()[:32]


def _run(problem: Problem, path: Path) -> list[Frame]:
    """Start the sandbox, hand it the source, collect its frames within the limits."""
    request = {"variants": problem.config.variants, "cpu_seconds": 0}
    request["probes"] = problem.config.memory_budget is not None
    # A frame per variant, the probes, the regimes, an error and the end: no more. Each
    # frame's metadata (up to protocol.MAX_META_BYTES, parsed into Python objects several
    # times its size) is not counted in MAX_ANSWER_BYTES, so their number is what bounds it.
    return sandbox_frames(
        path,
        program="author_cases",
        request=Frame(Kind.AUTHOR_CASES, request, path.read_bytes()),
        memory_mb=problem.config.limits.memory_mb,
        max_frames=problem.config.variants + 4,
        advice="generate smaller cases or fewer variants",
    )


def sandbox_frames(
    path: Path, *, program: str, request: Frame, memory_mb: int, max_frames: int, advice: str
) -> list[Frame]:
    """Run the sandboxed ``program`` (grader/child/<program>.py) on ``request`` (its
    ``cpu_seconds`` filled in here) and collect the frames it sends within the limits
    (``settings.author_cases_seconds``, ``memory_mb``, ``max_frames`` and
    ``MAX_ANSWER_BYTES``); a ProblemError naming ``path`` when it does not finish with DONE.
    ``advice``: what the author may do about a time-out."""
    if not settings.sandbox:
        raise ProblemError(
            path, None, "runs only in a sandbox, and the sandbox is off (JAXJUDGE_SANDBOX=false)"
        )
    seconds = settings.author_cases_seconds
    read_end, write_end = os.pipe()
    try:
        spec = SandboxLauncher(program=program).launch(
            device="cpu", memory_mb=memory_mb, result_fd=write_end
        )
    except (SandboxUnavailableError, OSError) as error:
        os.close(read_end)
        os.close(write_end)
        raise ProblemError(path, None, f"no sandbox could be started to run it: {error}") from None
    try:
        process = subprocess.Popen(
            spec.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(write_end, *spec.pass_fds),
            env=spec.env,
            cwd=spec.cwd,
            start_new_session=True,
        )
    except BaseException:
        os.close(read_end)
        for step in spec.cleanup:
            step()
        raise
    finally:
        for fd in (write_end, *spec.pass_fds):
            os.close(fd)
    reader = _Reader(
        os.fdopen(read_end, "rb"),
        max_frames=max_frames,
        stop=lambda: _signal_all(process, spec.kill_all),
    )
    thread = threading.Thread(target=reader.read_all, daemon=True)
    thread.start()
    try:
        meta = {**request.meta, "cpu_seconds": int(seconds) + 1}
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError, OSError):
            process.stdin.write(protocol.encode_frame(request.kind, meta, request.data))
            process.stdin.close()
        timed_out = False
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill(process, spec.kill_all)
        thread.join(timeout=10.0)
        memory_killed = bool(spec.memory_killed and spec.memory_killed())
    finally:
        _kill(process, spec.kill_all)
        reader.stream.close()
        for step in spec.cleanup:
            step()
    return _outcome(path, reader, timed_out, memory_killed, memory_mb, process.returncode, advice)


def _kill(process: subprocess.Popen[bytes], kill_all: Any) -> None:
    _signal_all(process, kill_all)
    process.wait()


def _signal_all(process: subprocess.Popen[bytes], kill_all: Any) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if kill_all is not None:
        kill_all()


def _outcome(
    path: Path,
    reader: _Reader,
    timed_out: bool,
    memory_killed: bool,
    memory_mb: int,
    status: int,
    advice: str,
) -> list[Frame]:
    """The frames of a run that finished, or the ProblemError saying why it did not."""
    frames = reader.frames
    failure = next((frame for frame in frames if frame.kind is Kind.AUTHOR_ERROR), None)
    if failure is not None and not reader.error:
        where = _text(failure.meta.get("where")) or None
        raise ProblemError(path, where, _text(failure.meta.get("message")))
    if reader.refused:  # the reader stopped it for sending too much: not a time-out
        raise ProblemError(path, None, f"its sandbox sent malformed data ({reader.error})")
    if memory_killed:
        raise ProblemError(path, None, f"used more than the problem's {memory_mb} MB memory limit")
    if timed_out or status in (-signal.SIGXCPU, -signal.SIGKILL):
        raise ProblemError(
            path,
            None,
            f"did not finish within {settings.author_cases_seconds:g} s"
            f" (JAXJUDGE_AUTHOR_CASES_SECONDS); {advice}",
        )
    if reader.error:
        raise ProblemError(path, None, f"its sandbox sent malformed data ({reader.error})")
    if not frames or frames[-1].kind is not Kind.DONE:
        raise ProblemError(
            path, None, f"its sandbox ended without an answer (exit status {status})"
        )
    return frames


class _Reader:
    """Frames from the result pipe, every one of them, up to ``MAX_ANSWER_BYTES``."""

    def __init__(self, stream: Any, *, max_frames: int, stop: Callable[[], None]) -> None:
        self.stream, self.max_frames, self.stop = stream, max_frames, stop
        self.frames: list[Frame] = []
        self.error: str | None = None
        self.refused = False  # past a cap: the sandbox is stopped at once

    def read_all(self) -> None:
        total = 0
        try:
            while (
                frame := protocol.read_frame(self.stream, max_data_bytes=MAX_ANSWER_BYTES)
            ) is not None:
                total += len(frame.data) + protocol.HEADER_SIZE
                if total > MAX_ANSWER_BYTES:
                    self._refuse(f"more than {MAX_ANSWER_BYTES >> 20} MiB of data")
                    return
                if len(self.frames) >= self.max_frames:
                    self._refuse(f"more than {self.max_frames} frames")
                    return
                self.frames.append(frame)
                if frame.kind is Kind.DONE:
                    return
        except (ProtocolError, OSError, ValueError) as error:
            self.error = str(error)[:MAX_TEXT]

    def _refuse(self, why: str) -> None:
        self.error, self.refused = why, True
        self.stop()


def _text(value: object) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _answer(problem: Problem, path: Path, frames: list[Frame]) -> tuple[CaseBank, RegimeAnswers]:
    """Validate what the sandbox sent into the bank and the regimes' answers."""
    try:
        generated, probes, regimes = _decode(path, frames, problem.config.variants)
    except ProblemError:
        raise
    except (ProtocolError, KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        raise ProblemError(
            path, None, f"its sandbox sent malformed data ({str(error)[:MAX_TEXT]})"
        ) from None
    with_probes = problem.config.memory_budget is not None
    if with_probes and probes is None:
        raise ProblemError(path, "memory_probes()", "its sandbox sent no memory probes")
    bank = assemble(
        path, generated, problem.part_arguments, lambda: probes if with_probes else None
    )
    return bank, regimes


def _decode(
    path: Path, frames: list[Frame], variants: int
) -> tuple[list[list[object]], list[object] | None, RegimeAnswers]:
    generated: list[list[object]] = []
    probes: list[object] | None = None
    regimes: RegimeAnswers | None = None
    for frame in frames:
        if frame.kind is Kind.GENERATED:
            cases = _cases(path, frame.meta["cases"], frame.data)
            if frame.meta["seed"] is None:
                probes = cases
            elif frame.meta["seed"] == len(generated):
                generated.append(cases)
            else:
                raise ValueError("seeds out of order")
        elif frame.kind is Kind.REGIMES:
            regimes = _regimes(path, frame.meta, variants)
        elif frame.kind is not Kind.DONE:
            raise ValueError(f"a {frame.kind.name} frame")
    if len(generated) != variants or regimes is None:
        raise ValueError(f"{len(generated)} of {variants} variants, regimes {regimes is not None}")
    return generated, probes, regimes


def _cases(path: Path, items: list[dict[str, Any]], data: bytes) -> list[object]:
    cases: list[object] = []
    for item in items:
        if "other" in item:
            raise ProblemError(
                path, "cases()", f"yielded {_text(item['other'])}, expected grader.cases.Case"
            )
        name = _text(item["name"])
        args: dict[str, Any] = {}
        for argument, encoded in zip(item["names"], item["args"], strict=True):
            if not isinstance(argument, str) or encoded["kind"] not in ("float", "array", "tree"):
                where = f"case {name!r}, argument {_text(argument)!r}"
                why = _text(encoded.get("why")) or (
                    "must be a Python float, a float32 numpy array or a dict of them, got"
                    f" {_text(encoded.get('type'))}"
                )
                raise ProblemError(path, where, why)
            args[argument] = protocol.unpack_cases(
                [{"args": [encoded]}], data, max_elements=MAX_INPUT_ELEMENTS
            )[0][0]
        note = _text(item["note"])
        part = item.get("part")
        part = _text(part) if part is not None else None
        cases.append(Case(name, args, sample=item["sample"] is True, note=note, part=part))
    return cases


def _regimes(path: Path, meta: dict[str, Any], variants: int) -> RegimeAnswers:
    """The regimes' answers, their errors worded as a trusted problem's are."""
    if meta["invalid"] is not None:
        return RegimeAnswers(
            {}, invalid=str(ProblemError(path, "regimes()", _text(meta["invalid"])))
        )
    covering: dict[str, tuple[tuple[str, ...], ...]] = {}
    errors: dict[str, str] = {}
    for name, answer in meta["regimes"].items():
        if answer["error"] is not None:
            errors[name] = str(ProblemError(path, f"regimes()[{name!r}]", _text(answer["error"])))
            continue
        if len(answer["covering"]) != variants:
            raise ValueError(f"regime {name!r} answered for {len(answer['covering'])} variants")
        covering[name] = tuple(
            tuple(_text(case) for case in variant) for variant in answer["covering"]
        )
    return RegimeAnswers(covering, errors)


def _write(path: Path, frames: list[Frame]) -> None:
    """The sandbox's frames as they came (validated already), atomically."""
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    for index, frame in enumerate(frames):
        arrays[f"{index}.kind"] = np.array([int(frame.kind)])
        arrays[f"{index}.meta"] = np.array([json.dumps(frame.meta)])
        arrays[f"{index}.data"] = np.frombuffer(frame.data, dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        np.savez(handle, allow_pickle=False, **arrays)
    os.replace(temporary, path)


def _read(path: Path | io.BytesIO) -> list[Frame]:
    with np.load(path, allow_pickle=False) as archive:
        count = len(archive.files) // 3
        return [
            Frame(
                Kind(int(archive[f"{index}.kind"][0])),
                protocol.parse_meta(str(archive[f"{index}.meta"][0]).encode()),
                archive[f"{index}.data"].tobytes(),
            )
            for index in range(count)
        ]


run_untrusted_cases_with(sandboxed_cases)
