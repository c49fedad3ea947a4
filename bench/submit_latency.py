"""Submit-to-verdict through a running server, as a learner meets it (not a test).

`jaxjudge serve` (embedded workers, SQLite, default settings) on a throwaway
database; clients submit each problem's reference as a learner would, through
the JSON API, and wait for the verdict on its stream as the page does (Server-Sent
Events; polling if refused). Measured on the client's clock, from the POST to the
`done` event:

  - think time: one learner per problem, one submission every 5 s;
  - back to back: one learner resubmitting the moment a verdict arrives;
  - Run, then Submit: the learner runs the samples, reads the result for 5 s, then
    submits the same code (grader/parking.py); the submission's time is measured;
  - class bursts of 30 and 60 learners each running then submitting (one in three
    edits the code in between), with held runs off and on: graded per minute and the
    machine's CPU-seconds per submission;

and, in the same run, two baselines: a naive grader (a fresh `python` per submission
that imports jax/flax/optax and calls the solution eagerly on the same cases: no
sandbox, no pool, default XLA flags) and the in-process floor (bench/floor.py: the
same code on the same cases through the child's own code path, with the children's
XLA flags, in one warm process: what the learner's compiles cost, nothing of ours).

    .venv/bin/python -m bench.submit_latency [--runs 5] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from jaxjudge_client.verdicts import poll_delay  # as the page and `jaxjudge submit` poll

from bench.blocks import write_block
from bench.floor import floor_seconds
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
function = namespace[problem.parts[0].entry_point]
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


def verdict_stream(url: str, token: str, submission: int) -> dict[str, object] | None:
    """The `done` event of the submission's stream, as the page waits for it (None: the
    server refused a stream or it ended without one)."""
    request = urllib.request.Request(
        f"{url}/api/submissions/{submission}/events", headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=600) as stream:
            kind = ""
            for raw in stream:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    kind = line.removeprefix("event: ")
                elif line.startswith("data: ") and kind == "done":
                    state: dict[str, object] = json.loads(line.removeprefix("data: "))
                    return state
    except urllib.error.HTTPError as refused:
        refused.close()
    return None


def submit_and_wait(
    url: str, token: str, slug: str, code: str, mode: str = "submit"
) -> tuple[float, str]:
    started = time.monotonic()
    made = api(f"{url}/api/submissions", token, {"problem": slug, "code": code, "mode": mode})
    state = verdict_stream(url, token, int(str(made["id"])))
    while state is None or state["status"] != "done":
        time.sleep(poll_delay(time.monotonic() - started))
        state = api(f"{url}/api/submissions/{made['id']}", token)
    return time.monotonic() - started, str(state["verdict"])


def run_then_submit(
    url: str, token: str, slug: str, code: str, edit: bool = False
) -> tuple[float, float]:
    """Run the samples, read the result for a while, submit (the same code unless
    ``edit``); the run's time and the submission's."""
    run_seconds, verdict = submit_and_wait(url, token, slug, code, mode="run")
    assert verdict == "accepted", f"{slug}: the run said {verdict}"
    time.sleep(THINK_SECONDS)
    seconds, verdict = submit_and_wait(url, token, slug, code + ("\n# edited\n" if edit else ""))
    assert verdict == "accepted", f"{slug}: the submission said {verdict}"
    return run_seconds, seconds


def busy_cpu_seconds() -> float:
    """CPU time the whole machine has spent busy since boot (every process)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


# Issue 42's targets, printed beside each figure.
TARGET_PER_MINUTE = 30.0  # a class burst: submissions graded per minute, on 2 cores
TARGET_BURST_P50 = 3.0  # a burst's submission p50, in seconds
TARGET_OVER_FLOOR = 0.3  # a plain submission's p50 above the in-process floor, in seconds
TARGET_HELD_P50 = 0.3  # Run, then Submit: the submission's p50, in seconds


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


@dataclass
class Burst:
    learners: int
    held: bool
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    submits: list[float] = field(default_factory=list)
    runs: list[float] = field(default_factory=list)

    @property
    def per_minute(self) -> float:
        return self.learners / self.seconds * 60

    def meets(self) -> bool:
        return (
            self.per_minute >= TARGET_PER_MINUTE
            and statistics.median(self.submits) < TARGET_BURST_P50
        )

    def line(self) -> str:
        per_minute = self.per_minute
        return (
            f"| {self.learners} | {'on' if self.held else 'off'} | {self.seconds:.1f} s"
            f" | {per_minute:.1f} | {2 * per_minute:.1f}"
            f" | {statistics.median(self.submits):.2f} s | {percentile(self.submits, 0.95):.2f} s"
            f" | {statistics.median(self.runs):.2f} s | {percentile(self.runs, 0.95):.2f} s"
            f" | {self.cpu_seconds / self.learners:.2f} s | {met(self.meets())} |"
        )


