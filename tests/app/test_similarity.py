"""The code-similarity ranking (app/reports/similarity.py): what a disguise cannot
hide, what honest difference looks like, and that it never crashes nor changes its
numbers from one process to the next."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from app.reports import similarity
from app.reports.similarity import compare, fingerprint, rank_pairs, shared_code
from grader.config import PROJECT_ROOT

# A learner's solution to train-with-accumulation (the problem's reference).
ORIGINAL = """\
import jax
import jax.numpy as jnp
import optax
from flax import nnx


def train_with_accumulation(
    seed, x, y, n_classes, micro_batch_size, accumulation_steps, lr, max_grad_norm
):
    micro, steps = int(micro_batch_size), int(accumulation_steps)
    model = nnx.Linear(x.shape[1], int(n_classes), rngs=nnx.Rngs(int(seed)))
    labels = y.astype(jnp.int32)
    optimizer = nnx.Optimizer(
        model, optax.chain(optax.clip_by_global_norm(max_grad_norm), optax.sgd(lr)), wrt=nnx.Param
    )

    def summed_loss(model, xb, yb):
        return optax.softmax_cross_entropy_with_integer_labels(model(xb), yb).sum()

    starts = list(range(0, x.shape[0], micro))
    losses = []
    for first in range(0, len(starts), steps):
        total_loss, total_grads, count = 0.0, None, 0
        for start in starts[first : first + steps]:
            xb, yb = x[start : start + micro], labels[start : start + micro]
            loss, grads = nnx.value_and_grad(summed_loss)(model, xb, yb)
            total_loss += loss
            total_grads = (
                grads
                if total_grads is None
                else jax.tree_util.tree_map(jnp.add, total_grads, grads)
            )
            count += xb.shape[0]
        optimizer.update(model, jax.tree_util.tree_map(lambda g: g / count, total_grads))
        losses.append(total_loss / count)
    return jnp.stack(losses)
"""

# ORIGINAL disguised: every local renamed, the code rewrapped and reindented to two
# spaces, comments and a docstring added, and the independent statements `labels` and
# `micro, steps`, `starts` and `losses`, swapped.
DISGUISED = '''\
import jax
import jax.numpy as jnp
import optax
from flax import nnx


def train_with_accumulation(seed, x, y, n_classes, micro_batch_size,
                            accumulation_steps, lr, max_grad_norm):
  """One clipped SGD update per window of micro-batches."""
  # integer labels, for the cross-entropy
  targets = y.astype(jnp.int32)
  mb, window = int(micro_batch_size), int(accumulation_steps)
  net = nnx.Linear(x.shape[1], int(n_classes),
                   rngs=nnx.Rngs(int(seed)))
  opt = nnx.Optimizer(net,
                      optax.chain(optax.clip_by_global_norm(max_grad_norm),
                                  optax.sgd(lr)),
                      wrt=nnx.Param)

  def batch_loss(m, inputs, gold):
    # summed, not averaged: divided by the count below
    return (optax.softmax_cross_entropy_with_integer_labels(m(inputs), gold)
            .sum())

  history = []
  offsets = list(range(0, x.shape[0], mb))
  for w0 in range(0, len(offsets), window):
    acc_loss, acc_grads, seen = 0.0, None, 0
    for off in offsets[w0:w0 + window]:
      xb, yb = (x[off:off + mb],
                targets[off:off + mb])
      l, g = nnx.value_and_grad(batch_loss)(net, xb, yb)
      acc_loss += l
      acc_grads = g if acc_grads is None else jax.tree_util.tree_map(jnp.add, acc_grads, g)
      seen += xb.shape[0]
    opt.update(net, jax.tree_util.tree_map(lambda t: t / seen, acc_grads))
    history.append(acc_loss / seen)  # the window's mean loss
  return jnp.stack(history)
'''

# The same task solved another way, by another learner: windows by index bounds,
# gradients summed from zeros. It starts from the same starter.
INDEPENDENT = """\
import jax
import jax.numpy as jnp
import optax
from flax import nnx


def train_with_accumulation(
    seed, x, y, n_classes, micro_batch_size, accumulation_steps, lr, max_grad_norm
):
    model = nnx.Linear(x.shape[1], int(n_classes), rngs=nnx.Rngs(int(seed)))
    labels = y.astype(jnp.int32)
    optimizer = nnx.Optimizer(
        model, optax.chain(optax.clip_by_global_norm(max_grad_norm), optax.sgd(lr)), wrt=nnx.Param
    )
    losses = []
    size = int(micro_batch_size)
    n = x.shape[0]
    span = size * int(accumulation_steps)
    for begin in range(0, n, span):
        end = min(begin + span, n)
        grad_sum = jax.tree.map(jnp.zeros_like, nnx.state(model, nnx.Param))
        loss_sum = 0.0
        for lo in range(begin, end, size):
            hi = min(lo + size, end)

            def loss_fn(m):
                logits = m(x[lo:hi])
                return optax.softmax_cross_entropy_with_integer_labels(logits, labels[lo:hi]).sum()

            loss, grads = nnx.value_and_grad(loss_fn)(model)
            grad_sum = jax.tree.map(lambda a, b: a + b, grad_sum, grads)
            loss_sum = loss_sum + loss
        optimizer.update(model, jax.tree.map(lambda g: g / (end - begin), grad_sum))
        losses.append(loss_sum / (end - begin))
    return jnp.array(losses)
