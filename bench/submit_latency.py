"""Submit-to-verdict through a running server, as a learner meets it (not a test).

`jaxjudge serve` (embedded workers, SQLite, default settings) on a throwaway
database; clients submit each problem's reference as a learner would, through
the JSON API, and poll like the page does. Measured on the client's clock, from
the POST to the answer that says `done`:

  - think time: one learner per problem, one submission every 5 s;
  - back to back: one learner resubmitting the moment a verdict arrives;
  - a class burst: 30 learners each submitting once within 10 s;

and, in the same run, a naive grader: a fresh `python` per submission that
imports jax/flax/optax and calls the solution eagerly on the same cases (no
sandbox, no pool, default XLA flags).

    .venv/bin/python -m bench.submit_latency [--runs 6] [--write]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from jaxjudge_client.verdicts import poll_delay  # as the page and `jaxjudge submit` poll

from bench.blocks import write_block
from bench.http_load import percentile
from bench.sustained import api
from grader.config import PROJECT_ROOT
from grader.problems.problem import problem_folders
from grader.versions import HOST_DEVICES, runtime_versions
from tests.app.server import Server, jaxjudge, server_env

THINK_SECONDS = 5.0
NAIVE = """
import sys
from pathlib import Path
import jax, jax.numpy as jnp, flax, optax
from grader.problems.problem import load_problem
problem = load_problem(Path(sys.argv[1]))
namespace = {}
exec(compile(open(sys.argv[2]).read(), "submission.py", "exec"), namespace)
function = namespace[problem.config.entry_point]
for case in [*problem.case_bank.samples, *problem.case_bank.for_variant(int(sys.argv[3]))]:
    args = [v if isinstance(v, float) else jax.tree.map(jnp.asarray, v) for v in case.args.values()]
    jax.block_until_ready(function(*args))
