"""The child that runs an untrusted author's cases.py, inside the learner sandbox.

Started like grader/child/run.py (a bootstrap that puts /judge on sys.path, the result
fd as its argument), but it runs no solution: it reads one AUTHOR_CASES frame from
stdin (cases.py's source, the number of variants, whether to call memory_probes()),
runs the author's code the way grader/cases.py does for a trusted problem, and sends
back what it produced as data only: one GENERATED frame per seed (then one for the
probes), one REGIMES frame (which hidden cases each regime's predicate holds, per
variant: the predicates run here, never in the parent), DONE. Where the author's code
fails, one AUTHOR_ERROR frame says where, why and on which line, and the child stops.

Nothing here validates a case beyond what it takes to put it on the wire: the parent
(grader/author_code.py) rebuilds every value from bytes and validates it as it would a
trusted problem's, so a cases.py that tampers with this process gains nothing but its
own wrong answer.

``from grader.cases import Case`` is what every cases.py writes; the sandbox holds no
grader/cases.py, so a stand-in ``Case`` of the same fields is installed under that
name before the author's code runs.
"""

from __future__ import annotations

import inspect
import os
import resource
import sys
import traceback
import types
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from grader.child import protocol
from grader.child.protocol import Kind

FILENAME = "cases.py"
MAX_MESSAGE_CHARS = 2000
MAX_REQUEST_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Case:
    """The stand-in for grader.cases.Case: the same fields, nothing else."""

    name: str
    args: dict[str, Any]
    sample: bool = False
    note: str = field(default="", compare=False)
    probe: bool = False
    part: str | None = None


