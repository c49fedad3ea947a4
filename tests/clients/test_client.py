"""The light client's parts without a server: where the server and token come from,
how a verdict reads as text and HTML, which imports a notebook function takes with
it, and the one-line errors of the command line."""

from __future__ import annotations

import email
import json
import shutil
import subprocess
import sys
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from jaxjudge_client import connection, render
from jaxjudge_client.errors import CommandError
from jaxjudge_client.http import Upload
from jaxjudge_client.notebook import Verdict, notebook_imports

from grader.config import PROJECT_ROOT

CLIENT = PROJECT_ROOT / "clients" / "python"


def test_arguments_beat_the_environment_which_beats_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "client.json"
    config.write_text(json.dumps({"server": "https://from-file.example", "token": "file"}))
    monkeypatch.setenv("JAXJUDGE_CONFIG", str(config))
    monkeypatch.delenv("JAXJUDGE_SERVER", raising=False)
    monkeypatch.delenv("JAXJUDGE_TOKEN", raising=False)
    assert connection.resolve() == connection.Connection("https://from-file.example", "file")
    monkeypatch.setenv("JAXJUDGE_SERVER", "https://from-env.example/")
    monkeypatch.setenv("JAXJUDGE_TOKEN", "env")
    assert connection.resolve() == connection.Connection("https://from-env.example", "env")
    assert connection.resolve("http://arg.example", "arg") == connection.Connection(
        "http://arg.example", "arg"
    )


def test_a_missing_token_is_asked_for_or_named_with_where_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JAXJUDGE_CONFIG", str(tmp_path / "none.json"))
    monkeypatch.delenv("JAXJUDGE_TOKEN", raising=False)
    monkeypatch.setenv("JAXJUDGE_SERVER", "https://judge.example")
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return " typed \n"

    assert connection.resolve(ask=ask).token == "typed"
    assert "https://judge.example/account" in asked[0]
    with pytest.raises(CommandError, match=r"make one on https://judge.example/account"):
        connection.resolve()
    (tmp_path / "bad.json").write_text("[1, 2]")
    monkeypatch.setenv("JAXJUDGE_CONFIG", str(tmp_path / "bad.json"))
    with pytest.raises(CommandError, match="not a JSON object"):
        connection.resolve()


ANSWER: dict[str, Any] = {
    "problem": "p",
    "status": "done",
    "verdict": "wrong_answer",
    "verdict_label": "Wrong answer",
    "score": 0.5,
    "diagnosis": "You summed <b>twice</b>.",
    "cases": [
        {"name": "small", "hidden": False, "verdict": "wrong_answer",
         "verdict_label": "Wrong answer", "message": "values differ",
         "expected": [[1.0, 2.0]], "actual": [[1.0, 4.0]]},
        {"name": "hidden_1", "hidden": True, "verdict": "accepted", "verdict_label": "Accepted"},
    ],
}  # fmt: skip


def test_a_verdict_reads_as_text_and_as_escaped_html() -> None:
    text = render.text(ANSWER)
    assert text.splitlines()[0] == "p: Wrong answer (score 50%)"
    assert "expected: [1.0, 2.0]" in text and "got:      [1.0, 4.0]" in text
    html = render.html(ANSWER, server="https://judge.example")
    assert "<b>twice</b>" not in html and "&lt;b&gt;twice&lt;/b&gt;" in html
    assert '<th scope="col"' in html and ">hidden<" in html
    assert 'href="https://judge.example/problems/p"' in html
    shown = Verdict(ANSWER, "https://judge.example")
    assert repr(shown) == text and not shown.accepted


def test_a_notebook_function_takes_the_notebooks_top_level_imports_once() -> None:
    cells = [
        "import jax\nimport jax.numpy as jnp\nx = 1",
        "%timeit x",  # magics do not parse: skipped
        "from jax import lax\nimport jax\ndef f():\n    import os\n",
    ]
    assert notebook_imports(cells) == [
        "import jax",
        "import jax.numpy as jnp",
        "from jax import lax",
    ]


