# attack: checks that look at a different program
# expect: requirement_not_met
# why: one pmean per micro-batch inside a lax.while_loop, where a rule written for scan (scan>psum) does not look
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
def data_parallel_grads(w, xs, ys):
    mesh = jax.make_mesh((xs.shape[0],), ("data",))
    def local(w, x, y):
        w = jax.lax.pcast(w, "data", to="varying")
        k = x.shape[1]
        def body(state):
            i, acc = state
            xb, yb = x[0, i], y[0, i]
            g = jax.grad(lambda w: jnp.mean((xb @ w - yb) ** 2))(w)
            return i + 1, acc + jax.lax.pmean(g, "data")
        _, total = jax.lax.while_loop(lambda s: s[0] < k, body, (0, jnp.zeros(w.shape, w.dtype)))
        return total / k
    sharded = jax.shard_map(local, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())
    put = lambda a: jax.device_put(a, NamedSharding(mesh, P("data")))
    return sharded(w, put(xs), put(ys))
