"""The child that runs a problem's tests.py, inside the learner sandbox; and the
author-facing ``test`` and ``call`` that tests.py imports (grader/author_tests.py
re-exports them).

A test is a generator function taking a NumPy ``Generator``: it yields once a list of
``call(part_or_entry_point, **args)`` and receives the learner's outputs for them,
then asserts. Its code never runs in the learner's process nor in the grader's: this
child runs it twice, each time started afresh by grader/author_tests.py.

- ``calls`` (phase 1): import tests.py, and for each test drawn (visible tests with the
  fixed seed, hidden ones with the submission's draw) send its declaration, its calls'
  inputs and a digest of them, as one TEST_CALLS frame of data.
- ``verdicts`` (phase 3): import tests.py again, draw each test's calls again with the
  same seed (a different digest: the test is broken, not failed), hand it the learner's
  outputs that came with the request, and send one TEST_RESULTS frame: each test's
  ``passed``, ``failed`` or ``broken`` and the first line of what it raised.

Where tests.py itself fails (a syntax error, a bad declaration, a test that raises
before it yields), one AUTHOR_ERROR frame says where and why, as for cases.py
(grader/child/author_cases.py, whose encoding of inputs this reuses).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import os
import resource
import sys
import traceback
import types
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from grader.child import protocol
from grader.child.author_cases import AuthorError, _encode, _text
from grader.child.protocol import Kind

FILENAME = "tests.py"
MAX_TESTS = 50
MAX_CALLS = 64  # calls of all tests together, in one grading
MAX_REQUEST_BYTES = 512 * 1024 * 1024  # phase 3 brings the learner's outputs
MAX_MESSAGE_CHARS = 2000
MAX_OUTPUT_ELEMENTS = 1 << 28


@dataclass(frozen=True)
class Call:
    """One call of the learner's code a test asks for: a part's (or entry point's)
    name and its arguments by name."""

    target: str
    args: dict[str, Any]


def call(part_or_entry_point: str, **args: Any) -> Call:
    """The learner's ``part_or_entry_point`` called with ``args`` (by argument name)."""
    return Call(part_or_entry_point, dict(args))


@dataclass(frozen=True)
class Declared:
    name: str
    function: Callable[..., Any]
    points: float
    message: str
    hidden: bool


_DECLARED: list[Declared] = []


def test(
    *,
    points: float,
    message: str,
    hidden: bool = False,  # noqa: PT028 (not a pytest test)
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a test: ``points`` (> 0) toward the score, ``message`` shown to a learner
    when a visible test fails, ``hidden`` (run on a submit only, says only passed/failed)."""
    if isinstance(points, bool) or not isinstance(points, int | float):
        raise TypeError("@test(points=...) must be a number")
    if not math.isfinite(points) or not 0 < points <= 1000:
        raise ValueError("@test(points=...) must be more than 0 and at most 1000")
    if not isinstance(message, str) or not message.strip():
        raise ValueError("@test(message=...) must be a non-empty string")
    if not isinstance(hidden, bool):
        raise TypeError("@test(hidden=...) must be True or False")

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        if not inspect.isgeneratorfunction(function):
            raise TypeError(
                f"test {getattr(function, '__name__', '?')} must be a generator function that"
                " yields its list of calls once"
            )
        _DECLARED.append(Declared(function.__name__, function, float(points), message, hidden))
        return function

    return register


test.__test__ = False  # type: ignore[attr-defined]  # the author's decorator, not a pytest test


def _raised(where: str, error: BaseException) -> AuthorError:
    lines = [
        frame.lineno
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename == FILENAME
    ]
    line = f" (line {lines[-1]})" if lines else ""
    return AuthorError(where, f"raised {type(error).__name__}: {_text(error)}{line}")


def seed_for(name: str, seed: int) -> np.random.Generator:
    """A test's generator: the seed (0 for visible tests, 1 + the submission's draw for
    hidden ones) and the test's name, so that two tests draw independently."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _declared(source: str) -> list[Declared]:
    _DECLARED.clear()
    module = types.ModuleType("tests")
    module.__file__ = FILENAME
    try:
        code = compile(source, FILENAME, "exec")
    except SyntaxError as error:
        raise AuthorError("", f"syntax error on line {error.lineno}: {error.msg}") from None
    try:
        exec(code, module.__dict__)
    except BaseException as error:
        raise _raised("", error) from None
    tests = list(_DECLARED)
    if not tests:
        raise AuthorError("", "tests.py declares no test (decorate a generator with @test(...))")
    if len(tests) > MAX_TESTS:
        raise AuthorError("", f"tests.py declares {len(tests)} tests; at most {MAX_TESTS}")
    names = [declared.name for declared in tests]
    for name in names:
        if names.count(name) > 1:
            raise AuthorError(f"test {name}", "two tests have this name; each needs its own")
    return tests


def _draw(declared: Declared, seed: int) -> tuple[Any, list[Call]]:
    """The test's generator, paused at its one round of calls."""
    where = f"test {declared.name}"
    try:
        generator = declared.function(seed_for(declared.name, seed))
        calls = next(generator)
    except StopIteration:
        raise AuthorError(where, "returned before yielding its list of calls") from None
    except BaseException as error:
        raise _raised(where, error) from None
    if isinstance(calls, Call):
        calls = [calls]
    if not isinstance(calls, list | tuple) or not calls:
        raise AuthorError(where, "must yield a non-empty list of call(...)")
    for item in calls:
        if not isinstance(item, Call) or type(item.target) is not str:
            raise AuthorError(where, f"yielded {type(item).__name__}, expected call(...)")
    return generator, list(calls)


def _encode_calls(
    test_index: int, calls: list[Call], offset: int
) -> tuple[list[dict[str, Any]], bytes]:
    meta: list[dict[str, Any]] = []
    chunks: list[bytes] = []
    for item in calls:
        encoded = []
        for value in item.args.values():
            spec, offset = _encode(value, offset, chunks)
            encoded.append(spec)
        meta.append(
            {
                "test": test_index,
                "target": _text(item.target),
                "names": [_text(name) for name in item.args],
                "args": encoded,
            }
        )
    return meta, b"".join(chunks)


def _digest(calls: list[Call]) -> str:
    meta, data = _encode_calls(0, calls, 0)
    digest = hashlib.sha256(protocol.encode_frame(Kind.TEST_CALLS, {"calls": meta}, data))
    return digest.hexdigest()


def _seed(declared: Declared, seeds: dict[str, Any]) -> int | None:
    value = seeds["hidden"] if declared.hidden else seeds["visible"]
    return None if value is None else int(value)


def _calls(channel: BinaryIO, request: dict[str, Any], source: str) -> None:
    """One TEST_CALLS frame per entry of ``request["draws"]`` (the seeds of one grading)."""
    declared = _declared(source)
    for number, seeds in enumerate(request["draws"]):
        answer, data = _draw_all(declared, seeds)
        channel.write(protocol.encode_frame(Kind.TEST_CALLS, {"draw": number, **answer}, data))


def _draw_all(declared: list[Declared], seeds: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    tests: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    chunks: list[bytes] = []
    offset = 0
    for test_ in declared:
        seed = _seed(test_, seeds)
        entry: dict[str, Any] = {
            "name": test_.name,
            "points": test_.points,
            "message": _text(test_.message),
            "hidden": test_.hidden,
            "digest": None,
        }
        tests.append(entry)
        if seed is None:
            continue
        _, drawn = _draw(test_, seed)
        entry["digest"] = _digest(drawn)
        if len(calls) + len(drawn) > MAX_CALLS:
            raise AuthorError(f"test {test_.name}", f"the tests make more than {MAX_CALLS} calls")
        encoded, data = _encode_calls(len(tests) - 1, drawn, offset)
        calls += encoded
        chunks.append(data)
        offset += len(data)
    return {"tests": tests, "calls": calls}, b"".join(chunks)


def _output(item: dict[str, Any], data: bytes) -> Any:
    """One output as the learner's function returned it: an array, or a tree as nested
    dicts of arrays."""
    if item["kind"] == "array":
        return protocol.unpack_array(item["spec"], data, max_elements=MAX_OUTPUT_ELEMENTS)
    tree: dict[str, Any] = {}
    for path, spec in zip(item["paths"], item["specs"], strict=True):
        *parents, leaf = str(path).split("/")
        node = tree
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = protocol.unpack_array(spec, data, max_elements=MAX_OUTPUT_ELEMENTS)
    return tree


def _first_line(error: BaseException) -> str:
    text = _text(error).strip()
    line = text.splitlines()[0] if text else ""
    if isinstance(error, AssertionError):
        return line or "an assertion failed"
    return f"{type(error).__name__}: {line}" if line else type(error).__name__


def _verdict(declared: Declared, seed: int, digest: str, outputs: list[Any]) -> dict[str, Any]:
    try:
        generator, drawn = _draw(declared, seed)
    except AuthorError as failure:
        return {"status": "broken", "message": failure.message}
    if _digest(drawn) != digest:
        return {"status": "broken", "message": "drew different calls for the same seed"}
    if len(drawn) != len(outputs):
        return {"status": "broken", "message": "the outputs do not match its calls"}
    try:
        generator.send(outputs)
    except StopIteration:
        return {"status": "passed", "message": ""}
    except BaseException as error:
        return {"status": "failed", "message": _first_line(error)}
    generator.close()
    return {"status": "broken", "message": "yielded a second time: a test has one round of calls"}


def _verdicts(channel: BinaryIO, request: dict[str, Any], source: str, data: bytes) -> None:
    """One TEST_RESULTS frame per entry of ``request["jobs"]`` (one grading's tests: their
    seeds, and each test to judge with its digest and number of calls); ``data``: a JSON
    list of every output (``job``, ``test``, ``call``, an array or a tree), then their bytes."""
    size = int(request["outputs_bytes"])
    described = json.loads(data[:size])
    arrays = data[size:]
    by_name = {declared.name: declared for declared in _declared(source)}
    for number, job in enumerate(request["jobs"]):
        results: dict[str, Any] = {}
        for index, asked in enumerate(job["tests"]):
            declared = by_name.get(asked["name"])
            seed = None if declared is None else _seed(declared, job["seeds"])
            if declared is None or seed is None:
                results[asked["name"]] = {"status": "broken", "message": "was not declared again"}
                continue
            returned: list[list[Any]] = [[] for _ in range(int(asked["calls"]))]
            for item in described:
                if item["job"] == number and item["test"] == index:
                    returned[int(item["call"])].append(_output(item, arrays))
            outputs = [values[0] if len(values) == 1 else tuple(values) for values in returned]
            results[asked["name"]] = _verdict(declared, seed, asked["digest"], outputs)
        channel.write(protocol.encode_frame(Kind.TEST_RESULTS, {"job": number, "results": results}))


def _stand_in_module() -> None:
    """``grader.author_tests`` as tests.py imports it: ``test`` and ``call`` alone."""
    stand_in = types.ModuleType("grader.author_tests")
    stand_in.test = test  # type: ignore[attr-defined]
    stand_in.call = call  # type: ignore[attr-defined]
    sys.modules["grader.author_tests"] = stand_in


def main() -> None:
    channel = os.fdopen(int(sys.argv[1]), "wb", buffering=0)
    stdin = os.fdopen(0, "rb", buffering=0)
    frame = protocol.read_frame(stdin, max_data_bytes=MAX_REQUEST_BYTES)
    if frame is None or frame.kind is not Kind.AUTHOR_TESTS:
        raise SystemExit("no request received")
    stdin.close()
    seconds = int(frame.meta["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
    _stand_in_module()
    size = int(frame.meta["source_bytes"])  # the source, then (phase 3) the outputs
    source = frame.data[:size].decode("utf-8-sig")
    try:
        if frame.meta["phase"] == "calls":
            _calls(channel, frame.meta, source)
        else:
            _verdicts(channel, frame.meta, source, frame.data[size:])
    except AuthorError as failure:
        meta = {"where": failure.where, "message": failure.message}
        channel.write(protocol.encode_frame(Kind.AUTHOR_ERROR, meta))
    except ValueError as error:  # a value the channel refuses (pack_arrays)
        meta = {"where": "", "message": _text(error)}
        channel.write(protocol.encode_frame(Kind.AUTHOR_ERROR, meta))
    channel.write(protocol.encode_frame(Kind.DONE, {}))
    os._exit(0)  # no atexit handler or thread of the author's gets to run after DONE


if __name__ == "__main__":
    main()
