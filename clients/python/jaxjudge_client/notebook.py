"""The notebook side (Colab, Jupyter, Kaggle): ``%load_ext jaxjudge_client``, then

    %%jaxjudge submit nnx-grad-accumulation
    def accumulate(...):
        ...

sends the cell's code (it is not run here), or

    %jaxjudge submit nnx-grad-accumulation --function accumulate

sends a function already defined in the notebook, with its source and the
notebook's top-level imports. ``run`` instead of ``submit`` runs the samples only.
The stages show while the server grades; the verdict is the cell's output (HTML in
a notebook, text elsewhere). A missing token is asked for without echo and kept in
the kernel's memory only, never in the notebook. Errors are one line, no traceback.
"""

from __future__ import annotations

import ast
import getpass
import inspect
import shlex
from typing import Any

from jaxjudge_client import connection, render, verdicts
from jaxjudge_client.errors import CommandError

_typed_token: dict[str, str] = {}  # server -> token typed in this kernel


class Verdict:
    """A finished submission: shown as HTML in a notebook and as text elsewhere;
    ``.answer`` is the server's JSON, ``.accepted`` whether it passed."""

    def __init__(self, answer: dict[str, Any], server: str) -> None:
        self.answer, self.server = answer, server

    @property
    def accepted(self) -> bool:
        return self.answer.get("verdict") == "accepted"

    def __repr__(self) -> str:
        return render.text(self.answer)

    def _repr_html_(self) -> str:
        return render.html(self.answer, server=self.server)


def submit(
    problem: str,
    code: str,
    *,
    mode: str = "submit",
    server: str | None = None,
    token: str | None = None,
    timeout: float = 300.0,
) -> Verdict:
    """Send ``code`` and wait for the verdict (the Python API behind the magic)."""
    link = _connection(server, token)
    shown = _StageDisplay()
    answer = verdicts.submit(
        link.client(), problem, code, mode=mode, timeout=timeout, progress=shown.update
    )
    shown.close()
    return Verdict(answer, link.server)


def _connection(server: str | None, token: str | None) -> connection.Connection:
    def ask(prompt: str) -> str:
        try:
            return getpass.getpass(prompt)
        except Exception:  # a frontend that cannot prompt (nbclient, a script)
            return ""

    typed = _typed_token.get(connection.address(server))
    link = connection.resolve(server, token or typed, ask=ask)
    _typed_token[link.server] = link.token
    return link


class _StageDisplay:
    """The submission's stage, updated in place while the server works."""

    def __init__(self) -> None:
        self.handle: Any = None

    def update(self, answer: verdicts.Answer, waited: float) -> None:
        if answer.get("status") == "done":
            return
        try:
            from IPython.display import display
        except ImportError:
            return
        words = f"jaxjudge: {verdicts.stage(answer, waited)}"
        if self.handle is None:
            self.handle = display(_Plain(words), display_id=True)  # type: ignore[no-untyped-call]
        else:
            self.handle.update(_Plain(words))

    def close(self) -> None:
        if self.handle is not None:
            self.handle.update(_Plain(""))


class _Plain:
    def __init__(self, words: str) -> None:
        self.words = words

    def __repr__(self) -> str:
        return self.words


def notebook_imports(cells: list[str]) -> list[str]:
    """The top-level import statements of the notebook's cells, in order, once each."""
    found: list[str] = []
    for cell in cells:
        try:
            tree = ast.parse(cell)
        except SyntaxError:  # a cell of magics
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                line = ast.get_source_segment(cell, node)
                if line and line not in found:
                    found.append(line)
    return found


def function_source(shell: Any, name: str) -> str:
    found = shell.user_ns.get(name)
    if found is None or not callable(found):
        raise CommandError(f"no function named {name!r} in this notebook: run its cell first")
    try:
        body = inspect.getsource(found)
    except (OSError, TypeError):
        raise CommandError(
            f"the source of {name!r} cannot be found; use %%jaxjudge instead"
        ) from None
    imports = notebook_imports([str(cell) for cell in shell.user_ns.get("In", [])])
    return "\n".join([*imports, "", body]) if imports else body


def load_ipython_extension(shell: Any) -> None:
    from IPython.core.error import UsageError
    from IPython.core.magic import register_line_cell_magic

    @register_line_cell_magic
    def jaxjudge(line: str, cell: str | None = None) -> Verdict | None:
        """%%jaxjudge submit|run SLUG [--server URL] [--token T]   (the cell's code)
        %jaxjudge submit|run SLUG --function NAME                  (a defined function)"""
        try:
            words = shlex.split(line)
            if len(words) < 2 or words[0] not in ("submit", "run"):
                raise CommandError(
                    "use %%jaxjudge submit SLUG (the cell's code) or"
                    " %jaxjudge submit SLUG --function NAME"
                )
            mode, problem, options = words[0], words[1], _options(words[2:])
            if cell is not None:
                code = cell
            elif "function" in options:
                code = function_source(shell, options["function"])
            else:
                raise CommandError("name the function: %jaxjudge submit SLUG --function NAME")
            return submit(
                problem,
                code,
                mode=mode,
                server=options.get("server"),
                token=options.get("token"),
            )
        except CommandError as error:
            raise UsageError(f"jaxjudge: {error}") from None

    del jaxjudge


def _options(words: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    pairs = iter(words)
    for word in pairs:
        if word not in ("--function", "--server", "--token"):
            raise CommandError(f"unknown option {word!r} (--function, --server, --token)")
        value = next(pairs, None)
        if value is None:
            raise CommandError(f"{word} needs a value")
        options[word[2:]] = value
    return options
