"""The notebook side (Colab, Jupyter, Kaggle): ``%load_ext jaxjudge_client``, then

    %%jaxjudge submit nnx-grad-accumulation
    def accumulate(...):
        ...

sends the cell's code (it is not run here), or

    %jaxjudge submit nnx-grad-accumulation --function accumulate

sends a function already defined in the notebook, with its source and the
notebook's top-level imports. ``run`` instead of ``submit`` runs the samples only.

    %jaxjudge submit nnx-grad-accumulation --notebook work.ipynb

sends a saved notebook file: the server reads its code cells (never runs them), drops
magics and shell escapes, keeps what the entry point needs, and says what it left
out. A course's notebook assignment (several problems, one file):

    %jaxjudge submit --course 3 --notebook-assignment "Week 1" --notebook work.ipynb

The stages show while the server grades; the verdict is the cell's output (HTML in
a notebook, text elsewhere). A missing token is asked for without echo and kept in
the kernel's memory only, never in the notebook. Errors are one line, no traceback.
"""

from __future__ import annotations

import ast
import getpass
import html
import inspect
import os
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


class NotebookVerdict(Verdict):
    """A notebook file's verdict: what the server took from it, then the verdict."""

    def __init__(self, answer: dict[str, Any], server: str, made: dict[str, Any]) -> None:
        super().__init__(answer, server)
        self.made = made

    def __repr__(self) -> str:
        return "\n".join([*verdicts.notebook_lines(self.made), render.text(self.answer)])

    def _repr_html_(self) -> str:
        lines = "".join(
            f"<li>{html.escape(line)}</li>" for line in verdicts.notebook_lines(self.made)
        )
        return f"<ul>{lines}</ul>" + render.html(self.answer, server=self.server)


class CourseNotebookVerdicts:
    """A notebook assignment's upload: each problem's verdict, or why none was made."""

    def __init__(self, results: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> None:
        self.results = results

    @property
    def accepted(self) -> bool:
        return all(a is not None and a.get("verdict") == "accepted" for _m, a in self.results)

    def __repr__(self) -> str:
        blocks = []
        for made, answer in self.results:
            head = f"{made.get('title') or made.get('problem')}:"
            if answer is None:
                blocks.append(f"{head} not submitted: {made.get('reason')}")
            else:
                lines = [head, *verdicts.notebook_lines(made), render.text(answer)]
                blocks.append("\n".join(lines))
        return "\n\n".join(blocks)


def submit_notebook(
    problem: str,
    path: str,
    *,
    mode: str = "submit",
    server: str | None = None,
    token: str | None = None,
    timeout: float = 300.0,
) -> NotebookVerdict:
    """Send the notebook file at ``path`` for ``problem`` and wait for the verdict."""
    link = _connection(server, token)
    shown = _StageDisplay()
    answer, made = verdicts.submit_notebook(
        link.client(), problem, _read(path), os.path.basename(path), mode=mode,
        timeout=timeout, progress=shown.update,
    )  # fmt: skip
    shown.close()
    return NotebookVerdict(answer, link.server, made)


def submit_course_notebook(
    course: int,
    name: str,
    path: str,
    *,
    server: str | None = None,
    token: str | None = None,
    timeout: float = 300.0,
) -> CourseNotebookVerdicts:
    """Send the notebook file at ``path`` for the course's notebook assignment ``name``."""
    link = _connection(server, token)
    results = verdicts.submit_course_notebook(
        link.client(), course, name, _read(path), os.path.basename(path), timeout=timeout
    )
    return CourseNotebookVerdicts(results)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as error:
        raise CommandError(f"cannot read the notebook {path!r}: {error.strerror}") from None


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
    def jaxjudge(line: str, cell: str | None = None) -> Any:
        """%%jaxjudge submit|run SLUG [--server URL] [--token T]   (the cell's code)
        %jaxjudge submit|run SLUG --function NAME                  (a defined function)
        %jaxjudge submit|run SLUG --notebook PATH                  (a saved .ipynb)
        %jaxjudge submit --course ID --notebook-assignment NAME --notebook PATH"""
        try:
            words = shlex.split(line)
            if len(words) < 2 or words[0] not in ("submit", "run"):
                raise CommandError(
                    "use %%jaxjudge submit SLUG (the cell's code),"
                    " %jaxjudge submit SLUG --function NAME or --notebook PATH"
                )
            if words[1].startswith("--"):  # a course's notebook assignment: no slug
                mode, problem, options = words[0], "", _options(words[1:])
            else:
                mode, problem, options = words[0], words[1], _options(words[2:])
            server, token = options.get("server"), options.get("token")
            if "notebook-assignment" in options or "course" in options:
                if problem or mode != "submit" or cell is not None:
                    raise CommandError(
                        "a notebook assignment is sent with %jaxjudge submit --course ID"
                        " --notebook-assignment NAME --notebook PATH (no slug)"
                    )
                if not options.get("course", "").isdigit() or "notebook" not in options:
                    raise CommandError(
                        "give --course ID (a number), --notebook-assignment NAME and"
                        " --notebook PATH"
                    )
                return submit_course_notebook(
                    int(options["course"]),
                    options.get("notebook-assignment", ""),
                    options["notebook"],
                    server=server,
                    token=token,
                )
            if not problem:
                raise CommandError("name the problem: %jaxjudge submit SLUG ...")
            if "notebook" in options:
                if cell is not None or "function" in options:
                    raise CommandError("--notebook sends a file: not with a cell or --function")
                return submit_notebook(
                    problem, options["notebook"], mode=mode, server=server, token=token
                )
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


_OPTIONS = (
    "--function", "--notebook", "--course", "--notebook-assignment", "--server", "--token",
)  # fmt: skip


def _options(words: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    pairs = iter(words)
    for word in pairs:
        if word not in _OPTIONS:
            raise CommandError(f"unknown option {word!r} ({', '.join(_OPTIONS)})")
        value = next(pairs, None)
        if value is None:
            raise CommandError(f"{word} needs a value")
        options[word[2:]] = value
    return options
