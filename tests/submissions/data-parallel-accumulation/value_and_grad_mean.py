# expect: accepted
# why: value_and_grad in the scan body, the loss carried too, both reduced with one pmean each after the loop
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def data_parallel_grads(w, xs, ys):
    mesh = jax.make_mesh((xs.shape[0],), ("data",))

    def local(w, x, y):
        w = jax.lax.pcast(w, "data", to="varying")

        def step(carry, batch):
            loss_sum, grad_sum = carry
            loss, g = jax.value_and_grad(lambda w: jnp.mean((batch[0] @ w - batch[1]) ** 2))(w)
            return (loss_sum + loss, grad_sum + g), None

        zeros = (jnp.zeros_like(w[0]), jnp.zeros_like(w))  # varying, like w
        (loss_sum, grad_sum), _ = jax.lax.scan(step, zeros, (x[0], y[0]))
        k = x.shape[1]
        _mean_loss = jax.lax.pmean(loss_sum / k, "data")
        return jax.lax.pmean(grad_sum / k, "data")

    sharded = jax.shard_map(local, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())
    sharding = NamedSharding(mesh, P("data"))
    return sharded(w, jax.device_put(xs, sharding), jax.device_put(ys, sharding))
