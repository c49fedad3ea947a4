# expect: accepted
# why: the gradient by hand on each device inside a fori_loop, varying w, and one psum divided by the device count after the loop
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def data_parallel_grads(w, xs, ys):
    devices = xs.shape[0]
    mesh = jax.make_mesh((devices,), ("data",))

    def local(w, x, y):
        w = jax.lax.pcast(w, "data", to="varying")
        k, m = x.shape[1], x.shape[2]

        def body(i, acc):
            r = x[0, i] @ w - y[0, i]
            return acc + 2.0 * x[0, i].T @ r / m

        total = jax.lax.fori_loop(0, k, body, jnp.zeros_like(w))
        return jax.lax.psum(total, "data") / (k * devices)

    sharded = jax.shard_map(local, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())
    sharding = NamedSharding(mesh, P("data"))
    return sharded(w, jax.device_put(xs, sharding), jax.device_put(ys, sharding))