class AuthorError(Exception):
    """The author's code failed: ``where`` (the function) and a one-line ``message``."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where, self.message = where, message


def _text(value: object) -> str:
    try:
        return str(value)[:MAX_MESSAGE_CHARS]
    except BaseException:  # a hostile __str__ must not take the child down
        return "(the message could not be rendered)"


def _raised(where: str, error: BaseException) -> AuthorError:
    lines = [
        frame.lineno
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename == FILENAME
    ]
    line = f" (line {lines[-1]})" if lines else ""
    return AuthorError(where, f"raised {type(error).__name__}: {_text(error)}{line}")


def _call(where: str, function: Any, *args: Any) -> Any:
    try:
        return function(*args)
    except AuthorError:
        raise
    except BaseException as error:
        raise _raised(where, error) from None


def _tree_leaves(tree: dict[Any, Any], prefix: str, depth: int) -> list[tuple[str, Any]]:
    if depth >= protocol.MAX_TREE_DEPTH:
        raise ValueError(f"trees nest at most {protocol.MAX_TREE_DEPTH} dicts deep")
    if not tree:
        raise ValueError("an empty dict is not a tree of arrays")
    leaves: list[tuple[str, Any]] = []
    for key, item in tree.items():
        if type(key) is not str or not key or "/" in key:
            raise ValueError(f"tree keys must be non-empty strings without '/', got {_text(key)!r}")
        if isinstance(item, dict):
            leaves += _tree_leaves(item, f"{prefix}{key}/", depth + 1)
        elif isinstance(item, np.ndarray) and item.dtype.name in protocol.WIRE_DTYPES:
            leaves.append((prefix + key, item))
        else:
            raise ValueError(
                f"a tree's leaves are float32 arrays; {key!r} is {type(item).__name__}"
            )
    return leaves


def _encode(value: Any, offset: int, chunks: list[bytes]) -> tuple[dict[str, Any], int]:
    """One argument on the wire; what cannot travel says why, for the parent to report."""
    if type(value) is float:
        if value != value or value in (float("inf"), float("-inf")):
            return {"kind": "other", "why": "must be a finite float"}, offset
        return {"kind": "float", "value": value}, offset
    if isinstance(value, dict):
        try:
            paths, arrays = zip(*_tree_leaves(value, "", 0), strict=True)
        except ValueError as error:
            return {"kind": "other", "why": _text(error)}, offset
        specs, raw = protocol.pack_arrays(list(arrays), offset)
        chunks.append(raw)
        return {"kind": "tree", "paths": list(paths), "specs": specs}, offset + len(raw)
    if isinstance(value, np.ndarray) and value.dtype.name in protocol.WIRE_DTYPES:
        specs, raw = protocol.pack_arrays([np.asarray(value)], offset)
        chunks.append(raw)
        return {"kind": "array", "spec": specs[0]}, offset + len(raw)
    return {"kind": "other", "type": type(value).__name__}, offset


def _encode_cases(items: list[Any]) -> tuple[list[dict[str, Any]], bytes]:
    """Each yielded item as ``{"name", "sample", "note", "part", "names", "args"}``, or
    ``{"other": type}`` for anything that is not a Case."""
    meta: list[dict[str, Any]] = []
    chunks: list[bytes] = []
    offset = 0
    for item in items:
        if not isinstance(item, Case):
            meta.append({"other": type(item).__name__})
            continue
        if type(item.name) is not str or not isinstance(item.args, dict):
            meta.append({"other": "Case with a name that is not a string or args not a dict"})
            continue
        encoded: list[dict[str, Any]] = []
        for value in item.args.values():
            spec, offset = _encode(value, offset, chunks)
            encoded.append(spec)
        meta.append(
            {
                "name": item.name,
                "sample": item.sample is True,
                "note": _text(item.note),
                "part": item.part if type(item.part) is str else None,
                "names": [_text(name) for name in item.args],
                "args": encoded,
            }
        )
    return meta, b"".join(chunks)


def _regimes(module: types.ModuleType, generated: list[list[Any]]) -> dict[str, Any]:
    """For each regime regimes() names, the hidden cases of each variant in it, or the
    first error of its predicate; ``invalid``: why regimes() itself is unusable."""
    regimes = getattr(module, "regimes", None)
    if regimes is None:
        return {"regimes": {}, "invalid": None}
    try:
        found = _call("regimes()", regimes) if callable(regimes) else None
    except AuthorError as failure:
        return {"regimes": {}, "invalid": failure.message}
    if not isinstance(found, dict) or not all(
        type(name) is str and callable(test) for name, test in found.items()
    ):
        return {"regimes": {}, "invalid": "regimes() returns a dict of name -> predicate(args)"}
    answers: dict[str, Any] = {}
    for name, test in found.items():
        covering: list[list[str]] = []
        error = None
        for cases in generated:
            inside = []
            for case in cases:
                if not isinstance(case, Case) or case.sample:
                    continue
                try:
                    if bool(test(dict(case.args))):
                        inside.append(case.name)
                except BaseException as raised:
                    error = f"raised {type(raised).__name__} on case {case.name!r}: {_text(raised)}"
                    break
            if error:
                break
            covering.append(inside)
        answers[name] = {"covering": None if error else covering, "error": error}
    return {"regimes": answers, "invalid": None}


def _run(channel: BinaryIO, request: dict[str, Any], source: str) -> None:
    module = types.ModuleType("cases")
    module.__file__ = FILENAME
    try:
        code = compile(source, FILENAME, "exec")
    except SyntaxError as error:
        raise AuthorError("", f"syntax error on line {error.lineno}: {error.msg}") from None
    _call("cases()", exec, code, module.__dict__)
    generate = getattr(module, "cases", None)
    if not callable(generate):
        raise AuthorError("cases", "cases.py must define a function cases(seed)")
    try:
        inspect.signature(generate).bind(0)
    except (TypeError, ValueError):
        raise AuthorError(
            "cases",
            "cases() must take one argument, the variant's seed: def cases(seed): ..."
            " (see docs/authoring.md, 'Hidden inputs change between submissions')",
        ) from None
    generated: list[list[Any]] = []
    for seed in range(int(request["variants"])):
        cases = _call("cases()", lambda s=seed: list(generate(s)))
        generated.append(cases)
        meta, data = _encode_cases(cases)
        channel.write(protocol.encode_frame(Kind.GENERATED, {"seed": seed, "cases": meta}, data))
    if request["probes"]:
        probes = getattr(module, "memory_probes", None)
        if not callable(probes):
            raise AuthorError("memory_probes", "a memory budget needs memory_probes() in cases.py")
        meta, data = _encode_cases(_call("memory_probes()", lambda: list(probes())))
        channel.write(protocol.encode_frame(Kind.GENERATED, {"seed": None, "cases": meta}, data))
    channel.write(protocol.encode_frame(Kind.REGIMES, _regimes(module, generated)))


def _stand_in_cases_module() -> None:
    """``grader.cases`` as cases.py imports it: the stand-in ``Case`` alone."""
    stand_in = types.ModuleType("grader.cases")
    stand_in.Case = Case  # type: ignore[attr-defined]
    sys.modules["grader.cases"] = stand_in


def main() -> None:
    channel = os.fdopen(int(sys.argv[1]), "wb", buffering=0)
    stdin = os.fdopen(0, "rb", buffering=0)
    frame = protocol.read_frame(stdin, max_data_bytes=MAX_REQUEST_BYTES)
    if frame is None or frame.kind is not Kind.AUTHOR_CASES:
        raise SystemExit("no request received")
    stdin.close()
    seconds = int(frame.meta["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
    _stand_in_cases_module()
    try:
        _run(channel, frame.meta, frame.data.decode("utf-8-sig"))
    except AuthorError as failure:
        meta = {"where": failure.where, "message": failure.message}
        channel.write(protocol.encode_frame(Kind.AUTHOR_ERROR, meta))
    except ValueError as error:  # a value the channel refuses (pack_arrays)
        meta = {"where": "cases()", "message": _text(error)}
        channel.write(protocol.encode_frame(Kind.AUTHOR_ERROR, meta))
    channel.write(protocol.encode_frame(Kind.DONE, {}))
    os._exit(0)  # no atexit handler or thread of the author's gets to run after DONE


if __name__ == "__main__":
    main()
