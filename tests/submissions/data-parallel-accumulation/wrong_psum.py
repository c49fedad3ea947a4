# expect: wrong_answer
# diagnosis: psum_not_pmean
# cases: two-micro-batches=wrong_answer
# why: one reduction after the loop, as asked, but a sum over the four devices instead of their mean
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def data_parallel_grads(w, xs, ys):
    mesh = jax.make_mesh((xs.shape[0],), ("data",))

    def local(w, x, y):
        w = jax.lax.pcast(w, "data", to="varying")
        g = jax.vmap(jax.grad(lambda w, a, b: jnp.mean((a @ w - b) ** 2)), (None, 0, 0))
        total = jax.lax.scan(
            lambda acc, b: (acc + g(w, b[0][None], b[1][None])[0], None),
            jnp.zeros_like(w),
            (x[0], y[0]),
        )[0]
        return jax.lax.psum(total / x.shape[1], "data")

    sharded = jax.shard_map(local, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())
    sharding = NamedSharding(mesh, P("data"))
    return sharded(w, jax.device_put(xs, sharding), jax.device_put(ys, sharding))
