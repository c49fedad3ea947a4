"""A learner's `.ipynb` read as data: the code a problem's entry points need, taken
from the notebook's code cells in order, never run here.

The rules (docs/api.md, "Notebooks", says them to learners):

- nbformat 4 JSON, at most ``MAX_NOTEBOOK_BYTES`` and ``MAX_CELLS`` cells, its code
  cells at most ``MAX_CELL_CODE_BYTES`` each, ``MAX_CODE_BYTES`` and
  ``MAX_STATEMENTS`` top-level statements in all; anything else is a
  ``NotebookError`` in one sentence.
- A cell whose first line is a cell magic (``%%time``) is dropped whole; a line magic
  (``%pip``), a shell escape (``!ls``) or an assignment from one (``x = !ls``) drops
  its line (an indented one becomes ``pass``). A cell that still does not parse is
  skipped.
- Of the top-level statements, imports, ``def``/``class`` and assignments to names
  are kept; anything else (a call, a loop, a print: training or I/O at import time)
  is dropped. A later definition of a name replaces an earlier one.
- Only what the entry points reach is kept: the definitions and imports of the names
  they use, transitively; ``from __future__`` and ``*`` imports always.

Every drop is a note ("cell 4, line 1: shell escape dropped"); cells are numbered
as the notebook lists them, markdown included, from 1.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass, field

from grader.problems.problem import Problem

MAX_NOTEBOOK_BYTES = 4 * 1024 * 1024
MAX_CELLS = 500
# The server parses the code cells (never runs them): an AST costs some 500 bytes of
# memory per byte of dense code (4 MiB of `[1,1,...]`: 10 s and 2 GB), so the code is
# capped far below the file, which is mostly outputs. A cell holds at most what a
# typed submission may (grader/config.py max_source_bytes' default).
MAX_CELL_CODE_BYTES = 256 * 1024
MAX_CODE_BYTES = 1024 * 1024
MAX_STATEMENTS = 5_000  # top-level statements, each read into a note or a definition
MAX_MAGIC_LINES = 1000  # each is read with its cell's code before it: bounded
# The characters read again to tell a magic from a line continuing a string or a
# bracket, over the whole notebook (a magic inside a long open string rereads it).
MAX_REREAD_CHARS = 4 * MAX_NOTEBOOK_BYTES
MAX_HEADER_NOTES = 40  # notes written into the stored code's opening comment
MAX_NOTES = 200  # notes answered to the learner; the rest are counted
_SNIPPET = 60

_CELL_MAGIC = re.compile(r"\s*%%")
_LINE_MAGIC = re.compile(r"(\s*)([%!])")
# `x = !ls`, `files = %sx ls`, `a, b = !cmd`: IPython's assignment from a magic or shell.
_ASSIGNED_MAGIC = re.compile(r"(\s*)[A-Za-z_][\w.,\s\[\]()]*=\s*[%!]")


class NotebookError(ValueError):
    """A notebook that cannot be read: its message names the problem, in one sentence."""


@dataclass(frozen=True)
class CodeCell:
    number: int  # the cell's place in the notebook, from 1, markdown cells counted
    source: str


@dataclass(frozen=True)
class Extracted:
    """What a notebook gives one problem: the code graded as if typed, and what was
    left out on the way."""

    code: str
    notes: list[str]
    cells: list[int]  # the cells the code comes from
    defined: list[str]  # the entry points the notebook defines, in the order asked
    missing: list[str] = field(default_factory=list)  # those it does not


def code_cells(raw: bytes | str) -> list[CodeCell]:
    """The notebook's code cells in order, or NotebookError for anything malformed."""
    size = len(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
    if size > MAX_NOTEBOOK_BYTES:
        raise NotebookError(
            f"The notebook is {size // 1024} KiB; the limit is {MAX_NOTEBOOK_BYTES // 1024} KiB."
        )
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        document = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise NotebookError(
            "The file is not a notebook: it is not JSON (an .ipynb file is)."
        ) from None
    if not isinstance(document, dict):
        raise NotebookError("The file is not a notebook: its JSON is not an object.")
    if document.get("nbformat") != 4:
        raise NotebookError(
            f"The notebook's format is {document.get('nbformat')!r}; only nbformat 4 is read"
            " (save it with Jupyter 4 or later)."
        )
    cells = document.get("cells")
    if not isinstance(cells, list):
        raise NotebookError("The notebook has no list of cells.")
    if len(cells) > MAX_CELLS:
        raise NotebookError(f"The notebook has {len(cells)} cells; the limit is {MAX_CELLS}.")
    found = []
    code_bytes = 0
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f"Cell {number} is not a notebook cell (no cell_type).")
        if cell["cell_type"] != "code":
            continue
        source = _source_text(cell.get("source"), number)
        try:
            source.encode("utf-8")
        except UnicodeEncodeError:
            raise NotebookError(f"Cell {number} holds text that is not valid Unicode.") from None
        size = len(source.encode("utf-8"))
        if size > MAX_CELL_CODE_BYTES:
            raise NotebookError(
                f"Cell {number} holds {size // 1024} KiB of code; a cell may hold at most"
                f" {MAX_CELL_CODE_BYTES // 1024} KiB (keep data in files, not in code cells)."
            )
        code_bytes += size
        found.append(CodeCell(number, source))
    if code_bytes > MAX_CODE_BYTES:
        raise NotebookError(
            f"The notebook's code cells hold {code_bytes // 1024} KiB of code; the limit is"
            f" {MAX_CODE_BYTES // 1024} KiB."
        )
    if not found:
        raise NotebookError("The notebook has no code cells.")
    return found


