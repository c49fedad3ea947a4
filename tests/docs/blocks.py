"""The documentation's examples as data: every fenced block of the README and docs/,
and the commands a shell block runs, so that tests can run each one as it is written.

tests/docs/test_inventory.py holds every block to one of two fates: a test that runs
it (each test module's ``RUN`` list), or a reason it is shown and not run here."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.config import PROJECT_ROOT, settings

DOCUMENTS = ["README.md", *sorted(f"docs/{p.name}" for p in (PROJECT_ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    """One fenced block: its document, the fence's line, its language and its text."""

    doc: str
    line: int
    language: str
    text: str

    @property
    def first_line(self) -> str:
        return self.text.split("\n", 1)[0]

    def __str__(self) -> str:
        return f"{self.doc}:{self.line} ({self.first_line[:60]})"


def blocks_of(doc: str) -> list[Block]:
    text = (PROJECT_ROOT / doc).read_text()
    return [
        Block(doc, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2))
        for m in FENCE.finditer(text)
    ]


def all_blocks() -> list[Block]:
    return [block for doc in DOCUMENTS for block in blocks_of(doc)]


def block(doc: str, starting: str) -> Block:
    """The one block of ``doc`` whose text starts with ``starting``."""
    found = [b for b in blocks_of(doc) if b.text.startswith(starting)]
    assert len(found) == 1, f"{doc}: {len(found)} blocks start with {starting!r}"
    return found[0]


def logical_lines(text: str) -> list[str]:
    """A shell block's commands: continued lines joined (a backslash, an open quote),
    blank and comment lines gone."""
    lines: list[str] = []
    pending = ""
    for line in re.sub(r"\\\n\s*", " ", text).splitlines():
        pending = f"{pending}\n{line}" if pending else line
        try:
            shlex.split(pending, comments=True)
        except ValueError:  # a quote still open: the command goes on
            continue
        if pending.strip() and not pending.lstrip().startswith("#"):
            lines.append(pending)
        pending = ""
    assert not pending, f"a quote is never closed: {pending!r}"
    return lines


def substituted(text: str, replacements: dict[str, str]) -> str:
    """``text`` with each placeholder replaced; a placeholder not found is an error, so
    that an example that changed fails here rather than running something else."""
    for old, new in replacements.items():
        assert old in text, f"the example no longer holds {old!r}"
        text = text.replace(old, new)
    return text


PROGRAMS = ("jaxjudge", "jaxjudge-client")
ENDS = {"|", "||", "&&", ";", "(", ")", "&", "--"}  # what a command may follow
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def invocations(line: str) -> list[tuple[str, list[str]]]:
    """Each ``jaxjudge`` or ``jaxjudge-client`` a shell line runs, with its arguments:
    at the line's start or after ``VAR=value``, after a pipe, inside ``$( )``, after
    ``--`` (``kubectl exec ... --``)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    tokens = list(lexer)
    found = []
    command_position = True
    for i, token in enumerate(tokens):
        if command_position and ASSIGNMENT.match(token):
            continue
        if command_position and Path(token).name in PROGRAMS and token.count("/") in (0, 2):
            args = []
            for arg in tokens[i + 1 :]:
                if arg in ENDS - {"--"}:
                    break
                args.append(arg)
            found.append((Path(token).name, args))
        command_position = token in ENDS or token == "$"
    return found


def inline_commands(doc: str) -> list[str]:
    """Commands named in running text: a code span that starts with a program's name."""
    text = FENCE.sub("", (PROJECT_ROOT / doc).read_text())
    spans = re.findall(r"`([^`\n]+)`", text)
    return [s for s in spans if s.split(" ", 1)[0] in PROGRAMS and " " in s]


def checkout_like(folder: Path) -> Path:
    """A folder where `.venv/bin/jaxjudge` is this run's, as in a checkout."""
    (folder / ".venv").symlink_to(sys.prefix)
    return folder


def shell_env(folder: Path, **settings_: str) -> dict[str, str]:
    """`jaxjudge` on the PATH; a database of the folder's own; this run's caches."""
    return {
        **os.environ,
        "PATH": f"{Path(sys.prefix) / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "JAXJUDGE_DATABASE_URL": f"sqlite:///{folder / 'jaxjudge.db'}",
        "JAXJUDGE_DATA_DIR": str(settings.data_dir),
        **settings_,
    }


@dataclass(frozen=True)
class Ran:
    """One command of a shell block, as bash ran it."""

    command: str
    returncode: int
    stdout: str
    stderr: str


MARK = "@@jaxjudge-doc-example-rc"


def run_shell(text: str, *, cwd: Path, env: dict[str, str], timeout: float = 600) -> list[Ran]:
    """Every command of a shell block, run by one bash in order (so `export` and `cd`
    carry on), each one's exit status and output kept apart. Nothing stops at a
    failure: the test says which ones must succeed."""
    commands = logical_lines(text)
    script = "".join(
        f"{command}\n__rc=$?; printf '\\n{MARK} %s\\n' $__rc; printf '\\n{MARK} %s\\n' $__rc >&2\n"
        for command in commands
    )
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    outs = re.split(rf"\n{MARK} (\d+)\n", done.stdout)
    errs = re.split(rf"\n{MARK} (\d+)\n", done.stderr)
    assert len(outs) == len(errs) == 2 * len(commands) + 1, (done.stdout, done.stderr)
    return [
        Ran(command, int(outs[2 * i + 1]), outs[2 * i], errs[2 * i])
        for i, command in enumerate(commands)
    ]


NUMBER = r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"


def shown_output_matches(shown: str, printed: str) -> str:
    """Why ``printed`` is not what ``shown`` shows, or "" when it is. Numbers may differ
    (times, seeds, rounding), a line of "..." stands for any lines, and every other
    shown line must be printed, in order, with nothing between two shown lines."""
    lines = printed.splitlines()
    at = 0
    skipping = False
    for want in shown.splitlines():
        if want.strip() == "...":
            skipping = True
            continue
        parts = re.split(NUMBER, want)
        pattern = re.compile(NUMBER.join(re.escape(p) for p in parts))
        while at < len(lines) and not pattern.fullmatch(lines[at]):
            if not skipping:
                return f"shown {want!r}, printed {lines[at]!r}"
            at += 1
        if at == len(lines):
            return f"shown {want!r}, never printed"
        at += 1
        skipping = False
    return ""
