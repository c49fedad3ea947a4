# attack: resource: CPU
# expect: time_limit_exceeded
# effect: none
# why: an XLA while loop that never ends, its result depending on every step (only an outside kill stops it)
import jax


def solve(x, scale):
    return jax.lax.while_loop(lambda c: c[0] >= 0, lambda c: (c[0] + 1 - 1 + 0 * c[0], c[1] + x), (0, x))[1]