def _source_text(source: object, number: int) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    raise NotebookError(f"Cell {number}'s source is neither a string nor a list of strings.")


@dataclass(frozen=True)
class _Statement:
    cell: int
    order: int  # place among every kept statement of the notebook
    text: str
    defines: frozenset[str]
    uses: frozenset[str]
    always: bool = False  # `from __future__`, `import *`: the names are unknown


def _without_magics(cell: CodeCell, notes: list[str], budget: list[int]) -> str | None:
    """The cell less its magics; ``budget`` is [magic lines, characters reread] left."""
    lines = cell.source.split("\n")
    first = next((line for line in lines if line.strip()), "")
    if _CELL_MAGIC.match(first):
        notes.append(f"cell {cell.number}: cell magic {_snip(first.strip())} dropped the cell")
        return None
    kept: list[str] = []
    checked = 0  # kept[:checked] ends a logical line: later text is read from there
    for index, line in enumerate(lines, start=1):
        magic = _LINE_MAGIC.match(line) or _ASSIGNED_MAGIC.match(line)
        if magic is None:
            kept.append(line)
            continue
        # `% b` may also continue an expression, a string or a backslashed line: only
        # at the start of a logical line is it IPython's.
        budget[0] -= 1
        if budget[0] < 0:
            raise NotebookError(
                f"The notebook has more than {MAX_MAGIC_LINES} lines that start with % or !."
            )
        budget[1] -= sum(len(text) + 1 for text in kept[checked:])
        if budget[1] < 0:
            raise NotebookError(
                "The notebook has too many lines that start with % or ! inside long open"
                " strings or brackets to read; close them or move those lines."
            )
        if _continues(kept[checked:]):
            kept.append(line)
            continue
        what = "shell escape" if magic.group(0).rstrip()[-1] == "!" else "magic"
        notes.append(f"cell {cell.number}, line {index}: {what} {_snip(line.strip())} dropped")
        indent = magic.group(1)
        kept.append(f"{indent}pass" if indent else "")
        checked = len(kept)
    return "\n".join(kept)


def _continues(lines: list[str]) -> bool:
    """Whether ``lines`` leave a bracket, a triple-quoted string or a backslash open."""
    try:
        for _token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            pass
    except tokenize.TokenError as error:
        return "EOF in multi-line" in str(error.args[0])
    except (SyntaxError, ValueError):
        return False
    return False


