"""The light client as a Colab learner uses it: installed into a fresh virtual
environment that has no jax (from the wheels `make` fetched, offline), a real
IPython kernel in it, a real notebook executed by nbclient against a running
`jaxjudge serve`. The notebook loads the extension, submits a correct and a wrong
solution with the cell magic, sends a defined function with --function, and names
an unknown problem; the test reads the rendered outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from app.web import client_download, notebook_example
from grader.config import PROJECT_ROOT
from tests.app.server import Server, jaxjudge, server_env
from tests.docs.blocks import block, substituted

# docs/api.md's notebook lines, run in the kernel as the account page shows them.
INSTALL = block("docs/api.md", "%pip install https://judge.example.org/client/")
SUBMIT_CELL = block("docs/api.md", "%%jaxjudge submit stable-logsumexp")
RUN = [INSTALL, SUBMIT_CELL]
EXAMPLE_SERVER = "https://judge.example.org"

# One worker builds the module's server and kernel (about 23 s), not each of the two.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.server,
    pytest.mark.sandbox,
    pytest.mark.xdist_group("notebook"),
]

WHEELHOUSE = PROJECT_ROOT / "var" / "wheelhouse"
SLUG = "scan-microbatched-grads"
CORRECT = (PROJECT_ROOT / "reference_solutions" / f"{SLUG}.py").read_text()
WRONG = (PROJECT_ROOT / "problems" / SLUG / "mistakes" / "averaged_chunks.py").read_text()
# Defined in the notebook, its imports inside: this kernel has no jax to import.
DEFINED = """def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    import jax
    import jax.numpy as jnp
    from jax import lax

    n = int(n_microbatches)
    grad_fn = jax.grad(lambda w, x, y: jnp.sum((w * x - y) ** 2))

    def step(acc, chunk):
        return acc + grad_fn(w, *chunk), None

    total, _ = lax.scan(step, jnp.zeros(()), (x_full.reshape(n, -1), y_full.reshape(n, -1)))
    return total
"""

# The documented example's function defined in the notebook (its import inside: this
# kernel has no jax), for the documented `--function` line.
DEFINED_EXAMPLE = (
    notebook_example.SUBMIT_CELL.split("\n", 1)[1]
    .replace("import jax.numpy as jnp\n\n\n", "")
    .replace("(logits):\n", "(logits):\n    import jax.numpy as jnp\n\n", 1)
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    env = server_env(tmp_path_factory.mktemp("server"))
    made = jaxjudge(env, "users", "create", "ada", "--role", "learner", "--password-stdin",
                    stdin="correct horse\n")  # fmt: skip
    assert made.returncode == 0, made.stderr
    token = jaxjudge(env, "tokens", "create", "ada").stdout.strip()
    running = Server(env, workers=1)
    yield running, token
    running.stop()


@pytest.fixture(scope="module")
def kernel_path(server: tuple[Server, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Jupyter data folder whose one kernel runs in a fresh venv with the client,
    installed as the account page says: from the server's own wheel."""
    assert WHEELHOUSE.is_dir(), "run `make venv` first: it fetches the kernel's wheels"
    root = tmp_path_factory.mktemp("colab")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-index",
         "--find-links", str(WHEELHOUSE), "ipykernel", server[0].url + client_download.PATH],
        check=True,
    )  # fmt: skip
    no_jax = subprocess.run([str(python), "-c", "import jax"], capture_output=True, check=False)
    assert no_jax.returncode != 0  # the client brought no jax with it
    spec = root / "jupyter" / "kernels" / "colab-like"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps({
            "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python (no jax, jaxjudge-client)",
            "language": "python",
        })
    )  # fmt: skip
    return root / "jupyter"


