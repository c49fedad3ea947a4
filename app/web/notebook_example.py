"""The notebook example the account page and docs/api.md show: a whole, correct
solution to the first problem a new learner meets, so that a cell copied as shown is
accepted (tests/clients/test_notebook.py submits it from a real kernel;
tests/app/test_notebook_example.py checks that both places show exactly this). And the
lines that install the client and the terminal's command, with a server's address
filled in (tests/docs/test_server_examples.py runs the terminal's)."""

from __future__ import annotations

from app.web import client_download

SLUG = "stable-logsumexp"
FUNCTION = "logsumexp_and_softmax"
# A cell of its own: the cell's code is sent, not run in the notebook.
SUBMIT_CELL = f"""%%jaxjudge submit {SLUG}
import jax.numpy as jnp


def {FUNCTION}(logits):
    top = jnp.max(logits, axis=-1, keepdims=True)
    weights = jnp.exp(logits - top)
    total = jnp.sum(weights, axis=-1, keepdims=True)
    return jnp.squeeze(top + jnp.log(total), axis=-1), weights / total"""
# The same function, defined in the notebook already: sent with the notebook's imports.
FUNCTION_LINE = f"%jaxjudge submit {SLUG} --function {FUNCTION}"


def install_cell(server: str) -> str:
    """The first cell: the client from ``server``'s own wheel, pointed at ``server``."""
    return (
        f"%pip install {server}{client_download.PATH}\n"
        f"import os\n"
        f'os.environ["JAXJUDGE_SERVER"] = "{server}"\n'
        f"%load_ext jaxjudge_client"
    )


def terminal_command(server: str) -> str:
    """From a terminal, once the same wheel is installed: SLUG and the token to fill in."""
    return f"JAXJUDGE_SERVER={server} JAXJUDGE_TOKEN=... jaxjudge-client submit SLUG solution.py"
