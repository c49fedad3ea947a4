"""You return each device's gradient (out_specs P("data")) and average them outside shard_map, where no collective of yours reduces them: reduce with one pmean inside shard_map, after the scan."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def data_parallel_grads(w, xs, ys):
    mesh = jax.make_mesh((xs.shape[0],), ("data",))

    def local(w, x, y):
        w = jax.lax.pcast(w, "data", to="varying")

        def step(acc, batch):
            xb, yb = batch
            return acc + jax.grad(lambda w: jnp.mean((xb @ w - yb) ** 2))(w), None

        total, _ = jax.lax.scan(step, jnp.zeros_like(w), (x[0], y[0]))
        return (total / x.shape[1])[None]

    sharded = jax.shard_map(
        local, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P("data")
    )

    def put(a):
        return jax.device_put(a, NamedSharding(mesh, P("data")))

    return sharded(w, put(xs), put(ys)).mean(axis=0)
