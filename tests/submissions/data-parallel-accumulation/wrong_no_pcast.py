# expect: requirement_not_met
# why: the textbook shard_map without pcast: JAX sums each micro-batch's gradient across devices inside the scan (and pmean of that sum leaves it a sum)
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def data_parallel_grads(w, xs, ys):
    mesh = jax.make_mesh((xs.shape[0],), ("data",))

    def local(w, x, y):
        def step(acc, batch):
            return acc + jax.grad(lambda w: jnp.mean((batch[0] @ w - batch[1]) ** 2))(w), None

        total, _ = jax.lax.scan(step, jnp.zeros_like(w), (x[0], y[0]))
        return jax.lax.pmean(total / x.shape[1], "data")

    sharded = jax.shard_map(local, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())
    sharding = NamedSharding(mesh, P("data"))
    return sharded(w, jax.device_put(xs, sharding), jax.device_put(ys, sharding))