def _snip(text: str) -> str:
    first = text.splitlines()[0] if text else ""
    return repr(first if len(first) <= _SNIPPET else first[: _SNIPPET - 1] + "…")


def _statements(cells: list[CodeCell], notes: list[str]) -> list[_Statement]:
    found: list[_Statement] = []
    budget = [MAX_MAGIC_LINES, MAX_REREAD_CHARS]
    statements = 0
    for cell in cells:
        if "\x00" in cell.source:  # never Python; and it breaks 3.12's tokenize (SystemError)
            notes.append(f"cell {cell.number}: holds a NUL character, so is not Python, skipped")
            continue
        source = _without_magics(cell, notes, budget)
        if source is None:
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError as error:
            notes.append(
                f"cell {cell.number}: does not parse as Python (line {error.lineno}:"
                f" {error.msg}), skipped"
            )
            continue
        except (RecursionError, MemoryError, ValueError):
            notes.append(f"cell {cell.number}: too deeply nested to read, skipped")
            continue
        statements += len(tree.body)
        if statements > MAX_STATEMENTS:
            raise NotebookError(
                f"The notebook has more than {MAX_STATEMENTS} top-level statements in its"
                f" code cells (cell {cell.number} passes it)."
            )
        lines = io.StringIO(source, newline="").readlines()  # as ast numbers them
        for node in tree.body:
            kept = _kept(node, lines, cell.number, len(found))
            if kept is None:
                segment = _segment(lines, node)
                notes.append(
                    f"cell {cell.number}, line {node.lineno}: top-level statement"
                    f" {_snip(segment)} dropped (only imports, definitions and assignments"
                    " to names are kept)"
                )
            else:
                found.append(kept)
    return found


def _segment(lines: list[str], node: ast.stmt | ast.expr) -> str:
    """``ast.get_source_segment`` on the cell's lines split once (it splits the whole
    source again for every node: 20,000 one-line statements took minutes)."""
    first, last, start, end = node.lineno, node.end_lineno, node.col_offset, node.end_col_offset
    if last is None or end is None:
        return ""
    if first == last:
        return lines[first - 1].encode()[start:end].decode()
    inner = lines[first : last - 1]
    opening = lines[first - 1].encode()[start:].decode()
    return "".join([opening, *inner, lines[last - 1].encode()[:end].decode()])


