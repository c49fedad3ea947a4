"""Many concurrent HTTP clients on keep-alive connections: a small load generator
(asyncio and the standard library only) for `make bench` and the load tests.

Each client owns one connection and sends its requests one after another
(closed loop), optionally pausing between them; every answer's status and
latency is recorded. Connection errors count as errors, never as crashes.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile (q in 0..1); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Client:
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    pause_seconds: float = 0.0
    # A new TCP connection for every request (`Connection: close`), its set-up counted
    # in the latency: what a script without a keep-alive client costs the server.
    reconnect: bool = False


@dataclass
class LoadResult:
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)  # connection-level

    @property
    def requests(self) -> int:
        return sum(self.statuses.values())

    @property
    def errors(self) -> int:
        return sum(n for code, n in self.statuses.items() if code >= 500) + sum(
            self.failures.values()
        )

    def percentile(self, q: float) -> float:
        return percentile(self.latencies, q)

    def summary(self) -> str:
        rate = self.requests / self.seconds if self.seconds else 0.0
        codes = ", ".join(f"{code}: {n}" for code, n in sorted(self.statuses.items()))
        failed = f"; connection failures {dict(self.failures)}" if self.failures else ""
        return (
            f"{self.requests} requests in {self.seconds:.1f} s ({rate:.0f}/s); p50"
            f" {self.percentile(0.5) * 1000:.0f} ms, p95 {self.percentile(0.95) * 1000:.0f} ms,"
            f" p99 {self.percentile(0.99) * 1000:.0f} ms, max {max(self.latencies, default=0) * 1000:.0f} ms;"
            f" statuses {{{codes}}}{failed}"
        )

    @property
    def median(self) -> float:
        return statistics.median(self.latencies) if self.latencies else float("nan")


async def _one(host: str, port: int, client: Client, deadline: float, result: LoadResult) -> None:
    started = time.monotonic()
    reader, writer = await asyncio.open_connection(host, port)
    headers = {**client.headers, **({"Connection": "close"} if client.reconnect else {})}
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    request = f"GET {client.path} HTTP/1.1\r\nHost: {host}\r\n{head}\r\n".encode()
    try:
        while time.monotonic() < deadline:
            if not client.reconnect:
                started = time.monotonic()
            writer.write(request)
            await writer.drain()
            status_line = await reader.readline()
            if not status_line:
                raise ConnectionError("closed by the server")
            length = 0
            close = False
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
                elif name.lower() == "connection" and "close" in value.lower():
                    close = True
            await reader.readexactly(length)
            result.latencies.append(time.monotonic() - started)
            result.statuses[int(status_line.split()[1])] += 1
            if close:
                writer.close()
            if client.pause_seconds:
                await asyncio.sleep(client.pause_seconds)
            if close:
                started = time.monotonic()
                reader, writer = await asyncio.open_connection(host, port)
    finally:
        writer.close()


async def _guarded(
    host: str, port: int, client: Client, deadline: float, result: LoadResult
) -> None:
    while time.monotonic() < deadline:
        try:
            await _one(host, port, client, deadline, result)
        except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError) as error:
            result.failures[type(error).__name__] += 1
            await asyncio.sleep(0.05)


def run(url: str, clients: list[Client], seconds: float) -> LoadResult:
    """Run every client against ``url`` for ``seconds``; returns what they saw."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    result = LoadResult()

    async def main() -> None:
        deadline = time.monotonic() + seconds
        started = time.monotonic()
        await asyncio.gather(*(_guarded(host, port, c, deadline, result) for c in clients))
        result.seconds = time.monotonic() - started

    asyncio.run(main())
    return result
