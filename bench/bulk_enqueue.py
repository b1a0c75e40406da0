"""Bulk enqueue, 1,000 jobs a call, beside PgQueuer's, round by round in one run.

    python -m bench.bulk_enqueue [--jobs 10000] [--rounds 5]
        [--server postgresql://postgres@127.0.0.1:5432] [--admin-db test]

Each round, in alternating order: backroom `App.submit_many` on PostgreSQL, its jobs
built inside the timing (as PgQueuer's payload lists are) by `App.new_jobs` (one call,
the jobs held as columns) and by `App.new_job` per job; PgQueuer's `Queries.enqueue`
with lists (its defaults); backroom `submit_many` on SQLite (synchronous=FULL, the
default), both ways. Every system writes into an emptied table of its own scratch
database. Printed: each row's median jobs/s and spread, the median of the per-round
ratios to PgQueuer, and the load average of each round (the machine may be shared).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from backroom import App
from bench.postgres_peers import pgqueuer_enqueue, pgqueuer_install
from bench.postgres_support import BULK, Server, execute
from bench.postgres_throughput import BACKROOM_TABLES

PEER = "PgQueuer enqueue (PostgreSQL)"


async def submit_calls(app: App, jobs: int, *, columns: bool) -> float:
    """Seconds to submit `jobs` no-op jobs, 1,000 a call, built by `new_jobs` (one call
    a batch, `columns`) or by `new_job` per job."""
    started = time.perf_counter()
    for first in range(0, jobs, BULK):
        last = min(first + BULK, jobs)
        if columns:
            await app.submit_many(app.new_jobs("noop", range(first, last)))
        else:
            await app.submit_many([app.new_job("noop", n) for n in range(first, last)])
    return time.perf_counter() - started


async def sqlite_enqueue(folder: Path, jobs: int, *, columns: bool) -> float:
    """Seconds to submit `jobs` no-op jobs into a new SQLite file, 1,000 a call."""
    db = folder / f"bulk-{time.perf_counter_ns()}.db"
    async with App(f"sqlite:///{db}") as app:
        return await submit_calls(app, jobs, columns=columns)


async def postgres_enqueue(url: str, jobs: int, *, columns: bool) -> float:
    """Seconds to submit `jobs` no-op jobs into the emptied PostgreSQL database."""
    await execute(url, BACKROOM_TABLES)
    async with App(url) as app:
        return await submit_calls(app, jobs, columns=columns)


async def measure(
    server: Server, jobs: int, rounds: int
) -> tuple[dict[str, list[float]], list[float]]:
    """Jobs/s of each row, one figure per round; the load average after each round."""
    rates: dict[str, list[float]] = {}
    loads: list[float] = []
    async with (
        server.scratch("bulk_backroom") as backroom_url,
        server.scratch("bulk_pgqueuer") as peer_url,
    ):
        async with App(backroom_url):
            pass  # create the schema
        await pgqueuer_install(peer_url)
        with tempfile.TemporaryDirectory() as folder:
            rows: dict[str, Callable[[], Awaitable[float]]] = {
                "backroom new_jobs + submit_many (PostgreSQL)": lambda: postgres_enqueue(
                    backroom_url, jobs, columns=True
                ),
                "backroom new_job each + submit_many (PostgreSQL)": lambda: postgres_enqueue(
                    backroom_url, jobs, columns=False
                ),
                PEER: lambda: pgqueuer_enqueue(peer_url, jobs, bulk=True),
                "backroom new_jobs + submit_many (SQLite)": lambda: sqlite_enqueue(
                    Path(folder), jobs, columns=True
                ),
                "backroom new_job each + submit_many (SQLite)": lambda: sqlite_enqueue(
                    Path(folder), jobs, columns=False
                ),
            }
            for round_number in range(rounds):
                order = list(rows) if round_number % 2 == 0 else list(reversed(rows))
                for name in order:
                    rates.setdefault(name, []).append(jobs / await rows[name]())
                loads.append(os.getloadavg()[0])
    return rates, loads


def report(rates: dict[str, list[float]], loads: list[float], jobs: int) -> list[str]:
    """The markdown table of `measure`'s figures."""
    each = ", ".join(f"{load:.1f}" for load in loads)
    lines = [
        f"{jobs:,} no-op jobs, 1,000 a call, {len(rates[PEER])} rounds alternating;"
        f" load average after each round: {each}",
        "",
        "| row | jobs/s (median) | min - max | vs PgQueuer, same round (median) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, values in rates.items():
        ratios = [mine / peer for mine, peer in zip(values, rates[PEER], strict=True)]
        lines.append(
            f"| {name} | {statistics.median(values):,.0f} | {min(values):,.0f} -"
            f" {max(values):,.0f} | {statistics.median(ratios):.2f}x |"
        )
    return lines


def main() -> None:
    """Run the rounds and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--admin-db", default="test")
    args = parser.parse_args()
    rates, loads = asyncio.run(measure(Server(args.server, args.admin_db), args.jobs, args.rounds))
    print("\n".join(report(rates, loads, args.jobs)))


if __name__ == "__main__":
    main()
