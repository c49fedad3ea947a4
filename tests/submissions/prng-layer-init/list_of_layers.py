# expect: accepted
# why: keys unpacked from the split, the layers built one by one, variance_scaling from jax.nn.initializers (He: scale 2, fan_in, normal) gives the same draws
import jax
import jax.numpy as jnp


def init_and_apply(seed, x):
    k0, k1, k2 = jax.random.split(jax.random.key(int(seed)), 3)
    he = jax.nn.initializers.variance_scaling(2.0, "fan_in", "normal")
    sizes = [(x.shape[1], 16), (16, 8), (8, 1)]
    params = {}
    for i, (k, (a, b)) in enumerate(zip((k0, k1, k2), sizes, strict=True)):
        params[f"layer_{i}"] = {"w": he(k, (a, b)), "b": jnp.zeros((b,))}
    h = jax.nn.relu(x @ params["layer_0"]["w"] + params["layer_0"]["b"])
    h = jax.nn.relu(h @ params["layer_1"]["w"] + params["layer_1"]["b"])
    return params, (h @ params["layer_2"]["w"] + params["layer_2"]["b"]).squeeze(-1)
