"""Enqueuing and processing 10,000 no-op jobs on PostgreSQL, beside PgQueuer and pgbench.

    python -m bench.postgres_throughput [--jobs 10000] [--repeat 3] [--samples 300]
        [--server postgresql://postgres@127.0.0.1:5432] [--admin-db test]

Every row runs in one go on the same server (synchronous_commit as the server has it,
on by default), each system in a scratch database of its own, dropped at the end:
- backroom: enqueue one by one (`App.submit`) and in bulk (`submit_many`, 1,000 jobs a
  call); processing with 1, 2 and 4 `backroom worker --burst` processes, as wall time
  from start to exit and as the processing window (first attempt's start to last
  attempt's end, as stored); the pickup latency of an idle worker: from calling
  `App.submit` to the handler's first line, woken by LISTEN/NOTIFY, many times over.
- PgQueuer (its defaults): enqueue one by one and in bulk (1,000 a call); one process
  draining the queue (`QueueManager.run(mode=drain)`), wall time and window (its log's
  first `picked` to last `successful`).
- The physical reference: raw asyncpg inserting 1,000 rows per statement with unnest,
  and claiming (SKIP LOCKED) then completing 100 rows per transaction; pgbench's
  single-row UPDATE transactions per second with 1 and 4 clients.
Throughput rows keep the best of `--repeat` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from backroom import App
from backroom.clock import SystemClock
from bench.postgres_peers import (
    pgbench_init,
    pgbench_tps,
    pgqueuer_enqueue,
    pgqueuer_install,
    pgqueuer_process,
    raw_claim_and_complete,
    raw_insert,
    raw_pickup,
)
from bench.postgres_support import BULK, ROOT, Server, execute, fetch_one, timed

BACKROOM_CONCURRENCY = "200"


# -- backroom ---------------------------------------------------------------------------

BACKROOM_TABLES = "TRUNCATE jobs, attempts, job_events, once_records"


async def backroom_enqueue(url: str, jobs: int, *, bulk: bool) -> float:
    """Seconds to submit `jobs` no-op jobs into an emptied database."""
    await execute(url, BACKROOM_TABLES)
    async with App(url) as app:

        async def submit_all() -> None:
            if not bulk:
                for n in range(jobs):
                    await app.submit("noop", n)
                return
            for first in range(0, jobs, BULK):
                last = min(first + BULK, jobs)
                await app.submit_many(app.new_jobs("noop", range(first, last)))

        return await timed(submit_all())


async def backroom_process(url: str, jobs: int, processes: int) -> tuple[float, float]:
    """(wall seconds, processing window seconds) for `processes` burst workers."""
    await backroom_enqueue(url, jobs, bulk=True)
    await execute(url, "VACUUM ANALYZE jobs")
    command = [sys.executable, "-m", "backroom", "worker", "--app", "bench.noop_app:app"]
    options = ["--db", url, "--burst", "--concurrency", BACKROOM_CONCURRENCY]
    started = time.perf_counter()
    workers = [subprocess.Popen(command + options, cwd=ROOT) for _ in range(processes)]
    if any(worker.wait() != 0 for worker in workers):
        raise RuntimeError("a backroom worker failed")
    wall = time.perf_counter() - started
    window = await fetch_one(
        url,
        "SELECT (max(finished_at) - min(started_at)) / 1000.0 AS seconds, count(*) AS attempts "
        "FROM attempts",
    )
    if window["attempts"] != jobs:
        raise RuntimeError(f"expected {jobs} attempts, found {window['attempts']}")
    return wall, float(window["seconds"])


async def backroom_pickup(url: str, samples: int, direct: str | None = None) -> list[float]:
    """Milliseconds from `App.submit` to the handler's start, with an idle worker waiting.

    `direct` is a plain URL of the same database for emptying it, where `url` carries
    backroom's own options (a pooler's, say).
    """
    await execute(direct or url, BACKROOM_TABLES)
    command = [sys.executable, "-m", "backroom", "worker", "--app", "bench.noop_app:app"]
    worker = subprocess.Popen([*command, "--db", url, "--concurrency", "10"], cwd=ROOT)
    clock = SystemClock()
    latencies: list[float] = []
    try:
        async with App(url) as app:

            async def handler_started_after(submitted_ns: int) -> float:
                job = (await app.submit("pickup", None)).job
                # Let the job finish and the worker fall idle again before the next one.
                # The first look waits too: a read sent as `submit` returned ran beside
                # the very claim it measures (the raw floor's process waits idle).
                await clock.sleep(20)
                while (stored := await app.get(job.id)).result is None:
                    await clock.sleep(20)
                return float(stored.result - submitted_ns) / 1e6

            await handler_started_after(time.perf_counter_ns())  # the worker is up
            for _ in range(samples):
                await clock.sleep(20)
                latencies.append(await handler_started_after(time.perf_counter_ns()))
    finally:
        worker.terminate()
        worker.wait()
    return latencies


# -- the run ----------------------------------------------------------------------------


async def best(repeat: int, measure: Callable[[], Awaitable[float]]) -> float:
    """The smallest of `repeat` measurements."""
    return min([await measure() for _ in range(repeat)])


@dataclass
class Results:
    """Seconds per row for `jobs` jobs, pickup latencies (backroom, raw) and pgbench rates."""

    jobs: int
    seconds: dict[str, float]
    pickup_ms: list[float]
    raw_pickup_ms: list[float]
    pgbench: dict[int, float]


async def measure_backroom(url: str, jobs: int, repeat: int, rows: dict[str, float]) -> None:
    async with App(url):  # create the schema
        pass
    rows["backroom enqueue one by one (App.submit)"] = await best(
        repeat, lambda: backroom_enqueue(url, jobs, bulk=False)
    )
    rows["backroom enqueue in bulk (submit_many, 1,000 a call)"] = await best(
        repeat, lambda: backroom_enqueue(url, jobs, bulk=True)
    )
    for processes in (1, 2, 4):
        runs = [await backroom_process(url, jobs, processes) for _ in range(repeat)]
        label = f"backroom {processes} worker process{'es' if processes > 1 else ''}"
        rows[f"{label}, processing window"] = min(window for _, window in runs)
        rows[f"{label}, wall incl. start-up"] = min(wall for wall, _ in runs)


async def measure_pgqueuer(url: str, jobs: int, repeat: int, rows: dict[str, float]) -> None:
    await pgqueuer_install(url)
    rows["PgQueuer enqueue one by one"] = await best(
        repeat, lambda: pgqueuer_enqueue(url, jobs, bulk=False)
    )
    rows["PgQueuer enqueue in bulk (1,000 a call)"] = await best(
        repeat, lambda: pgqueuer_enqueue(url, jobs, bulk=True)
    )
    runs = [await pgqueuer_process(url, jobs) for _ in range(repeat)]
    rows["PgQueuer 1 process, processing window"] = min(window for _, window in runs)
    rows["PgQueuer 1 process, wall incl. start-up"] = min(wall for wall, _ in runs)


async def measure(server: Server, jobs: int, repeat: int, samples: int) -> Results:
    rows: dict[str, float] = {}
    async with server.scratch("bench_backroom") as url:
        await measure_backroom(url, jobs, repeat, rows)
        pickup_ms = await backroom_pickup(url, samples)
    async with server.scratch("bench_pgqueuer") as url:
        await measure_pgqueuer(url, jobs, repeat, rows)
    async with server.scratch("bench_raw") as url:
        rows["raw asyncpg insert, 1,000 rows per statement"] = await best(
            repeat, lambda: raw_insert(url, jobs)
        )
        rows["raw asyncpg claim + complete, 100 per transaction"] = await best(
            repeat, lambda: raw_claim_and_complete(url, jobs)
        )
        raw_pickup_ms = await raw_pickup(url, samples)
    async with server.scratch("bench_pgbench") as url:
        pgbench_init(url)
        rates = {clients: pgbench_tps(url, clients) for clients in (1, 4)}
    return Results(jobs, rows, pickup_ms, raw_pickup_ms, rates)


# -- the report -------------------------------------------------------------------------

PEERS = {
    "backroom enqueue one by one": "PgQueuer enqueue one by one",
    "backroom enqueue in bulk": "PgQueuer enqueue in bulk (1,000 a call)",
    "processing window": "PgQueuer 1 process, processing window",
    "wall incl. start-up": "PgQueuer 1 process, wall incl. start-up",
}
"""Which PgQueuer row each backroom row is compared with (by a part of its name)."""


def peer(row: str) -> str | None:
    if row.startswith("PgQueuer"):
        return row
    return next((other for part, other in PEERS.items() if part in row), None)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def report(results: Results, repeat: int) -> list[str]:
    rates = {row: results.jobs / seconds for row, seconds in results.seconds.items()}
    lines = [
        f"{results.jobs:,} no-op jobs, PostgreSQL, best of {repeat} for each throughput row",
        "",
        "| row | jobs/s | vs PgQueuer |",
        "| --- | ---: | ---: |",
    ]
    for row, rate in rates.items():
        other = peer(row)
        ratio = f"{rate / rates[other]:.2f}x" if other else ""
        lines.append(f"| {row} | {rate:,.0f} | {ratio} |")
    for clients, tps in results.pgbench.items():
        lines.append(f"| pgbench single-row UPDATE, {clients} client(s), tps | {tps:,.0f} | |")
    lines += [
        "",
        "| pickup latency | p50 | p99 | max | samples |",
        "| --- | ---: | ---: | ---: | ---: |",
        latency_row("backroom: App.submit to handler start, idle worker", results.pickup_ms),
        latency_row("raw asyncpg: INSERT + NOTIFY to SKIP LOCKED claim", results.raw_pickup_ms),
    ]
    return lines + targets(rates, results.pickup_ms)


def latency_row(name: str, values: list[float]) -> str:
    return (
        f"| {name} | {statistics.median(values):.2f} ms | {percentile(values, 0.99):.2f} ms"
        f" | {max(values):.2f} ms | {len(values)} |"
    )


def targets(rates: dict[str, float], pickup: list[float]) -> list[str]:
    one_process = rates["backroom 1 worker process, processing window"]
    bulk = rates["backroom enqueue in bulk (submit_many, 1,000 a call)"]
    peer_process = rates["PgQueuer 1 process, processing window"]
    peer_bulk = rates["PgQueuer enqueue in bulk (1,000 a call)"]
    checks = [
        (
            "processing, 1 process >= 2x PgQueuer",
            f"{one_process / peer_process:.2f}x",
            one_process >= 2 * peer_process,
        ),
        ("bulk enqueue >= 50,000 jobs/s", f"{bulk:,.0f}/s", bulk >= 50_000),
        ("bulk enqueue >= 1.5x PgQueuer", f"{bulk / peer_bulk:.2f}x", bulk >= 1.5 * peer_bulk),
        (
            "pickup p50 <= 3 ms",
            f"{statistics.median(pickup):.2f} ms",
            statistics.median(pickup) <= 3,
        ),
        (
            "pickup p99 <= 10 ms",
            f"{percentile(pickup, 0.99):.2f} ms",
            percentile(pickup, 0.99) <= 10,
        ),
    ]
    lines = ["", "| target | measured | met |", "| --- | ---: | :---: |"]
    lines += [f"| {name} | {value} | {'yes' if met else 'no'} |" for name, value, met in checks]
    return lines


def main() -> None:
    """Run every row and print markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--samples", type=int, default=300, help="pickup latency samples")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--admin-db", default="test")
    args = parser.parse_args()
    server = Server(args.server, args.admin_db)
    results = asyncio.run(measure(server, args.jobs, args.repeat, args.samples))
    print("\n".join(report(results, args.repeat)))


if __name__ == "__main__":
    main()
