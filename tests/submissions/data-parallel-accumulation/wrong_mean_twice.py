# expect: wrong_answer
# diagnosis: none
# why: divides by K, takes the pmean over devices, then divides by the device count again
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
        return jax.lax.pmean(total / x.shape[1], "data") / xs.shape[0]

    sharded = jax.shard_map(local, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())
    put = lambda a: jax.device_put(a, NamedSharding(mesh, P("data")))  # noqa: E731
    return sharded(w, put(xs), put(ys))
