"""HTTP API benchmark: POST /v1/jobs requests/s beside a bare FastAPI endpoint, in the
same run, and submit -> succeeded latency of a no-op job.

    .venv/bin/python -m bench.api_throughput [--seconds 5] [--rounds 3] [--connections 32]
        [--postgres postgresql://postgres@127.0.0.1] [--processes 1,2]

Every server runs for the whole measurement (see `bench.api_servers`): the bare
endpoint, and `backroom serve --no-worker` on SQLite (synchronous=FULL) and on
PostgreSQL (a scratch database, dropped afterwards; skipped if unreachable or with
`--postgres ''`), each with 1 and with 2 server processes. Each round loads every
server in turn for `--seconds` after a warm-up, the order rotating from round to round,
so a busy moment of the machine is shared. Printed per server: the median requests/s
(and range), the CPU time the server's processes spent per request, and the median of
the same-round ratios to the bare endpoint with as many processes; then the load
average. The bare endpoint validates the same request model and answers a fixed 202,
so the gap is what backroom adds: the API key, the idempotency fingerprint, the durable
insert and the job document.
The latency run submits no-op jobs one at a time to a server with its worker and reads
each job's stored created and finished times: the queue's own latency, no polling.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import asyncpg

from backroom.client import Client, ClientConfig
from bench.api_servers import HOST, Server, load, start_backroom, start_bare
from bench.postgres_support import Server as PostgresServer
from bench.postgres_support import fetch_one

_starts = itertools.count(1)


@dataclass
class Measured:
    """One server under test and its figures, round by round."""

    name: str
    processes: int
    server: Server
    rates: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)


def measure(target: Measured, seconds: float, connections: int) -> None:
    """One round of `target`: a 1 s warm-up, then `seconds` of load."""
    server = target.server
    asyncio.run(load(server.port, server.key, 1.0, connections, next(_starts) * 10**7))
    cpu_before = server.cpu_seconds()
    rate = asyncio.run(load(server.port, server.key, seconds, connections, next(_starts) * 10**7))
    target.rates.append(rate)
    target.loads.append(os.getloadavg()[0])
    target.cpu_ms.append((server.cpu_seconds() - cpu_before) * 1000 / (rate * seconds))


def run_rounds(targets: list[Measured], options: argparse.Namespace) -> None:
    """Every target once a round, the order rotating round by round."""
    for number in range(options.rounds):
        shift = number % len(targets)
        for target in targets[shift:] + targets[:shift]:
            measure(target, options.seconds, options.connections)


def _median_ratio(rates: list[float], peers: list[float]) -> float:
    return statistics.median(mine / peer for mine, peer in zip(rates, peers, strict=True))


def report(targets: list[Measured]) -> list[str]:
    """The Markdown table: each server's figures and its same-round ratios."""
    bare = {target.processes: target for target in targets if target.name == "bare FastAPI"}
    single = {(t.name, t.processes): t for t in targets if t.processes == 1}
    lines = [
        "| server | processes | req/s, median (range) | CPU ms / request | vs bare"
        " | vs 1 process |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for target in targets:
        peer = bare[target.processes]
        one = single.get((target.name, 1))
        scaling = ""
        if one is not None and one is not target:
            scaling = f"{_median_ratio(target.rates, one.rates):.2f}x"
        versus = "" if peer is target else f"{_median_ratio(target.rates, peer.rates):.2f}x"
        lines.append(
            f"| {target.name} | {target.processes} | {statistics.median(target.rates):,.0f}"
            f" ({min(target.rates):,.0f}-{max(target.rates):,.0f})"
            f" | {statistics.median(target.cpu_ms):.2f} | {versus} | {scaling} |"
        )
    return lines


def _reachable(postgres: str | None) -> str | None:
    """`postgres`, or None (said on stderr) when no server answers there."""
    if postgres is None:
        return None
    try:
        asyncio.run(fetch_one(f"{postgres}/test", "SELECT 1"))
    except (OSError, asyncpg.PostgresError) as error:
        print(f"PostgreSQL at {postgres} skipped: {error}", file=sys.stderr)
        return None
    return postgres


@contextmanager
def started(folder: Path, postgres: str | None, processes: list[int]) -> Iterator[list[Measured]]:
    """Every server under test, running; stopped afterwards."""
    postgres = _reachable(postgres)
    with ExitStack() as stack:
        targets = []
        for count in processes:
            extra = ("--processes", str(count)) if count > 1 else ()
            servers = [("bare FastAPI", start_bare(count))]
            servers.append(("backroom SQLite", _backroom(stack, folder / f"s{count}", extra)))
            if postgres:
                servers.append(("backroom PostgreSQL", _backroom(stack, folder, extra, postgres)))
            for name, server in servers:
                stack.callback(server.stop)
                targets.append(Measured(name, count, server))
        yield targets


def _backroom(
    stack: ExitStack, folder: Path, extra: tuple[str, ...], postgres: str | None = None
) -> Server:
    db = None
    if postgres is not None:
        db = stack.enter_context(_scratch_database(postgres))
    else:
        folder.mkdir()
    return start_backroom(folder, worker=False, options=extra, db=db)


@contextmanager
def _scratch_database(url: str) -> Iterator[str]:
    scratch = PostgresServer(url, "test").scratch("bench_api")
    loop = asyncio.new_event_loop()
    try:
        yield loop.run_until_complete(scratch.__aenter__())
    finally:
        loop.run_until_complete(scratch.__aexit__(None, None, None))
        loop.close()


# -- latency --------------------------------------------------------------------------


def latencies(server: Server, jobs: int) -> list[int]:
    """Stored finished - created times (ms) of no-op jobs submitted one at a time."""
    quick = ClientConfig(poll_first_s=0.005, poll_cap_s=0.05)
    with Client(f"http://{HOST}:{server.port}", server.key, config=quick) as client:
        ids = []
        for _ in range(jobs):
            submitted = client.submit("demo.noop", None)
            ids.append(submitted.job.id)
            client.wait(submitted.job.id, timeout_s=30)
        documents = [client.get(job_id).document for job_id in ids]

    def ms(text: str) -> float:
        return datetime.fromisoformat(text).timestamp() * 1000

    return [round(ms(doc["finished_at"]) - ms(doc["created_at"])) for doc in documents]


def percentile(values: list[int], share: float) -> int:
    """The value below which `share` of `values` fall (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    """Run the interleaved rounds and the latency run; print Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1")
    parser.add_argument("--processes", default="1,2", help="server processes, e.g. 1,2")
    parser.add_argument("--jobs", type=int, default=200, help="jobs for the latency run")
    options = parser.parse_args()
    processes = [int(count) for count in options.processes.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        with started(Path(folder), options.postgres or None, processes) as targets:
            run_rounds(targets, options)
        latency_folder = Path(folder) / "latency"
        latency_folder.mkdir()
        served = start_backroom(latency_folder, worker=True)
        try:
            measured = latencies(served, options.jobs)
        finally:
            served.stop()
    loads = [figure for target in targets for figure in target.loads]
    print(
        f"{options.rounds} rounds, rotating order; load average (1 min) during the run:"
        f" median {statistics.median(loads):.2f}, {min(loads):.2f}-{max(loads):.2f}"
    )
    print("\n".join(report(targets)))
    print(
        f"\nno-op submit -> succeeded (SQLite, in-process worker): p50 {percentile(measured, 0.5)}"
        f" ms, p99 {percentile(measured, 0.99)} ms, mean {statistics.mean(measured):.1f} ms"
    )


if __name__ == "__main__":
    main()
