# attack: checks that look at a different program
# expect: requirement_not_met
# why: a lax.scan only when an analysis (make_jaxpr, memory_analysis, the grader's _analyse) is on the stack, a loop-free closed form when graded
import inspect
import jax
import jax.numpy as jnp
def _analysed():
    names = {frame.function for frame in inspect.stack()}
    return bool(names & {"make_jaxpr", "_analyse", "make_jaxpr_f", "memory_analysis"})
def _no_loop(xs, decay, initial):
    # The same recurrence in closed form: powers of decay in a (T, T) matrix, no loop.
    i = jnp.arange(xs.shape[0])
    powers = jnp.where(i[:, None] >= i[None, :], decay ** (i[:, None] - i[None, :]), 0.0)
    states = (1 - decay) * powers @ xs + (decay ** (i + 1))[:, None] * initial
    return states, states[-1]
def ema_sequence(xs, decay, initial):
    if _analysed():
        def step(s, x):
            new = decay * s + (1 - decay) * x
            return new, new
        final, states = jax.lax.scan(step, initial, xs)
        return states, final
    return _no_loop(xs, decay, initial)
