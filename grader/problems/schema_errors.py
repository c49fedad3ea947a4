"""Schema errors in the author's language: which file, which field (and its TOML line),
and what is allowed there; never a regular expression or a Pydantic dump.

problem.toml and quiz.toml are validated by Pydantic models (grader/problems/problem.py,
grader/problems/quiz.py); their first error becomes one ``ProblemError`` here."""

from __future__ import annotations

import re
import tomllib
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from grader.errors import ProblemError

# What each pattern of the schemas allows, as an author reads it. A pattern missing
# here is a bug (tests/grader/problems/test_schema_errors.py checks the schemas' own).
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
ALLOWED_BY_PATTERN = {
    SLUG_PATTERN: "lowercase letters and digits, words joined by single hyphens (like my-track)",
    IDENTIFIER_PATTERN: (
        "a Python name: letters, digits and underscores, not starting with a digit (like solve)"
    ),
}

_BOUND_KEYS = ("ge", "gt", "le", "lt")
_KINDS = {
    "int": "a whole number",
    "float": "a number",
    "string": "text in quotes",
    "bool": "true or false",
    "list": "a list in [ ]",
    "tuple": "a list in [ ]",
    "dict": "a table",
    "model": "a table",
}


def toml_error(path: Path, error: tomllib.TOMLDecodeError) -> ProblemError:
    """A TOML syntax error, with its line where tomllib names one."""
    message = str(error)
    found = re.search(r" \(at line (\d+), column \d+\)$", message)
    line = int(found.group(1)) if found else None
    text = message[: found.start()] if found else message
    return ProblemError(path, None, f"invalid TOML syntax: {text}", line=line)


def schema_error(
    path: Path, error: ValidationError, text: str, model: type[BaseModel]
) -> ProblemError:
    """The first of ``error``'s problems in the author's words, with the TOML line of
    its field (``text`` is the file's TOML) and a count of the others."""
    details = error.errors()[0]
    loc = tuple(details["loc"])
    message = _explain(details, model)
    count = error.error_count()
    if count > 1:
        message += f" (and {count - 1} more problem(s) in this file)"
    return ProblemError(path, _field_name(loc), message, line=_line_of(text, loc))


def _field_name(loc: tuple[int | str, ...]) -> str | None:
    """``("outputs", 1, "name")`` as ``outputs #2.name`` (entries counted from 1)."""
    if not loc:
        return None
    name = ""
    for part in loc:
        name += f" #{part + 1}" if isinstance(part, int) else (f".{part}" if name else part)
    return name


def _explain(details: ErrorDetails, model: type[BaseModel]) -> str:
    kind, loc, value = details["type"], tuple(details["loc"]), details.get("input")
    context: dict[str, Any] = dict(details.get("ctx") or {})
    if kind == "extra_forbidden":
        allowed = _fields_at(model, loc[:-1])
        table = _field_name(loc[:-1])
        where = f" in {table}" if table else " here"
        listed = f"; allowed{where}: {', '.join(allowed)}" if allowed else ""
        return f"unknown field{listed} (see docs/authoring.md)"
    if kind == "missing":
        return "is required and missing (see docs/authoring.md)"
    if kind == "string_pattern_mismatch":
        spelling = ALLOWED_BY_PATTERN.get(str(context.get("pattern")), "another spelling")
        return f"{value!r} is not allowed: use {spelling}"
    if kind in ("literal_error", "enum"):
        return f"{value!r} is not allowed: use {context.get('expected')}"
    bounds = {
        "greater_than_equal": "at least {ge}",
        "greater_than": "more than {gt}",
        "less_than_equal": "at most {le}",
        "less_than": "less than {lt}",
    }
    if kind in bounds:
        limits = {key: f"{limit:g}" for key, limit in context.items() if key in _BOUND_KEYS}
        return f"{value!r} is out of range: it must be {bounds[kind].format(**limits)}"
    if kind.endswith(("too_short", "too_long")):
        counted = "character(s)" if isinstance(value, str) else "item(s)"
        if kind.endswith("too_short"):
            return f"needs at least {context.get('min_length')} {counted}"
        return f"allows at most {context.get('max_length')} {counted}"
    for prefix, description in _KINDS.items():
        if kind.startswith(f"{prefix}_") or kind == f"{prefix}_type":
            return f"{value!r} is not allowed: use {description}"
    if kind == "value_error":
        return str(context.get("error", details["msg"]))
    return str(details["msg"])


def _unwrap(annotation: Any) -> Any:
    """The model (or the item model of a list, tuple or optional) an annotation holds."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType, list, tuple, dict):
        for argument in get_args(annotation):
            inner = _unwrap(argument)
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner
    return annotation


def _fields_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The fields of the table at ``loc`` of ``model`` (empty when it is not a table)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = current.model_fields.get(part)
        if field is None:
            return []
        current = _unwrap(field.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


_ARRAY_TABLE = re.compile(r"^\s*\[\[\s*([^\]]+?)\s*\]\]")
_TABLE = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")


def _keys(dotted: str) -> list[str]:
    return [part.strip().strip("\"'") for part in dotted.split(".")]


def _line_of(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The line of ``text`` (TOML) where the field at ``loc`` is written, else of the
    nearest table holding it; None when neither is written (a missing top-level field)."""
    lines: dict[tuple[int | str, ...], int] = {}
    counts: dict[tuple[int | str, ...], int] = {}
    arrays: set[tuple[str, ...]] = set()
    table: tuple[int | str, ...] = ()

    def resolve(names: list[str]) -> tuple[int | str, ...]:
        """A header's path, with the current entry of each array of tables in it."""
        path: tuple[int | str, ...] = ()
        for depth, name in enumerate(names):
            path += (name,)
            if tuple(names[: depth + 1]) in arrays and depth < len(names) - 1:
                path += (counts[path] - 1,)
        return path

    for number, line in enumerate(text.splitlines(), 1):
        if match := _ARRAY_TABLE.match(line):
            names = _keys(match.group(1))
            arrays.add(tuple(names))
            base = resolve(names)
            counts[base] = counts.get(base, 0) + 1
            table = (*base, counts[base] - 1)
            lines.setdefault(table, number)
            lines.setdefault(base, number)
        elif match := _TABLE.match(line):
            table = resolve(_keys(match.group(1)))
            lines.setdefault(table, number)
        elif match := _KEY.match(line):
            lines.setdefault((*table, *_keys(match.group(1))), number)
    for end in range(len(loc), 0, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None
