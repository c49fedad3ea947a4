"""How fast the similarity ranking (app/reports/similarity.py) ranks a class, and
whether disguised copies come out on top (not a test).

Simulates ``--submissions`` learners on one problem. Each starts from the reference or
one of the problem's known mistakes (docstrings dropped) and changes its structure at
random sites, as learners' solutions differ: ``jnp.sum(x)`` and ``x.sum()``, a call
pulled out into a variable, a line of debugging, ``+=`` or not, ``jax.tree.map`` or
``jax.tree_util.tree_map``, annotations, a tuple assignment split, a conditional
expression written as an ``if``, ``list(...)`` as a comprehension, two independent
statements in the other order; then renames its variables and lays the code out in
its own style. ``--copies`` of them are disguised copies of another: renamed again,
reindented, rewrapped, commented, two statements swapped, one padded with a helper.
The starter is excluded, as the platform would. Exits 1 unless the disguised copies
are the top pairs of the ranking.

``--through-report`` measures what staff wait for instead: the same class stored as
one accepted submit per learner of a course in a throwaway SQLite database, a
report started through the JSON API (``POST .../similarity``) and polled until it
is ready, on the background thread the server uses.

    .venv/bin/python -m bench.similarity [--problem SLUG] [--submissions 300] [--copies 6]
    .venv/bin/python -m bench.similarity --through-report
"""

from __future__ import annotations

import argparse
import ast
import copy
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient

from app.core.config import settings
from app.core.db import migrate, session_scope
from app.core.security import hash_password
from app.data import accounts, api_tokens, assignments, catalog, courses
from app.data.assignments import AssignmentSettings
from app.models import CourseMember, Submission, User
from app.reports.similarity import (
    COMMON_FRACTION,
    KNOWN_NAMES,
    fingerprint,
    rank_pairs,
    shared_code,
)
from app.server.main import create_app
from grader.config import PROJECT_ROOT

METHODS = ("sum", "mean", "max", "min")
MODULES = ("jnp", "jax", "np", "optax", "nnx", "lax")
NAMES = (
    "a", "b", "c", "d", "g", "h", "i", "j", "n", "t", "u", "v", "w", "z", "acc", "agg", "buf",
    "cnt", "cur", "tmp", "val", "res", "out", "idx", "pos", "arr", "vec", "total", "summed",
    "grads_acc", "grad_sum", "loss_sum", "n_seen", "offset", "begin", "end", "chunk", "batch",
    "part", "piece", "window", "block", "step", "item", "elem", "xs_b", "ys_b", "inputs",
    "targets", "preds", "scores", "result",
)  # fmt: skip
FILLERS = (
    "assert {p} is not None",
    "print('{p}', {p})",
    "{t} = {p}",
    "if {p} is None:\n    raise ValueError('{p} is required')",
    "{t} = jnp.shape({p})",
)


def stripped(source: str) -> ast.Module:
    """The code without its module docstring (a mistake's diagnosis, not a learner's)."""
    tree = ast.parse(source)
    if (
        tree.body
        and isinstance(tree.body[0], ast.Expr)
        and isinstance(tree.body[0].value, ast.Constant)
    ):
        tree.body = tree.body[1:]
    return tree