def _kept(node: ast.stmt, lines: list[str], cell: int, order: int) -> _Statement | None:
    text = _segment(lines, node)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        decorators = "".join(f"@{_segment(lines, d)}\n" for d in node.decorator_list)
        return _Statement(cell, order, decorators + text, frozenset({node.name}), _free(node))
    if isinstance(node, ast.Import | ast.ImportFrom):
        names = frozenset(
            (alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*"
        )
        always = isinstance(node, ast.ImportFrom) and (
            node.module == "__future__" or any(alias.name == "*" for alias in node.names)
        )
        return _Statement(cell, order, text, names, frozenset(), always)
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    if targets and all(_only_names(t) for t in targets):
        defined = frozenset(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        uses = _loads(value) if value is not None else frozenset()
        if isinstance(node, ast.AnnAssign):
            uses |= _loads(node.annotation)
        return _Statement(cell, order, text, defined, uses)
    return None


def _only_names(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    if isinstance(target, ast.Tuple | ast.List):
        return all(_only_names(element) for element in target.elts)
    return False


def _loads(node: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def _free(node: ast.AST) -> frozenset[str]:
    """The names a definition may read from the module: every name it mentions, less
    those it binds itself (arguments, assignments, inner definitions, imports), unless
    it declares them global. Generous: a miss would cost the learner a NameError."""
    mentioned = _loads(node)
    bound: set[str] = set()
    declared: set[str] = set()
    for inner in ast.walk(node):
        if inner is node:
            continue
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store | ast.Del):
            bound.add(inner.id)
        elif isinstance(inner, ast.arg):
            bound.add(inner.arg)
        elif isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(inner.name)
        elif isinstance(inner, ast.alias):
            bound.add((inner.asname or inner.name).split(".")[0])
        elif isinstance(inner, ast.Global | ast.Nonlocal):
            declared.update(inner.names)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        # Defaults, annotations and decorators are read in the module, not the body.
        outside = [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]
        outside += [node.returns] if node.returns else []
        outside += [
            a.annotation for a in ast.walk(node.args) if isinstance(a, ast.arg) and a.annotation
        ]
        read_outside = set().union(*(_loads(n) for n in outside if n is not None))
        return frozenset((mentioned - bound) | declared | read_outside)
    return frozenset((mentioned - bound) | declared)


def extract(
    raw: bytes | str, entry_points: Sequence[str], *, cells: list[CodeCell] | None = None
) -> Extracted:
    """The code ``entry_points`` need from the notebook ``raw`` (or its already read
    ``cells``). NotebookError when the notebook is malformed or defines none of them."""
    notes: list[str] = []
    statements = _statements(cells if cells is not None else code_cells(raw), notes)
    winner: dict[str, _Statement] = {}
    for statement in statements:  # later definitions replace earlier ones
        for name in statement.defines:
            winner[name] = statement
    defined = [name for name in entry_points if name in winner]
    missing = [name for name in entry_points if name not in winner]
    if not defined:
        raise NotebookError(
            f"The notebook defines none of {', '.join(entry_points)}: define"
            f" {'it' if len(entry_points) == 1 else 'them'} at the top level of a code cell."
        )
    needed: set[int] = set()
    waiting = list(defined)
    seen: set[str] = set()
    while waiting:
        name = waiting.pop()
        if name in seen or name not in winner:
            continue
        seen.add(name)
        statement = winner[name]
        needed.add(statement.order)
        waiting.extend(statement.uses)
    kept = [s for s in statements if s.order in needed or s.always]
    # `from __future__` must open the module, wherever the notebook had it.
    kept.sort(key=lambda s: (not s.text.startswith("from __future__"), s.order))
    for statement in statements:
        if statement.order in needed or statement.always:
            continue
        replaced = statement.defines and all(winner[n] is not statement for n in statement.defines)
        reason = "defined again later" if replaced else "not used by the entry points"
        notes.append(f"cell {statement.cell}: {_snip(statement.text)} left out ({reason})")
    code = _assembled(kept, notes)
    if len(notes) > MAX_NOTES:
        notes[MAX_NOTES:] = [f"... and {len(notes) - MAX_NOTES} more left out"]
    return Extracted(
        code=code,
        notes=notes,
        cells=sorted({s.cell for s in kept}),
        defined=defined,
        missing=missing,
    )


def _assembled(kept: list[_Statement], notes: list[str]) -> str:
    header = [
        "# Extracted by jaxjudge from a notebook's code cells "
        + ", ".join(str(c) for c in sorted({s.cell for s in kept}))
        + " (docs/api.md, Notebooks).",
    ]
    if notes:
        header.append("# Left out:")
        header += [f"#   {note}" for note in notes[:MAX_HEADER_NOTES]]
        if len(notes) > MAX_HEADER_NOTES:
            header.append(f"#   ... and {len(notes) - MAX_HEADER_NOTES} more")
    body: list[str] = []
    previous = None
    for statement in kept:
        if statement.cell != previous:
            body.append(f"# cell {statement.cell}\n{statement.text}")
            previous = statement.cell
        else:
            body[-1] += "\n\n" + statement.text
    return "\n".join(header) + "\n\n" + "\n\n\n".join(body) + "\n"


def entry_points(problem: Problem) -> list[str]:
    """Every entry point a problem grades: its [[parts]]' or its one entry_point.
    (Read by name while parts land beside this module: grader/problems/parts_of.)"""
    parts = getattr(problem.config, "parts", None) or []
    named = [part.entry_point for part in parts] or [problem.config.entry_point]
    return [str(name) for name in named if name]