"""

# The problem's starter, as learners get it.
STARTER = """\
import jax
import jax.numpy as jnp
import optax
from flax import nnx


def train_with_accumulation(
    seed, x, y, n_classes, micro_batch_size, accumulation_steps, lr, max_grad_norm
):
    model = nnx.Linear(x.shape[1], int(n_classes), rngs=nnx.Rngs(int(seed)))
    labels = y.astype(jnp.int32)
    optimizer = nnx.Optimizer(
        model, optax.chain(optax.clip_by_global_norm(max_grad_norm), optax.sgd(lr)), wrt=nnx.Param
    )
    losses = []
    # TODO: micro-batches, windows, example-weighted accumulation, one update per window.
    return jnp.array(losses)
"""

# ema-with-scan written twice: with a Python loop, and with lax.scan.
EMA_LOOP = """\
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    state = initial
    states = []
    for t in range(xs.shape[0]):
        state = decay * state + (1 - decay) * xs[t]
        states.append(state)
    return jnp.stack(states), state
"""

EMA_SCAN = """\
import jax


def ema_sequence(xs, decay, initial):
    def step(carry, x):
        carry = decay * carry + (1.0 - decay) * x
        return carry, carry

    last, history = jax.lax.scan(step, initial, xs)
    return history, last
"""


def references() -> dict[str, str]:
    """The references of the bank's other problems: realistic JAX code, all different."""
    folder = PROJECT_ROOT / "reference_solutions"
    return {
        path.stem: path.read_text()
        for path in sorted(folder.glob("*.py"))
        if path.stem != "train-with-accumulation"
    }


def test_the_disguise_is_real_and_the_copy_still_scores_high() -> None:
    def code_lines(source: str) -> set[str]:
        return {line.strip() for line in source.splitlines()} - {""}

    imports = {line for line in code_lines(ORIGINAL) if "import" in line}
    assert code_lines(ORIGINAL) & code_lines(DISGUISED) <= imports | {"):"}
    for exclude in (frozenset(), shared_code(STARTER)):
        pair = compare(ORIGINAL, DISGUISED, exclude=exclude)
        assert pair.similarity >= 0.8, pair


def test_a_copy_padded_with_more_code_keeps_its_similarity_not_its_jaccard() -> None:
    padded = DISGUISED + "\n\n" + EMA_SCAN + INDEPENDENT.replace("train_with_", "another_")
    pair = compare(ORIGINAL, padded, exclude=frozenset())
    assert pair.similarity >= 0.8
    assert pair.jaccard < 0.6


def test_honestly_different_solutions_score_low() -> None:
    starter = shared_code(STARTER)
    assert compare(ORIGINAL, INDEPENDENT, exclude=starter).similarity < 0.15
    assert compare(EMA_LOOP, EMA_SCAN, exclude=frozenset()).similarity < 0.2


def test_the_given_code_does_not_count() -> None:
    # Both solutions keep the starter's preamble: it alone makes them look alike.
    with_starter = compare(ORIGINAL, INDEPENDENT, exclude=frozenset())
    without = compare(ORIGINAL, INDEPENDENT, exclude=shared_code(STARTER))
    assert with_starter.shared >= 4 * max(without.shared, 1)
    assert without.similarity < 0.15 < with_starter.similarity
    assert max(line for _, line in without.left_regions) > 15  # nothing in the preamble


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("total = jnp.sum(values, axis=-1)", "s = jnp.sum(v, axis=-1)"),
        ("y = jnp.sum(x, axis=-1)", "(y) = jnp.sum(\n    x,\n    axis=-1,  # rows\n)"),
        ("y = 1.0 - d * x", "y = 1 - d * x"),
        ("y = f(x)\n", "y = f(x)  # why\n'''A remark.'''\n"),
        ("y = x.astype(jnp.int32)", "labels = targets.astype(jnp.int32)"),
        ("self.w = nnx.Param(w)", "self.kernel = nnx.Param(k)"),
    ],
)
def test_renaming_layout_and_spelling_do_not_change_the_tokens(one: str, other: str) -> None:
    assert shared_code(one, k=2) == shared_code(other, k=2)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("y = jnp.sum(x, axis=-1)", "y = jnp.mean(x, axis=-1)"),
        ("y = jnp.sum(x, axis=-1)", "y = jnp.sum(x, keepdims=-1)"),
        ("y = jnp.sum(x, axis=-1)", "y = jnp.sum(x, axis=0)"),
        ("y = jax.grad(f)(x)", "y = jax.vmap(f)(x)"),
    ],
)
def test_the_api_and_the_numbers_do(one: str, other: str) -> None:
    assert shared_code(one, k=2) != shared_code(other, k=2)