def burst(
    url: str, tokens: list[str], slugs: list[str], sources: dict[str, str], size: int, held: bool
) -> Burst:
    """``size`` learners arriving within 10 s, each running then submitting (one in
    three edits the code in between)."""
    result = Burst(size, held)
    lock = threading.Lock()

    def one(number: int) -> None:
        time.sleep(random.Random(number).uniform(0, 10))
        slug = slugs[number % len(slugs)]
        run, submission = run_then_submit(
            url, tokens[number], slug, sources[slug], edit=number % 3 == 2
        )
        with lock:
            result.runs.append(run)
            result.submits.append(submission)

    cpu, started = busy_cpu_seconds(), time.monotonic()
    threads = [threading.Thread(target=one, args=(n,)) for n in range(size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.seconds = time.monotonic() - started
    result.cpu_seconds = busy_cpu_seconds() - cpu
    print(result.line(), flush=True)
    return result


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
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bursts", default="30,60", help="class sizes, comma-separated")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--all", action="store_true", help="every problem, not the five below")
    parser.add_argument("--problems", default="", help="these problems (comma-separated) instead")
    parser.add_argument(
        "--bursts-only", action="store_true", help="the class bursts alone (their own block)"
    )
    parser.add_argument(
        "--held-runs",
        choices=("both", "on", "off"),
        default="both",
        help="the bursts with held runs off then on (both), or one of them",
    )
    args = parser.parse_args()
    sizes = [int(size) for size in args.bursts.split(",") if size]
    load_before = os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="jaxjudge-latency-"))
    env = {**server_env(workdir), "JAXJUDGE_MAX_SUBMITS_PER_HOUR": "100000"}
    assert jaxjudge(env, "prepare").returncode == 0
    slugs = [folder.name for folder in problem_folders()] if args.all else list(PROBLEMS)
    slugs = args.problems.split(",") if args.problems else slugs
    sources = {s: (PROJECT_ROOT / "reference_solutions" / f"{s}.py").read_text() for s in slugs}
    tokens = []
    for number in range(max([*sizes, len(slugs)])):
        name = f"learner{number}"
        jaxjudge(env, "users", "create", name, "--password-stdin", stdin="long bench password\n")
        tokens.append(jaxjudge(env, "tokens", "create", name).stdout.strip())
    single = not args.bursts_only
    # First: a broken baseline fails fast.
    naive_runs = {slug: naive(slug, 3) for slug in slugs} if single else {}
    print("naive p50:", {s: round(statistics.median(v), 2) for s, v in naive_runs.items()})
    floors = {slug: floor_seconds(slug, list(range(args.runs))) for slug in slugs} if single else {}
    print("floor p50:", {s: round(statistics.median(v), 2) for s, v in floors.items()})
    think: dict[str, list[float]] = {}
    back: dict[str, list[float]] = {}
    continued: dict[str, list[float]] = {}
    verdicts: dict[str, int] = {}
    bursts: list[Burst] = []
    modes = {"both": (False, True), "on": (True,), "off": (False,)}[args.held_runs]
    for held in modes:  # bursts before (held runs off) and after, or one of them
        server = Server({**env, "JAXJUDGE_PARK_SECONDS": "120" if held else "0"}, 2)
        try:
            time.sleep(10)  # the pool starts and warms its children, as on a running server
            if held and single:
                for index, slug in enumerate(slugs):
                    for _ in range(args.runs):
                        time.sleep(THINK_SECONDS)
                        seconds, verdict = submit_and_wait(
                            server.url, tokens[index], slug, sources[slug]
                        )
                        think.setdefault(slug, []).append(seconds)
                        verdicts[verdict] = verdicts.get(verdict, 0) + 1
                    for _ in range(args.runs):
                        seconds, verdict = submit_and_wait(
                            server.url, tokens[index], slug, sources[slug]
                        )
                        back.setdefault(slug, []).append(seconds)
                        verdicts[verdict] = verdicts.get(verdict, 0) + 1
                    for _ in range(args.runs):
                        _run, seconds = run_then_submit(
                            server.url, tokens[index], slug, sources[slug]
                        )
                        continued.setdefault(slug, []).append(seconds)
                    print(
                        slug,
                        "think:", [round(t, 2) for t in think[slug]],
                        "back to back:", [round(t, 2) for t in back[slug]],
                        "run then submit:", [round(t, 2) for t in continued[slug]],
                        flush=True,
                    )  # fmt: skip
                time.sleep(THINK_SECONDS)
            for size in sizes:
                bursts.append(burst(server.url, tokens, slugs, sources, size, held))
                time.sleep(THINK_SECONDS)
        finally:
            server.stop()
    load = " / ".join(f"{value:.2f}" for value in load_before)
    machine = (
        f"- Machine: {platform.machine()}, {os.cpu_count()} cores, CPU only; load average"
        f" {load} (1, 5, 15 min) when the bench started; runtime"
        f" {', '.join(f'{k} {v}' for k, v in runtime_versions().items())}."
    )
    if single:
        lines = single_lines(slugs, machine, floors, think, back, continued, naive_runs)
        lines.append(
            f"Verdicts of the single-learner modes: {dict(sorted(verdicts.items()))}; every run"
            f" and submission of Run, then Submit was accepted. Runs per problem and mode:"
            f" {args.runs}."
        )
        print("\n".join(lines))
        if args.write:
            write_block("submit_latency", lines)
    lines = burst_lines(machine, bursts)
    print("\n".join(lines))
    if args.write and bursts:
        write_block("submit_bursts", lines)