def bodies(tree: ast.AST) -> list[list[ast.stmt]]:
    found = []
    for node in ast.walk(tree):
        for name in ("body", "orelse"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                found.append(block)
    return found


def functions(tree: ast.AST) -> list[ast.FunctionDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def stored(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Expr):  # a call may change what it is called on
        return names_in(node)
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


class Replace(ast.NodeTransformer):
    def __init__(self, old: ast.AST, new: ast.AST) -> None:
        self.old, self.new = old, new

    def visit(self, node: ast.AST) -> ast.AST:
        return self.new if node is self.old else super().visit(node)


def method_form(tree: ast.Module, rng: random.Random) -> bool:
    """``jnp.sum(x, ...)`` as ``x.sum(...)``, or the other way."""
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in METHODS
    ]
    if not calls:
        return False
    call = rng.choice(calls)
    assert isinstance(call.func, ast.Attribute)
    receiver = call.func.value
    if isinstance(receiver, ast.Name) and receiver.id == "jnp":
        if not call.args or isinstance(call.args[0], ast.Starred):
            return False
        call.func, call.args = (
            ast.Attribute(call.args[0], call.func.attr, ast.Load()),
            call.args[1:],
        )
    elif not (isinstance(receiver, ast.Name) and receiver.id in MODULES):
        call.func = ast.Attribute(ast.Name("jnp", ast.Load()), call.func.attr, ast.Load())
        call.args = [receiver, *call.args]
    return True


def pulled_out(tree: ast.Module, rng: random.Random) -> bool:
    """A call inside a statement pulled out into a variable of its own."""
    sites = []
    for block in bodies(tree):
        for index, statement in enumerate(block):
            if (
                not isinstance(statement, ast.Assign | ast.Return | ast.Expr)
                or statement.value is None
            ):
                continue
            stack: list[ast.AST] = list(ast.iter_child_nodes(statement.value))
            while stack:
                node = stack.pop()
                if isinstance(node, ast.Lambda | ast.comprehension | ast.IfExp | ast.BoolOp):
                    continue
                if isinstance(node, ast.Call):
                    sites.append((block, index, statement, node))
                stack.extend(ast.iter_child_nodes(node))
    if not sites:
        return False
    block, index, statement, call = rng.choice(sites)
    name = rng.choice(NAMES) + "_"
    Replace(call, ast.Name(name, ast.Load())).visit(statement)
    block.insert(index, ast.Assign([ast.Name(name, ast.Store())], call, lineno=0))
    return True


def filler(tree: ast.Module, rng: random.Random) -> bool:
    """A line of debugging or checking, somewhere in a function."""
    function = rng.choice(functions(tree))
    parameters = [a.arg for a in function.args.args if a.arg not in ("self", "cls")]
    if not parameters:
        return False
    text = rng.choice(FILLERS).format(p=rng.choice(parameters), t=rng.choice(NAMES) + "_")
    last = len(function.body) - isinstance(function.body[-1], ast.Return)
    where = rng.randint(0, last)
    function.body[where:where] = ast.parse(text).body
    return True


def augmented(tree: ast.Module, rng: random.Random) -> bool:
    """``a += b`` as ``a = a + b``, or the other way."""
    sites = [(b, i) for b in bodies(tree) for i, s in enumerate(b) if isinstance(s, ast.AugAssign)]
    if not sites:
        return False
    block, index = rng.choice(sites)
    node = block[index]
    assert isinstance(node, ast.AugAssign)
    if isinstance(node.target, ast.Name):
        load = ast.Name(node.target.id, ast.Load())
        block[index] = ast.Assign([node.target], ast.BinOp(load, node.op, node.value), lineno=0)
    return True


def tree_alias(tree: ast.Module, rng: random.Random) -> bool:
    """``jax.tree_util.tree_map`` as ``jax.tree.map``, or the other way."""
    spellings = {"jax.tree_util.tree_map": "jax.tree.map", "jax.tree.map": "jax.tree_util.tree_map"}
    sites = [
        n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and ast.unparse(n) in spellings
    ]
    if not sites:
        return False
    old = rng.choice(sites)
    Replace(old, ast.parse(spellings[ast.unparse(old)], mode="eval").body).visit(tree)
    return True


def annotated(tree: ast.Module, rng: random.Random) -> bool:
    """Parameters and the result annotated as arrays."""
    function = rng.choice(functions(tree))
    for argument in function.args.args:
        if argument.arg not in ("self", "cls") and rng.random() < 0.7:
            argument.annotation = ast.parse("jax.Array", mode="eval").body
    function.returns = ast.parse(rng.choice(["jax.Array", "tuple", "object"]), mode="eval").body
    return True


def split_tuple(tree: ast.Module, rng: random.Random) -> bool:
    """``a, b = x, y`` as two assignments."""
    sites = []
    for block in bodies(tree):
        for index, s in enumerate(block):
            if (
                isinstance(s, ast.Assign)
                and isinstance(s.targets[0], ast.Tuple)
                and isinstance(s.value, ast.Tuple)
                and len(s.targets[0].elts) == len(s.value.elts)
                and not stored(s.targets[0]) & names_in(s.value)
            ):
                sites.append((block, index, s.targets[0].elts, s.value.elts))
    if not sites:
        return False
    block, index, targets, values = rng.choice(sites)
    block[index : index + 1] = [
        ast.Assign([t], v, lineno=0) for t, v in zip(targets, values, strict=True)
    ]
    return True


def if_statement(tree: ast.Module, rng: random.Random) -> bool:
    """``a = b if c else d`` as an ``if`` statement."""
    sites = [
        (b, i)
        for b in bodies(tree)
        for i, s in enumerate(b)
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.IfExp)
    ]
    if not sites:
        return False
    block, index = rng.choice(sites)
    node = block[index]
    assert isinstance(node, ast.Assign) and isinstance(node.value, ast.IfExp)
    branch = node.value
    block[index] = ast.If(
        branch.test,
        [ast.Assign(node.targets, branch.body, lineno=0)],
        [ast.Assign(copy.deepcopy(node.targets), branch.orelse, lineno=0)],
    )
    return True


