"""Every example in the README and docs/ is run by a test, or says why it is only shown.

A fenced block is claimed by a test module's ``RUN`` list (the module runs it as it is
written, placeholders named) or by ``SHOWN`` below, with the reason and what checks it
instead. A new block claimed by neither fails here. Every ``jaxjudge`` and
``jaxjudge-client`` command in a shell block, shown or run, parses with the real
command's arguments, and every one named in running text names a real subcommand and
real options."""

from __future__ import annotations

import argparse
import contextlib
import io
import re

import pytest
from jaxjudge_client import cli as client_cli

from app.commands import cli
from tests.app import test_scaler_role
from tests.clients import test_notebook
from tests.docs import test_command_examples, test_file_examples, test_server_examples
from tests.docs.blocks import (
    DOCUMENTS,
    Block,
    all_blocks,
    block,
    inline_commands,
    invocations,
    logical_lines,
)

RUN: list[Block] = [
    *test_command_examples.RUN,
    *test_file_examples.RUN,
    *test_server_examples.RUN,
    *test_notebook.RUN,
    *test_scaler_role.RUN,
]

SHOWN: dict[Block, str] = {
    block("README.md", "make run"): "the two make targets: `make test` is this run itself;"
    " both targets exist (tests/docs/test_file_examples.py, make -n)",
    block("docs/architecture.md", "pyproject.toml"): "a map of the tree: tests/test_docs.py"
    " checks that every path it names exists",
    block("docs/architecture.md", "grader.child"): "the grader's layers, held to the code by"
    " tests/test_layering.py",
    block("docs/architecture.md", "app.vocabulary"): "the web app's layers, held to the code"
    " by tests/test_layering.py",
    block("docs/authoring.md", "<root>/"): "a picture of a problem's folder: the names"
    " `jaxjudge new` makes are checked by tests/docs/test_command_examples.py",
    block("docs/authoring.md", "def regimes():"): "a fragment (its second regime is elided);"
    " tests/docs/test_file_examples.py finds its first line in a bank problem's cases.py",
    block("docs/authoring.md", "def memory_probes():"): "a fragment calling a helper of its"
    " problem; tests/docs/test_file_examples.py finds it in a bank problem's cases.py",
    block("docs/authoring.md", "problems/my-problem/problem.toml line 3"): "messages, one per"
    " mistake: tests/docs/test_file_examples.py makes each mistake and compares",
    block("docs/deployment.md", "server {"): "nginx's configuration: no nginx here; the"
    " X-Forwarded-For it sets is tested against the server in tests/app/test_server_guards.py",
    block("docs/deployment.md", "$ jaxjudge doctor"): "this VM's doctor output: the checks'"
    " names are compared with grader/doctor.py's in tests/docs/test_file_examples.py",
    block("docs/deployment.md", "jaxjudge doctor --device gpu"): "needs a GPU, which CI does"
    " not have: the commands parse here (below); `check --device gpu` and `prepare --device"
    " gpu` are what ../shared/gpu-check runs where a GPU is lent",
    block("docs/deployment.md", "kubectl apply"): "needs a Kubernetes cluster: the manifests"
    " are validated by tests/deploy/test_kubernetes.py; the jaxjudge command parses here",
    block("docs/development.md", "make lint typecheck"): "make targets: each exists (below);"
    " running them is this suite's own job",
    block("docs/development.md", "make bench"): "benchmarks of many minutes (docs/performance.md"
    " carries what they printed); the make target exists (below)",
}


def test_every_block_is_run_or_says_why_not() -> None:
    claimed = RUN + list(SHOWN)
    assert len(set(claimed)) == len(claimed), "a block is claimed twice"
    unclaimed = [str(b) for b in all_blocks() if b not in claimed]
    assert unclaimed == []


def test_the_docs_hold_examples_at_all() -> None:
    assert len(all_blocks()) > 30 and len(RUN) > len(SHOWN)


def _parses(top: argparse.ArgumentParser, args: list[str]) -> str:
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            top.parse_args(args)
    except SystemExit:
        return said.getvalue().strip().splitlines()[-1]
    return ""


def _value(word: str) -> str:
    """A placeholder (NAME, ID) as a value any argument takes."""
    return "1" if re.fullmatch(r"[A-Z][A-Z_]*", word) else word


PARSERS = {"jaxjudge": cli.parser, "jaxjudge-client": client_cli.parser}
SHELL = ("sh", "bash")


def test_every_command_in_a_shell_block_parses() -> None:
    commands = [
        (b, program, args)
        for b in all_blocks()
        if b.language in SHELL
        for line in logical_lines(b.text)
        for program, args in invocations(line)
    ]
    assert len(commands) > 30, "the blocks' commands are no longer found"
    refused = [
        f"{b}: {program} {' '.join(args)}: {error}"
        for b, program, args in commands
        if (error := _parses(PARSERS[program](), [_value(arg) for arg in args]))
    ]
    assert refused == []


def _named(top: argparse.ArgumentParser, words: list[str]) -> str:
    """Why ``words`` (subcommands, --options, placeholders) do not name a real command."""
    current = top
    for word in words:
        if word.startswith("-"):
            name = word.split("=", 1)[0]
            if name not in current._option_string_actions:
                return f"no option {name}"
            continue
        choices = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not choices:
            continue  # a value or a placeholder (NAME, SLUG, PATH)
        names = word.split("|")
        unknown = [n for n in names if n not in choices[0].choices]
        if unknown:
            return f"no subcommand {unknown[0]!r}"
        current = choices[0].choices[names[0]]
    return ""


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_command_the_text_names_exists(doc: str) -> None:
    named = [c for c in inline_commands(doc) if c.split()[1][0].isalpha()]
    wrong = [
        f"`{c}`: {error}"
        for c in named
        if (error := _named(PARSERS[c.split()[0]](), c.split()[1:]))
    ]
    assert wrong == []
