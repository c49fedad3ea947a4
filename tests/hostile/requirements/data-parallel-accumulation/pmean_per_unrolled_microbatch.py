# attack: checks that look at a different program
# expect: requirement_not_met
# why: a Python loop over micro-batches with a pmean in each: no reduction inside any loop primitive, K reductions all the same
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
def data_parallel_grads(w, xs, ys):
    mesh = jax.make_mesh((xs.shape[0],), ("data",))
    def local(w, x, y):
        w = jax.lax.pcast(w, "data", to="varying")
        total = jnp.zeros(w.shape, w.dtype)
        for i in range(x.shape[1]):
            xb, yb = x[0, i], y[0, i]
            g = jax.grad(lambda w: jnp.mean((xb @ w - yb) ** 2))(w)
            total = total + jax.lax.pmean(g, "data")
        return total / x.shape[1]
    sharded = jax.shard_map(local, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())
    put = lambda a: jax.device_put(a, NamedSharding(mesh, P("data")))
    return sharded(w, put(xs), put(ys))
