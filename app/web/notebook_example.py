"""The notebook example the account page and docs/api.md show: a whole, correct
solution to the first problem a new learner meets, so that a cell copied as shown is
accepted (tests/clients/test_notebook.py submits it from a real kernel;
tests/app/test_notebook_example.py checks that both places show exactly this)."""

from __future__ import annotations

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