def comprehension(tree: ast.Module, rng: random.Random) -> bool:
    """``list(xs)`` as ``[x for x in xs]``."""
    sites = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "list" and len(n.args) == 1
    ]
    if not sites:
        return False
    call = rng.choice(sites)
    name = rng.choice(NAMES) + "_"
    loop = ast.comprehension(ast.Name(name, ast.Store()), call.args[0], [], 0)
    Replace(call, ast.ListComp(ast.Name(name, ast.Load()), [loop])).visit(tree)
    return True


def swapped(tree: ast.Module, rng: random.Random) -> bool:
    """Two neighbouring statements that do not touch each other's names, swapped."""
    sites = []
    for block in bodies(tree):
        for index in range(len(block) - 1):
            first, second = block[index], block[index + 1]
            simple = (ast.Assign, ast.AugAssign, ast.Expr)
            independent = not (stored(first) & names_in(second) or stored(second) & names_in(first))
            if isinstance(first, simple) and isinstance(second, simple) and independent:
                sites.append((block, index))
    if not sites:
        return False
    block, index = rng.choice(sites)
    block[index], block[index + 1] = block[index + 1], block[index]
    return True


def length_form(tree: ast.Module, rng: random.Random) -> bool:
    """``x.shape[0]`` as ``len(x)``, or the other way."""
    sites = [
        n
        for n in ast.walk(tree)
        if (isinstance(n, ast.Call) and ast.unparse(n.func) == "len" and len(n.args) == 1)
        or (isinstance(n, ast.Subscript) and ast.unparse(n).endswith(".shape[0]"))
    ]
    if not sites:
        return False
    old = rng.choice(sites)
    if isinstance(old, ast.Call):
        new = ast.parse(f"({ast.unparse(old.args[0])}).shape[0]", mode="eval").body
    else:
        assert isinstance(old, ast.Subscript) and isinstance(old.value, ast.Attribute)
        new = ast.Call(ast.Name("len", ast.Load()), [old.value.value], [])
    Replace(old, new).visit(tree)
    return True


def commuted(tree: ast.Module, rng: random.Random) -> bool:
    """``a + b`` as ``b + a``, ``a * b`` as ``b * a``."""
    sites = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add | ast.Mult)
    ]
    if not sites:
        return False
    node = rng.choice(sites)
    node.left, node.right = node.right, node.left
    return True


MUTATIONS: tuple[Callable[[ast.Module, random.Random], bool], ...] = (
    method_form,
    pulled_out,
    filler,
    augmented,
    tree_alias,
    annotated,
    split_tuple,
    if_statement,
    comprehension,
    swapped,
    length_form,
    commuted,
)


