# attack: checks that look at a different program
# expect: requirement_not_met
# why: the whole-batch gradient computed in NumPy through pure_callback, which XLA's memory analysis cannot see (0 bytes measured)
import jax
import jax.numpy as jnp
import numpy as np
def _host_grad(w, x, y):
    w, x, y = (np.asarray(a, np.float64) for a in (w, x, y))
    t = np.tanh(x @ w)
    g = (2.0 / len(y)) * (x.T @ ((t - y) * (1 - t**2)))
    return g.astype(np.float32)
def accumulated_grads(w, x_full, y_full, micro_batch_size):
    return jax.pure_callback(_host_grad, jax.ShapeDtypeStruct(w.shape, jnp.float32), w, x_full, y_full)
