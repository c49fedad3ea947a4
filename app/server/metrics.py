"""`/metrics` for Prometheus (prometheus-client), computed from the database at each
scrape, so that one scrape of any web process covers every worker on every machine.

- ``jaxjudge_submissions{status}``: the queue's depth by status;
- ``jaxjudge_verdicts_total{verdict}``: graded submissions by verdict;
- ``jaxjudge_submit_to_verdict_seconds``, ``jaxjudge_queue_wait_seconds``: histograms
  over every graded submission; ``jaxjudge_grading_seconds{problem}`` per problem;
- ``jaxjudge_pool_children{worker,state}``: each grading process's sandboxed
  children, idle (warm, waiting) or busy;
- ``jaxjudge_worker_heartbeat_age_seconds{worker}``: seconds since each grading
  process last reported (a dead one stops being listed 15 s after its last beat
  is removed, or grows until an operator looks).

Histograms over the database are cumulative over all graded submissions, hence
monotonic like Prometheus counters. Who may read it: see ``allowed``.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from app.core.db import session_scope
from app.reports import operations

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)


def _add_histogram(
    family: HistogramMetricFamily, values: list[float], labels: list[str] | None = None
) -> None:
    """Cumulative buckets (Prometheus' ``le``) of ``values``."""
    data = sorted(values)
    buckets, index = [], 0
    for bound in LATENCY_BUCKETS:
        while index < len(data) and data[index] <= bound:
            index += 1
        buckets.append((str(bound), float(index)))
    buckets.append(("+Inf", float(len(data))))
    family.add_metric(labels or [], buckets, float(sum(data)))


class DatabaseCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        with session_scope() as session:
            depth = operations.depth_by_status(session=session)
            times = operations.finished_times(session=session)
            workers = operations.workers(session=session)
        queue = GaugeMetricFamily(
            "jaxjudge_submissions", "Submissions by status (the queue's depth).", labels=["status"]
        )
        for status, count in depth.items():
            queue.add_metric([status], count)
        yield queue

        verdicts = CounterMetricFamily(
            "jaxjudge_verdicts", "Graded submissions by verdict.", labels=["verdict"]
        )
        by_verdict: dict[str, int] = {}
        for done in times:
            by_verdict[done.verdict] = by_verdict.get(done.verdict, 0) + 1
        for verdict, count in sorted(by_verdict.items()):
            verdicts.add_metric([verdict], count)
        yield verdicts

        total = HistogramMetricFamily(
            "jaxjudge_submit_to_verdict_seconds", "From stored to graded, per submission."
        )
        _add_histogram(total, [done.total for done in times])
        yield total
        wait = HistogramMetricFamily(
            "jaxjudge_queue_wait_seconds", "From stored to claimed by a worker."
        )
        _add_histogram(wait, [done.queue_wait for done in times])
        yield wait
        grading = HistogramMetricFamily(
            "jaxjudge_grading_seconds", "From claimed to graded, by problem.", labels=["problem"]
        )
        for problem in sorted({done.problem for done in times}):
            _add_histogram(
                grading, [done.grading for done in times if done.problem == problem], [problem]
            )
        yield grading

        children = GaugeMetricFamily(
            "jaxjudge_pool_children",
            "Sandboxed children of each grading process: idle (warm) or busy.",
            labels=["worker", "state"],
        )
        age = GaugeMetricFamily(
            "jaxjudge_worker_heartbeat_age_seconds",
            "Seconds since each grading process last reported.",
            labels=["worker"],
        )
        for view in workers:
            children.add_metric([view.row.name, "idle"], view.row.idle_children)
            children.add_metric([view.row.name, "busy"], view.busy_children)
            age.add_metric([view.row.name], view.age_seconds)
        yield children
        yield age


_registry = CollectorRegistry(auto_describe=False)
_registry.register(DatabaseCollector())


def render() -> bytes:
    return generate_latest(_registry)


def allowed(
    *, token: str | None, authorization: str | None, client: str | None, forwarded: bool
) -> bool:
    """With ``JAXJUDGE_METRICS_TOKEN`` set, a scrape must bring it as a bearer token.
    Without one, only a scraper on this machine may read it: a loopback client whose
    request did not come through a proxy (a proxied request carries X-Forwarded-For)."""
    if token:
        expected = f"Bearer {token}".encode()
        return authorization is not None and hmac.compare_digest(authorization.encode(), expected)
    return client in ("127.0.0.1", "::1") and not forwarded
