"""Throughput through PgBouncer against a direct connection, in one run.

    python -m bench.pgbouncer_throughput [--jobs 10000] [--repeat 3] [--pool-max N]
        [--server postgresql://postgres@127.0.0.1:5432] [--admin-db test]

Three routes to one scratch database, each measured in turn, round after round:
- direct: the workers connect to PostgreSQL itself;
- session: through a PgBouncer in session pooling (`pooler=session`; LISTEN too);
- transaction: through a PgBouncer in transaction pooling (`pooler=transaction`), with
  LISTEN on a direct `listen_url`.
Both PgBouncers are Debian's (`/usr/sbin/pgbouncer`), in their default configuration
but for the pool mode, started by this script (see tests/integration/pgbouncer_process).
Then the pickup latency of an idle worker on each route (`--samples` of them; through
the transaction pooler the worker is woken through its direct listen URL).
Rows: submitting one by one (`App.submit`, one process, by 1 and by 16 submitters at
once), and processing with two `backroom worker --burst` processes (the window from the
first attempt's start to the last one's end, as stored). Each row gives the best rate
of `--repeat` rounds, and the median of the rounds' ratios to the direct route.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
from tests.integration.pgbouncer_process import run_pgbouncer, store_url

from backroom import App
from bench.postgres_throughput import backroom_pickup, percentile

ROOT = Path(__file__).resolve().parent.parent
TABLES = "TRUNCATE jobs, attempts, job_events, once_records"
Rates = dict[str, dict[str, list[float]]]
Latencies = dict[str, list[float]]

SUBMITS = 2_000
AT_ONCE = (1, 16)
BULK = 1_000
WORKERS = 2
CONCURRENCY = "200"


async def execute(url: str, statement: str) -> asyncpg.Record | None:
    connection = await asyncpg.connect(url)
    try:
        return await connection.fetchrow(statement)
    finally:
        await connection.close()


async def create_schema(url: str) -> None:
    async with App(url):
        pass


async def enqueue_rate(url: str, direct: str, at_once: int) -> float:
    """Jobs per second submitted one by one through `url`, by `at_once` submitters."""
    await execute(direct, TABLES)
    async with App(url) as app:

        async def submitter(first: int) -> None:
            for n in range(first, SUBMITS, at_once):
                await app.submit("noop", n)

        await app.submit("noop", -1)  # the pool is open
        started = time.perf_counter()
        await asyncio.gather(*(submitter(first) for first in range(at_once)))
        return SUBMITS / (time.perf_counter() - started)


async def processing_rate(url: str, direct: str, jobs: int) -> float:
    """Jobs per second processed by two burst workers through `url` (the stored window)."""
    await execute(direct, TABLES)
    async with App(direct) as app:
        for first in range(0, jobs, BULK):
            count = min(BULK, jobs - first)
            await app.submit_many([app.new_job("noop", first + n) for n in range(count)])
    await execute(direct, "VACUUM ANALYZE jobs")
    command = [sys.executable, "-m", "backroom", "worker", "--app", "bench.noop_app:app"]
    command += ["--db", url, "--burst", "--concurrency", CONCURRENCY]
    workers = [subprocess.Popen(command, cwd=ROOT) for _ in range(WORKERS)]
    if any(worker.wait() != 0 for worker in workers):
        raise RuntimeError("a backroom worker failed")
    window = await execute(
        direct,
        "SELECT (max(finished_at) - min(started_at)) / 1000.0 AS seconds, count(*) AS attempts "
        "FROM attempts",
    )
    assert window is not None
    if window["attempts"] != jobs:
        raise RuntimeError(f"expected {jobs} attempts, found {window['attempts']}")
    return jobs / float(window["seconds"])


@contextlib.contextmanager
def scratch_database(server: str, admin_db: str) -> Iterator[str]:
    name = f"bench_pgbouncer_{secrets.token_hex(4)}"
    admin = f"{server}/{admin_db}"
    asyncio.run(execute(admin, f'CREATE DATABASE "{name}"'))
    try:
        yield name
    finally:
        asyncio.run(execute(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def measure(args: argparse.Namespace) -> tuple[Rates, Latencies]:
    """{route: {row: jobs/s of each round}}, and {route: pickup latencies in ms}."""
    rows: Rates = {}
    with (
        scratch_database(args.server, args.admin_db) as name,
        tempfile.TemporaryDirectory() as folder,
        run_pgbouncer(Path(folder, "s"), args.server, name, "session") as session,
        run_pgbouncer(Path(folder, "t"), args.server, name, "transaction") as transaction,
    ):
        direct = f"{args.server}/{name}"
        options = {"pool_max": str(args.pool_max)} if args.pool_max else {}
        routes = {
            "direct": f"{direct}?pool_max={args.pool_max}" if args.pool_max else direct,
            "session": store_url(session, name, **options),
            "transaction": store_url(transaction, name, listen_url=direct, **options),
        }
        asyncio.run(create_schema(direct))
        for _ in range(args.repeat):
            for route, url in routes.items():
                found = rows.setdefault(route, {})
                for at_once in AT_ONCE:
                    rate = asyncio.run(enqueue_rate(url, direct, at_once))
                    found.setdefault(f"submit, {at_once} at once", []).append(rate)
                rate = asyncio.run(processing_rate(url, direct, args.jobs))
                found.setdefault(f"{WORKERS} workers, processing", []).append(rate)
        pickups = {
            route: asyncio.run(backroom_pickup(url, args.samples, direct))
            for route, url in routes.items()
        }
    return rows, pickups


def report(rates: Rates, pickups: Latencies, args: argparse.Namespace) -> list[str]:
    """A row per route and measure: the best rate, and the median of the rounds' ratios
    to the direct route measured right before (neighbours on a shared machine move
    whole rounds together)."""
    lines = [
        f"{args.jobs:,} no-op jobs processed by {WORKERS} burst workers; {SUBMITS:,} submitted"
        f" one by one (`App.submit`); best of {args.repeat} rounds; pool_max"
        f" {args.pool_max or 'default'}",
        "",
        "| route | measure | jobs/s (best) | vs direct (median of rounds) |",
        "| --- | --- | ---: | ---: |",
    ]
    direct = rates["direct"]
    for route, found in rates.items():
        for row, values in found.items():
            ratios = [value / base for value, base in zip(values, direct[row], strict=True)]
            lines.append(
                f"| {route} | {row} | {max(values):,.0f} | {statistics.median(ratios):.2f}x |"
            )
    lines += [
        "",
        "| pickup latency, idle worker (`App.submit` to handler start) | p50 | p99 | max |",
        "| --- | ---: | ---: | ---: |",
    ]
    for route, latencies in pickups.items():
        lines.append(
            f"| {route} | {statistics.median(latencies):.2f} ms"
            f" | {percentile(latencies, 0.99):.2f} ms | {max(latencies):.2f} ms |"
        )
    return lines


def main() -> None:
    """Run every route and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--samples", type=int, default=100, help="pickup latency samples")
    parser.add_argument("--pool-max", type=int, default=0, help="0: the default pool")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--admin-db", default="test")
    args = parser.parse_args()
    print("\n".join(report(*measure(args), args)))


if __name__ == "__main__":
    main()
