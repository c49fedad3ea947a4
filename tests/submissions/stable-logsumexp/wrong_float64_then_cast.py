# expect: wrong_answer
# diagnosis: literal_formula
# cases: moderate=accepted large-offsets=wrong_answer
# why: the literal formula in float32 (x64 is off in JAX by default): overflow on every large row
import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    total = jnp.exp(logits.astype(jnp.float64)).sum(-1)
    return jnp.log(total).astype(jnp.float32), (jnp.exp(logits) / total[:, None]).astype(
        jnp.float32
    )
