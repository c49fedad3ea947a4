# expect: accepted
# why: Optax does it: trace(decay=momentum) then add_decayed_weights on a mask then scale(-lr); the state is built from the given velocity
import jax
import optax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    mask = jax.tree_util.tree_map_with_path(lambda path, _: path[-1].key == "w", params)
    tx = optax.chain(
        optax.trace(decay=momentum),
        optax.add_decayed_weights(weight_decay, mask=mask),
        optax.scale(-learning_rate),
    )
    state = tx.init(params)
    state = (optax.TraceState(trace=velocity),) + tuple(state[1:])
    updates, new_state = tx.update(grads, state, params)
    return optax.apply_updates(params, updates), new_state[0].trace