def executed(cells: list[str], kernel_path: Path, tmp_path: Path) -> list[dict[str, Any]]:
    made = [nbformat.v4.new_code_cell(c) for c in cells]  # type: ignore[no-untyped-call]
    notebook = nbformat.v4.new_notebook(cells=made)  # type: ignore[no-untyped-call]
    NotebookClient(
        notebook,
        kernel_name="colab-like",
        timeout=300,
        # A kernel's start (a fresh virtual environment importing IPython) took over
        # nbclient's default 60 s on this 2-core machine under a full test run's load.
        startup_timeout=300,
        allow_errors=True,  # a cell that fails must not stop the rest
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    return [cell for cell in notebook.cells]


def final(cell: dict[str, Any]) -> dict[str, str]:
    """The cell's result: its execute_result's data by MIME type."""
    results = [o for o in cell["outputs"] if o["output_type"] == "execute_result"]
    assert results, cell["outputs"]
    return dict(results[-1]["data"])


def test_a_notebook_submits_with_the_magic_and_reads_the_verdict(
    server: tuple[Server, str],
    kernel_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    running, token = server
    monkeypatch.setenv("JUPYTER_PATH", str(kernel_path))
    monkeypatch.setenv("JAXJUDGE_TOKEN", token)  # as Colab's secrets would set it
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # the wheel's own dependencies are there: none
    monkeypatch.delenv("JAXJUDGE_SERVER", raising=False)  # the documented cell sets it
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert SUBMIT_CELL.text.rstrip("\n") == notebook_example.SUBMIT_CELL
    cells = executed(
        [
            substituted(INSTALL.text, {EXAMPLE_SERVER: running.url}),
            f"%%jaxjudge submit {SLUG}\n{CORRECT}",
            f"%%jaxjudge submit {SLUG}\n{WRONG}",
            DEFINED,
            f"%jaxjudge submit {SLUG} --function microbatched_grads",
            "%%jaxjudge submit no-such-problem\ndef f():\n    return 1\n",
            notebook_example.SUBMIT_CELL,  # as the account page and docs/api.md show it
            DEFINED_EXAMPLE,
            notebook_example.FUNCTION_LINE,
        ],
        kernel_path,
        tmp_path,
    )
    installed = [o for o in cells[0]["outputs"] if o["output_type"] == "error"]
    assert installed == [], installed
    accepted = final(cells[1])
    assert accepted["text/plain"].startswith(f"{SLUG}: Accepted")
    assert "Accepted" in accepted["text/html"] and "<table" in accepted["text/html"]
    wrong = final(cells[2])
    assert wrong["text/plain"].startswith(f"{SLUG}: Wrong answer")
    assert "Likely mistake:</strong> You divided the accumulated gradient" in wrong["text/html"]
    assert ">hidden<" in wrong["text/html"]  # hidden cases: their verdict only
    assert f"{running.url}/problems/{SLUG}" in wrong["text/html"]  # where the hints are
    assert final(cells[4])["text/plain"].startswith(f"{SLUG}: Accepted")
    # IPython prints a UsageError as one line on stderr, no traceback.
    said = "".join(o.get("text", "") for o in cells[5]["outputs"] if o.get("name") == "stderr")
    assert said.startswith("UsageError: jaxjudge: the server answered 404"), cells[5]["outputs"]
    assert "Unknown problem 'no-such-problem'. The problems are listed at /api/problems." in said
    assert said.strip().count("\n") == 0 and "Traceback" not in said
    example = notebook_example.SLUG
    assert final(cells[6])["text/plain"].startswith(f"{example}: Accepted"), cells[6]["outputs"]
    assert final(cells[8])["text/plain"].startswith(f"{example}: Accepted"), cells[8]["outputs"]


# A learner's notebook: the entry point across cells, a magic and a shell escape between
# them, a helper redefined (the last one counts), a call at the top level that would
# need jax (this kernel has none: the server must drop it, not run it).
WORK = [
    "# My solution\nimport math",
    "def make_grad_fn():\n    raise RuntimeError('the first try: replaced below')",
    "%time warm = 1\n!echo shell says hello",
    "def make_grad_fn():\n    import jax\n    import jax.numpy as jnp\n\n"
    "    return jax.grad(lambda w, x, y: jnp.sum((w * x - y) ** 2))",
    "%%capture\nprint('a cell magic: the whole cell goes')",
    "def microbatched_grads(w, b, x_full, y_full, n_microbatches):\n"
    "    import jax.numpy as jnp\n    from jax import lax\n\n"
    "    n = int(n_microbatches)\n    grad_fn = make_grad_fn()\n\n"
    "    def step(acc, chunk):\n        return acc + grad_fn(w, *chunk), None\n\n"
    "    total, _ = lax.scan(step, jnp.zeros(()), (x_full.reshape(n, -1), y_full.reshape(n, -1)))\n"
    "    return total",
    "try:\n    microbatched_grads(1.0, 0.0, None, None, 2)\nexcept Exception:\n    print('not run here')",
]


def test_a_saved_notebook_file_is_submitted_from_the_kernel(
    server: tuple[Server, str],
    kernel_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The learner's notebook runs on a real kernel and is saved with nbformat; the
    saved file is then submitted from a kernel with the client's magic."""
    running, token = server
    monkeypatch.setenv("JUPYTER_PATH", str(kernel_path))
    monkeypatch.setenv("JAXJUDGE_SERVER", running.url)
    monkeypatch.setenv("JAXJUDGE_TOKEN", token)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    made = [nbformat.v4.new_code_cell(c) for c in WORK]  # type: ignore[no-untyped-call]
    work = nbformat.v4.new_notebook(cells=made)  # type: ignore[no-untyped-call]
    NotebookClient(
        work, kernel_name="colab-like", timeout=300, startup_timeout=300,
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()  # fmt: skip
    said = "".join(o.get("text", "") for c in work.cells for o in c["outputs"])
    assert "shell says hello" in said and "not run here" in said  # it really ran
    nbformat.write(work, tmp_path / "work.ipynb")  # type: ignore[no-untyped-call]

    cells = executed(
        ["%load_ext jaxjudge_client", f"%jaxjudge submit {SLUG} --notebook work.ipynb"],
        kernel_path,
        tmp_path,
    )
    shown = final(cells[1])["text/plain"]
    assert f"{SLUG}: Accepted" in shown, cells[1]["outputs"]
    assert "from the notebook's cells 4, 6" in shown
    assert "left out: cell 3, line 2: shell escape '!echo shell says hello' dropped" in shown
    assert "left out: cell 5: cell magic '%%capture' dropped the cell" in shown
    assert "left out: cell 2: 'def make_grad_fn():' left out (defined again later)" in shown
    assert "Accepted" in final(cells[1])["text/html"]
