# expect: accepted
# why: no tree_map at all: two nested dict comprehensions over layers and leaves give the same trees
def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    new_velocity = {
        layer: {k: momentum * velocity[layer][k] + grads[layer][k] for k in leaves}
        for layer, leaves in params.items()
    }
    new_params = {
        layer: {
            k: p - learning_rate * (new_velocity[layer][k] + (weight_decay * p if k == "w" else 0))
            for k, p in leaves.items()
        }
        for layer, leaves in params.items()
    }
    return new_params, new_velocity