def renamed(tree: ast.Module, rng: random.Random) -> ast.Module:
    """Every name bound inside the graded function (not its parameters) renamed."""
    tree = copy.deepcopy(tree)
    imported = {
        a.asname or a.name.split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    keep = (
        set(KNOWN_NAMES)
        | imported
        | {f.name for f in tree.body if isinstance(f, ast.FunctionDef | ast.ClassDef)}
    )
    for top in tree.body:
        if isinstance(top, ast.FunctionDef):
            keep |= {a.arg for a in top.args.args}
    bound = sorted(
        {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        | {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in n.args}
        | {f.name for f in functions(tree)}
    )
    pool = [name for name in NAMES if name not in keep]
    rng.shuffle(pool)
    mapping = {
        name: pool.pop() if pool else f"{name}_{rng.randint(0, 99)}"
        for name in bound
        if name not in keep
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in mapping:
            node.id = mapping[node.id]
        elif isinstance(node, ast.arg) and node.arg in mapping:
            node.arg = mapping[node.arg]
        elif isinstance(node, ast.FunctionDef) and node.name in mapping:
            node.name = mapping[node.name]
    return tree


def wrapped(line: str, rng: random.Random) -> str:
    """The line broken after a comma inside brackets (never inside a string)."""
    depth, quote, cuts = 0, "", []
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth > 0:
            cuts.append(index + 1)
    if not cuts:
        return line
    cut = rng.choice(cuts)
    indent = len(line) - len(line.lstrip())
    return line[:cut] + "\n" + " " * (indent + rng.choice([4, 8, 12])) + line[cut:].lstrip()


def laid_out(tree: ast.Module, rng: random.Random, *, heavy: bool) -> str:
    """The learner's own layout: indentation, wrapping, blank lines and comments."""
    width = rng.choice([2, 4]) if not heavy else 2
    lines = []
    for line in ast.unparse(tree).splitlines():
        body = line.lstrip(" ")
        depth = (len(line) - len(body)) // 4
        line = " " * (width * depth) + body
        if rng.random() < (0.3 if heavy else 0.1):
            line = wrapped(line, rng)
        if rng.random() < (0.25 if heavy else 0.1):
            lines.append(
                " " * (width * depth)
                + "# "
                + rng.choice(["step", "see the notes", "TODO check", "accumulate"])
            )
        if body.startswith("def ") and heavy:
            lines.extend([line, " " * (width * (depth + 1)) + '"""My solution."""'])
            continue
        lines.append(line)
        if rng.random() < 0.1:
            lines.append("")
    return "\n".join(lines) + "\n"


def disguised(tree: ast.Module, rng: random.Random, *, padded: bool) -> str:
    """A copy made to look different: renamed, two statements swapped, laid out anew."""
    tree = renamed(tree, rng)
    swapped(tree, rng)
    if padded:
        helper = "def check(values):\n    for v in values:\n        assert v is not None\n"
        tree.body += ast.parse(helper + "    return len(values)\n").body
    return laid_out(tree, rng, heavy=True)


def simulated_class(
    problem: str, size: int, copies: int, rng: random.Random
) -> tuple[dict[str, str], set[frozenset[str]], int]:
    """The submissions by key, the planted pairs, and how many known mistakes were used."""
    folder = PROJECT_ROOT / "problems" / problem
    bases = [stripped((PROJECT_ROOT / "reference_solutions" / f"{problem}.py").read_text())]
    bases += [stripped(path.read_text()) for path in sorted((folder / "mistakes").glob("*.py"))]
    trees: list[ast.Module] = []
    for _ in range(size - copies):
        tree = copy.deepcopy(rng.choice(bases))
        for _ in range(rng.randint(8, 16)):
            rng.choice(MUTATIONS)(tree, rng)
        trees.append(ast.fix_missing_locations(tree))
    keys = [f"learner-{n:03d}" for n in range(size)]
    rng.shuffle(keys)
    submissions = {
        key: laid_out(renamed(tree, rng), rng, heavy=False)
        for key, tree in zip(keys, trees, strict=False)
    }
    planted = set()
    sources = rng.sample(range(len(trees)), copies)
    for number, (source, key) in enumerate(zip(sources, keys[len(trees) :], strict=True)):
        submissions[key] = disguised(trees[source], rng, padded=number == 0)
        planted.add(frozenset((keys[source], key)))
    for key, code in submissions.items():
        ast.parse(code, filename=key)  # every simulated submission is valid Python
    return submissions, planted, len(bases) - 1


def through_report(problem: str, submissions: dict[str, str]) -> float:
    """Seconds from starting a report through the API to reading it ready."""
    with tempfile.TemporaryDirectory() as folder:
        settings.database_url = f"sqlite:///{Path(folder) / 'bench.db'}"
        migrate()
        opened = datetime(2026, 1, 1)
        with session_scope() as session:
            catalog.sync(session=session)
            teacher = accounts.create_user(
                session=session, name="teacher", password="long bench password", role="instructor"
            )
            token = api_tokens.create(session=session, user=teacher)[0]
            course = courses.create_course(session=session, name="Big", instructor=teacher)
            assignments.assign(session=session, course=course, problem=problem,
                               settings=AssignmentSettings(opens_at=opened))  # fmt: skip
            password = hash_password("long bench password")
            for number, code in enumerate(submissions.values()):
                user = User(name=f"l{number:04d}", canonical_name=f"l{number:04d}",
                            password_hash=password)  # fmt: skip
                session.add(user)
                session.flush()
                session.add(CourseMember(course_id=course.id, user_id=user.id, role="learner"))
                session.add(Submission(user_id=user.id, problem=problem, code=code, mode="submit",
                                       status="done", verdict="accepted", score=1.0,
                                       created_at=opened + timedelta(hours=number)))  # fmt: skip
            course_id = course.id
        headers = {"Authorization": f"Bearer {token}"}
        with TestClient(create_app(workers=0, prepare=False)) as client:
            started = time.perf_counter()
            report = client.post(f"/api/courses/{course_id}/problems/{problem}/similarity",
                                 json={"scope": "accepted"}, headers=headers).json()  # fmt: skip
            while report["status"] == "running":
                time.sleep(0.05)
                report = client.get(
                    f"/api/courses/{course_id}/similarity/{report['id']}", headers=headers
                ).json()
            waited = time.perf_counter() - started
        print(
            f"through the API: {report['submissions']} submissions, report {report['status']}"
            f" after {waited:.2f} s (the thread's own time: {report['seconds']:.2f} s),"
            f" {len(report['pairs'])} pairs kept"
        )
        return waited


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--problem", default="train-with-accumulation")
    parser.add_argument("--submissions", type=int, default=300)
    parser.add_argument("--copies", type=int, default=6)
    parser.add_argument("--common-fraction", type=float, default=COMMON_FRACTION)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--through-report", action="store_true", help="time a report via the API")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    submissions, planted, mistakes = simulated_class(
        args.problem, args.submissions, args.copies, rng
    )
    if args.through_report:
        through_report(args.problem, submissions)
        return
    starter = PROJECT_ROOT / "problems" / args.problem / "starter.py"
    exclude = shared_code(starter.read_text())

    started = time.perf_counter()
    prints = [fingerprint(code) for code in submissions.values()]
    fingerprinted = time.perf_counter() - started
    started = time.perf_counter()
    ranked = rank_pairs(submissions, exclude=exclude, common_fraction=args.common_fraction)
    ranking = time.perf_counter() - started
    sharing = rank_pairs(
        submissions, exclude=exclude, common_fraction=args.common_fraction, min_shared=1, limit=None
    )

    n = len(submissions)
    print(
        f"{args.problem}: {n} submissions ({n - args.copies} simulated from the reference and"
        f" {mistakes} known mistakes, {args.copies} disguised copies): {n * (n - 1) // 2:,} pairs"
    )
    print(
        f"fingerprint: {fingerprinted:.2f} s for all {n} ({1000 * fingerprinted / n:.1f} ms each,"
        f" {statistics.mean(len(p) for p in prints):.0f} fingerprints of"
        f" {statistics.mean(p.tokens for p in prints):.0f} tokens on average)"
    )
    print(
        f"rank_pairs, all {n} (fingerprints, index, scores, the top {len(ranked)}): {ranking:.2f} s;"
        f" {len(sharing):,} pairs share a fingerprint once the starter and the code of more"
        f" than {args.common_fraction:.0%} of the class are left out"
    )
    ranks = {frozenset((p.left, p.right)): rank for rank, p in enumerate(ranked, 1)}
    for pair in sorted(planted, key=lambda p: ranks.get(p, len(ranked) + 1)):
        rank = ranks.get(pair)
        found = (
            f"rank {rank}, similarity {ranked[rank - 1].similarity:.2f}" if rank else "NOT found"
        )
        print(f"  planted copy {' / '.join(sorted(pair))}: {found}")
    others = [p for p in ranked if frozenset((p.left, p.right)) not in planted]
    if others:
        best = others[0]
        rank = ranks[frozenset((best.left, best.right))]
        print(
            f"  best other pair: rank {rank}, similarity {best.similarity:.2f}"
            f" ({best.left} / {best.right})"
        )
    on_top = {frozenset((p.left, p.right)) for p in ranked[: len(planted)]} == planted
    print(f"the planted copies are the top {len(planted)} pairs: {'yes' if on_top else 'NO'}")
    if not on_top:
        sys.exit(1)


if __name__ == "__main__":
    main()