def single_lines(
    slugs: list[str],
    machine: str,
    floors: dict[str, list[float]],
    think: dict[str, list[float]],
    back: dict[str, list[float]],
    continued: dict[str, list[float]],
    naive_runs: dict[str, list[float]],
) -> list[str]:
    lines = [
        f"Measured by `bench/submit_latency.py` on {date.today().isoformat()} through"
        " `jaxjudge serve` (2 embedded workers,"
        " SQLite, default settings) and the JSON API, on the client's clock from the POST to"
        " the verdict's `done` event on its stream (as the page waits for it); the reference"
        " of each problem submitted as a learner would.",
        "",
        machine,
        "- Floor: the same code on the same cases in one warm process through the child's own"
        " code path, with the children's XLA flags (bench/floor.py), one run per variant.",
        "- Naive grader: a fresh `python` per submission, imports, the solution called"
        " eagerly on the same cases (no sandbox, no pool, default XLA flags), 3 runs each.",
        "- Run, then Submit: the run's verdict, 5 s of reading, then the same code submitted.",
        "",
        f"- Targets (issue 42): a plain submission's p50 at most {TARGET_OVER_FLOOR:g} s over"
        f" the floor; Run, then Submit's p50 under {TARGET_HELD_P50:g} s.",
        "",
        "| problem | floor p50 | think time 5 s: p50 | p95 | over the floor (p50) | back to back: p50 | p95 | Run, then Submit: p50 | p95 | naive p50 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    over_met = held_met = 0
    for slug in slugs:
        floor = statistics.median(floors[slug])
        over = statistics.median(think[slug]) - floor
        held = statistics.median(continued[slug])
        over_ok, held_ok = over <= TARGET_OVER_FLOOR, held < TARGET_HELD_P50
        over_met += over_ok
        held_met += held_ok
        lines.append(
            f"| `{slug}` | {floor:.2f} s | {stats(think[slug])}"
            f" | {over:+.2f} s ({met(over_ok)}) | {stats(back[slug])}"
            f" | {held:.2f} s ({met(held_ok)}) | {percentile(continued[slug], 0.95):.2f} s"
            f" | {statistics.median(naive_runs[slug]):.2f} s |"
        )
    lines += [
        "",
        f"Within {TARGET_OVER_FLOOR:g} s of the floor: {over_met} of {len(slugs)} problems;"
        f" Run, then Submit under {TARGET_HELD_P50:g} s: {held_met} of {len(slugs)}.",
    ]
    return [*lines, ""]


HELD_RUNS_TOLD = {
    (False, True): "held runs off (`JAXJUDGE_PARK_SECONDS=0`), then on",
    (True,): "held runs on",
    (False,): "held runs off (`JAXJUDGE_PARK_SECONDS=0`)",
}


def burst_lines(machine: str, bursts: list[Burst]) -> list[str]:
    held = tuple(dict.fromkeys(result.held for result in bursts))  # as run, in order
    return [
        f"Measured by `bench/submit_latency.py` on {date.today().isoformat()} through"
        " `jaxjudge serve` (2 embedded workers,"
        " SQLite, default settings): each learner arrives within 10 s, runs the samples, waits"
        " for the verdict on its stream, reads it for 5 s and submits (one in three edits the"
        f" code first, so its submission is graded afresh); {HELD_RUNS_TOLD[held]},"
        " on the same five problems. CPU: the whole"
        " machine's busy CPU time over the burst (load generator included) per learner (one"
        " run and one submission). Submits are claimed before runs (app/grading/queue.py). Every"
        " run and submission was accepted.",
        "",
        machine,
        f"- Target (issue 42): {TARGET_PER_MINUTE:g} or more submissions graded per minute, with"
        f" a submission p50 under {TARGET_BURST_P50:g} s.",
        "",
        "| learners | held runs | all verdicts after | submissions per minute | gradings per minute | submission p50 | p95 | run p50 | p95 | CPU per learner | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *(result.line() for result in bursts),
    ]


if __name__ == "__main__":
    main()
