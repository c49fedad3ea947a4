"""Library warm-up for pooled children, run while they wait (never billed to a learner).

The first use of NNX, Linen, Optax and `lax.scan` in a process pays for lazy
imports, tracing machinery and pytree registrations, whatever the shapes. A
pooled child pays it while it waits for work. Everything here is generic
library exercise on made-up data, unrelated to any problem: it must never
touch a reference solution, a case or an expected output.

Imports only what a child imports anyway; stands alone so the sandbox can
mount it beside child.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def steps() -> Iterator[None]:
    """The warm-up, one step at a time: the child stops between steps as soon as a job
    is waiting (grader/child/run.py), so warming never delays work that has arrived."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx
    from flax.training import train_state

    x = jnp.ones((2, 3), jnp.float32)
    y = jnp.ones((2, 2), jnp.float32)
    labels = jnp.zeros((2,), jnp.int32)
    yield

    model = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(
        model, optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1)), wrt=nnx.Param
    )

    def nnx_loss(m: Any, a: Any, b: Any) -> Any:
        return (
            jnp.mean((m(a) - b) ** 2)
            + optax.softmax_cross_entropy_with_integer_labels(m(a), labels).mean()
        )

    _, grads = nnx.value_and_grad(nnx_loss)(model, x, y)
    yield
    optimizer.update(model, jax.tree_util.tree_map(lambda g: g / 2.0, grads))
    jax.block_until_ready(model.kernel.value)
    yield

    dense = nn.Dense(1)
    params = dense.init(jax.random.PRNGKey(0), x)
    state = train_state.TrainState.create(apply_fn=dense.apply, params=params, tx=optax.sgd(0.1))
    linen_grads = jax.grad(lambda p: jnp.mean(state.apply_fn(p, x)[:, 0] ** 2))(state.params)
    state = state.apply_gradients(grads=linen_grads)
    jax.block_until_ready(state.params)
    yield

    # The whole-function path learners' code takes first (grader/child/run.py): jit with
    # a static integral argument, a model built inside, a gradient and an update.
    def jitted_step(seed: float, a: Any, b: Any) -> Any:
        inner = nnx.Linear(3, 2, rngs=nnx.Rngs(int(seed)))
        loss, inner_grads = nnx.value_and_grad(nnx_loss)(inner, a, b)
        return loss, jax.tree_util.tree_leaves(nnx.state(inner_grads))[0]

    jax.block_until_ready(jax.jit(jitted_step, static_argnums=0)(1.0, x, y))
    yield

    tx = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2)
    opt_state = tx.init(params)
    updates, opt_state = tx.update(linen_grads, opt_state, params)
    jax.block_until_ready(optax.apply_updates(params, updates))
    yield

    total, _ = jax.lax.scan(lambda c, v: (c + jnp.sum(v), None), jnp.zeros(()), x)
    jax.block_until_ready(total)


def warm_up() -> None:
    """The whole warm-up at once (the warm-up cache's filler runs this)."""
    for _ in steps():
        pass