def client(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jaxjudge_client.cli", *args],
        input=stdin, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip


def test_the_command_line_fails_in_one_line_that_says_what_to_do(tmp_path: Path) -> None:
    unreachable = client("submit", "p", "-", "--server", "http://127.0.0.1:9", "--token", "t",
                         stdin="def f():\n    return 1\n")  # fmt: skip
    assert unreachable.returncode == 2
    assert unreachable.stderr.count("\n") == 1
    assert "cannot reach http://127.0.0.1:9" in unreachable.stderr
    assert "JAXJUDGE_SERVER" in unreachable.stderr
    both = client("submit", "p", str(tmp_path / "f.py"), "--code", "x = 1", "--token", "t")
    assert both.returncode == 2 and "not both" in both.stderr
    missing = client("run", "p", str(tmp_path / "absent.py"), "--token", "t")
    assert missing.returncode == 2 and "absent.py: no such file" in missing.stderr


def test_a_notebook_goes_as_one_multipart_file_and_its_misuse_is_one_line(
    tmp_path: Path,
) -> None:
    body, kind = Upload(
        {"problem": "p", "mode": "submit"}, "notebook", 'a"b.ipynb', b"{}\r\n"
    ).encoded()
    parsed = email.message_from_bytes(f"Content-Type: {kind}\r\n\r\n".encode() + body)
    found: list[Message] = parsed.get_payload()  # type: ignore[assignment]
    parts = {p.get_param("name", header="content-disposition"): p for p in found}
    assert parts["problem"].get_payload() == "p" and parts["mode"].get_payload() == "submit"
    assert parts["notebook"].get_filename() == "a_b.ipynb"  # no quote breaks the header
    assert parts["notebook"].get_payload(decode=True) == b"{}\r\n"
    absent = client("submit", "p", "--notebook", str(tmp_path / "absent.ipynb"), "--token", "t")
    assert absent.returncode == 2 and "cannot read the notebook" in absent.stderr
    half = client("submit", "--course", "3", "--notebook", "w.ipynb", "--token", "t")
    assert half.returncode == 2 and "--notebook-assignment NAME" in half.stderr
    assert half.stderr.count("\n") == 1


def _python_3_9() -> str | None:
    found = shutil.which("python3.9")
    if found and subprocess.run([found, "-V"], capture_output=True, check=False).returncode == 0:
        return found
    pyenv = sorted(Path("/root/.pyenv/versions").glob("3.9.*/bin/python3.9"))
    return str(pyenv[-1]) if pyenv else None


PYTHON_3_9 = _python_3_9()


@pytest.mark.skipif(PYTHON_3_9 is None, reason="no Python 3.9 on this machine to try it on")
def test_the_client_runs_on_python_3_9() -> None:
    """The package promises Python 3.9 (Colab has been behind before): every module
    imports there, renders, and the command line gives its one-line error."""
    assert PYTHON_3_9 is not None
    env = {"PYTHONPATH": str(CLIENT), "PATH": "/usr/bin:/bin"}
    imported = subprocess.run(
        [PYTHON_3_9, "-c", "import jaxjudge_client.cli, jaxjudge_client.notebook as n; "
         "print(n.Verdict({'problem': 'p', 'verdict': 'accepted', 'verdict_label': 'Accepted',"
         " 'score': 1.0}, '').__repr__())"],
        capture_output=True, text=True, env=env, check=False, timeout=60,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "p: Accepted (score 100%)"
    refused = subprocess.run(
        [PYTHON_3_9, "-m", "jaxjudge_client.cli", "submit", "p", "-",
         "--server", "http://127.0.0.1:9", "--token", "t"],
        input="x = 1\n", capture_output=True, text=True, env=env, check=False, timeout=60,
    )  # fmt: skip
    assert refused.returncode == 2 and "cannot reach http://127.0.0.1:9" in refused.stderr