@pytest.mark.parametrize(
    "broken",
    [
        "",
        "# only a comment\n",
        "def f(x:\n    return jnp.sum(x\n",  # unclosed brackets
        'def f(x):\n    """never closed\n    return x\n',  # unterminated string
        "def f(x):\n        y = 1\n    return y\n",  # a dedent to no level
        "x = $y ? 3\n",
        "x = 'open\ny = 2\n",
        "a\0b = 1\n",
    ],
)
def test_code_that_does_not_parse_gets_a_fingerprint_without_raising(broken: str) -> None:
    assert fingerprint(broken).tokens >= 0


def test_broken_code_is_still_compared() -> None:
    lines = ORIGINAL.splitlines(keepends=True)
    lines[21] = lines[21].replace("):", ")")  # a missing colon
    lines[29] = " " + lines[29]  # a dedent to no level: the tokenizer stops there
    broken = "".join(lines) + "    print(losses\n"  # and an unclosed bracket
    assert compare(ORIGINAL, broken, exclude=frozenset()).similarity >= 0.8
    for cut in range(0, len(ORIGINAL), 13):  # ways to stop typing
        fingerprint(ORIGINAL[:cut])


def test_the_planted_copy_ranks_first_among_different_submissions() -> None:
    submissions = references() | {"original": ORIGINAL, "copy": DISGUISED}
    assert len(submissions) >= 20
    ranked = rank_pairs(submissions, exclude=shared_code(STARTER))
    first, second = ranked[0], ranked[1]
    assert (first.left, first.right) == ("original", "copy")
    assert first.similarity >= 0.8
    assert second.similarity < first.similarity - 0.2


def test_the_regions_are_the_copied_lines() -> None:
    # Lines 20 to 35 of ORIGINAL (its windows loop), pasted below another function.
    loop = "".join(ORIGINAL.splitlines(keepends=True)[19:35])
    header = "def windows(x, labels, micro, steps, model, optimizer, summed_loss):\n"
    right = EMA_SCAN + "\n\n" + header + loop + "    return losses\n"
    pasted_from = len(EMA_SCAN.splitlines()) + 3  # the header's line
    pair = compare(ORIGINAL, right, exclude=frozenset())
    assert pair.left_regions and pair.right_regions
    assert all(20 <= first <= last <= 35 for first, last in pair.left_regions)
    assert all(
        pasted_from <= first <= last <= pasted_from + 17 for first, last in pair.right_regions
    )
    covered = {line for first, last in pair.left_regions for line in range(first, last + 1)}
    assert len(covered) >= 14


def test_code_the_whole_class_shares_is_ignored() -> None:
    helper = "".join(ORIGINAL.splitlines(keepends=True)[16:18])  # summed_loss
    submissions = {slug: code + "\n\n" + helper for slug, code in references().items()}
    everything = rank_pairs(submissions, exclude=frozenset(), common_fraction=1.0)
    assert len(everything) >= 50  # every pair shares the helper
    assert all(pair.similarity < 0.6 for pair in rank_pairs(submissions, exclude=frozenset()))


def test_ties_keep_the_input_order() -> None:
    ranked = rank_pairs({"c": ORIGINAL, "a": ORIGINAL, "b": ORIGINAL}, exclude=frozenset())
    assert [(p.left, p.right, p.similarity) for p in ranked] == [
        ("c", "a", 1.0),
        ("c", "b", 1.0),
        ("a", "b", 1.0),
    ]


def test_the_same_code_gives_the_same_numbers_in_every_process() -> None:
    script = (
        "import json, sys\n"
        "from app.reports.similarity import fingerprint\n"
        "print(json.dumps(sorted(fingerprint(sys.stdin.read()).hashes)))\n"
    )
    expected = sorted(fingerprint(ORIGINAL).hashes)
    child = subprocess.run(  # str hashes differ from this process's: hash() would show
        [sys.executable, "-c", script],
        input=ORIGINAL,
        capture_output=True,
        text=True,
        check=True,
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    assert json.loads(child.stdout) == expected
    again = rank_pairs(references(), exclude=frozenset())
    assert rank_pairs(references(), exclude=frozenset()) == again


def test_winnowing_keeps_each_windows_rightmost_minimum_once() -> None:
    assert similarity._winnow([5, 3, 3, 7, 1, 2], window=3) == [2, 4]
    assert similarity._winnow([4, 2], window=3) == [1]
    assert similarity._winnow([], window=3) == []