"""


# One problem per kind (linen, nnx, optax, scan, a whole training step): the same five
# every run, so numbers compare across runs however the bank grows.
PROBLEMS = (
    "linen-trainstate-accumulation",
    "nnx-grad-accumulation",
    "optax-multisteps",
    "scan-microbatched-grads",
    "train-with-accumulation",
)


def submit_and_wait(url: str, token: str, slug: str, code: str) -> tuple[float, str]:
    started = time.monotonic()
    made = api(f"{url}/api/submissions", token, {"problem": slug, "code": code})
    while True:
        state = api(f"{url}/api/submissions/{made['id']}", token)
        if state["status"] == "done":
            return time.monotonic() - started, str(state["verdict"])
        time.sleep(poll_delay(time.monotonic() - started))


def naive(slug: str, runs: int) -> list[float]:
    folder = PROJECT_ROOT / "problems" / slug
    reference = PROJECT_ROOT / "reference_solutions" / f"{slug}.py"
    times = []
    for run in range(runs):
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-c", NAIVE, str(folder), str(reference), str(run)],
            check=True,
            capture_output=True,
            cwd=PROJECT_ROOT,
            # The simulated CPU devices a problem's mesh needs (data-parallel-accumulation);
            # otherwise XLA's default flags, as a learner's own process has.
            env={
                **os.environ,
                "XLA_FLAGS": f"--xla_force_host_platform_device_count={HOST_DEVICES}",
            },
        )
        times.append(time.monotonic() - started)
    return times


def stats(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s | {percentile(values, 0.95):.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--burst", type=int, default=30)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--all", action="store_true", help="every problem, not the five below")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="jaxjudge-latency-"))
    env = {**server_env(workdir), "JAXJUDGE_MAX_SUBMITS_PER_HOUR": "100000"}
    assert jaxjudge(env, "prepare").returncode == 0
    slugs = [folder.name for folder in problem_folders()] if args.all else list(PROBLEMS)
    sources = {s: (PROJECT_ROOT / "reference_solutions" / f"{s}.py").read_text() for s in slugs}
    tokens = []
    for number in range(max(args.burst, len(slugs))):
        name = f"learner{number}"
        jaxjudge(env, "users", "create", name, "--password-stdin", stdin="long bench password\n")
        tokens.append(jaxjudge(env, "tokens", "create", name).stdout.strip())
    naive_runs = {slug: naive(slug, 3) for slug in slugs}  # first: a broken baseline fails fast
    print("naive p50:", {s: round(statistics.median(v), 2) for s, v in naive_runs.items()})
    think: dict[str, list[float]] = {}
    back: dict[str, list[float]] = {}
    verdicts: dict[str, int] = {}
    server = Server(env, 2)
    try:
        time.sleep(10)  # the pool starts and warms its children, as on a running server
        for index, slug in enumerate(slugs):
            for _ in range(args.runs):
                time.sleep(THINK_SECONDS)
                seconds, verdict = submit_and_wait(server.url, tokens[index], slug, sources[slug])
                think.setdefault(slug, []).append(seconds)
                verdicts[verdict] = verdicts.get(verdict, 0) + 1
            print(slug, "think time:", [round(t, 2) for t in think[slug]], flush=True)
            for _ in range(args.runs):
                seconds, verdict = submit_and_wait(server.url, tokens[index], slug, sources[slug])
                back.setdefault(slug, []).append(seconds)
                verdicts[verdict] = verdicts.get(verdict, 0) + 1
            print(slug, "back to back:", [round(t, 2) for t in back[slug]], flush=True)
        time.sleep(THINK_SECONDS)
        burst: list[float] = []
        lock = threading.Lock()

        def one(number: int) -> None:
            time.sleep(random.Random(number).uniform(0, 10))
            slug = slugs[number % len(slugs)]
            seconds, verdict = submit_and_wait(server.url, tokens[number], slug, sources[slug])
            with lock:
                burst.append(seconds)
                verdicts[verdict] = verdicts.get(verdict, 0) + 1

        burst_started = time.monotonic()
        threads = [threading.Thread(target=one, args=(n,)) for n in range(args.burst)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        burst_seconds = time.monotonic() - burst_started
    finally:
        server.stop()
    lines = [
        "Measured by `bench/submit_latency.py` through `jaxjudge serve` (2 embedded workers,"
        " SQLite, default settings) and the JSON API, on the client's clock from the POST to"
        " the answer that says `done`, polling as the page does; the reference of each problem"
        " submitted as a learner would.",
        "",
        f"- Machine: {platform.machine()}, {__import__('os').cpu_count()} cores, CPU only;"
        f" runtime {', '.join(f'{k} {v}' for k, v in runtime_versions().items())}.",
        "- Naive grader: a fresh `python` per submission, imports, the solution called"
        " eagerly on the same cases (no sandbox, no pool, default XLA flags), 3 runs each.",
        "",
        "| problem | think time 5 s: p50 | p95 | back to back: p50 | p95 | naive p50 | speed-up (p50, think time) |",
        "|---|---|---|---|---|---|---|",
    ]
    for slug in slugs:
        ratio = statistics.median(naive_runs[slug]) / statistics.median(think[slug])
        lines.append(
            f"| `{slug}` | {stats(think[slug])} | {stats(back[slug])} |"
            f" {statistics.median(naive_runs[slug]):.2f} s | {ratio:.1f}x |"
        )
    lines += [
        "",
        f"Class burst: {args.burst} learners each submitting once within 10 s: all verdicts"
        f" after {burst_seconds:.1f} s; per learner p50 {statistics.median(burst):.2f} s,"
        f" p95 {percentile(burst, 0.95):.2f} s, max {max(burst):.2f} s"
        f" ({args.burst / burst_seconds * 60:.0f} graded per minute while it lasted).",
        f"Verdicts: {dict(sorted(verdicts.items()))}. Runs per problem and mode: {args.runs}.",
    ]
    print("\n".join(lines))
    if args.write:
        write_block("submit_latency", lines)


if __name__ == "__main__":
    main()
