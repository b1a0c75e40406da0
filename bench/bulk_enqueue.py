"""Bulk enqueue, 1,000 jobs a call, beside PgQueuer's, round by round in one run.

    python -m bench.bulk_enqueue [--jobs 10000] [--rounds 5]
        [--server postgresql://postgres@127.0.0.1:5432] [--admin-db test]

Each round, in alternating order: backroom `App.submit_many` on PostgreSQL, its jobs
built inside the timing (as PgQueuer's payload lists are) by `App.new_jobs` (one call,
the jobs held as columns) and by `App.new_job` per job; PgQueuer's `Queries.enqueue`
with lists (its defaults); backroom `submit_many` on SQLite (synchronous=FULL, the
default), both ways. Every system writes into an emptied table of its own scratch
database. Printed: each row's median jobs/s and spread, the median of the per-round
ratios to PgQueuer, the CPU per job of the submitting process and of the database's
backends (`bench.cpu_meter`; SQLite's is all in the process) and its ratio to
PgQueuer's, and the load average of each round (the machine may be shared).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path

from backroom import App
from bench.cpu_meter import CpuMeter
from bench.postgres_peers import pgqueuer_enqueue, pgqueuer_install
from bench.postgres_support import BULK, Server, execute
from bench.postgres_throughput import BACKROOM_TABLES

PEER = "PgQueuer enqueue (PostgreSQL)"


async def submit_calls(app: App, jobs: int, meter: CpuMeter, *, columns: bool) -> float:
    """Seconds to submit `jobs` no-op jobs, 1,000 a call, built by `new_jobs` (one call
    a batch, `columns`) or by `new_job` per job; the CPU it took added to `meter`."""
    await meter.start()
    started = time.perf_counter()
    for first in range(0, jobs, BULK):
        last = min(first + BULK, jobs)
        if columns:
            await app.submit_many(app.new_jobs("noop", range(first, last)))
        else:
            await app.submit_many([app.new_job("noop", n) for n in range(first, last)])
    seconds = time.perf_counter() - started
    await meter.stop()
    return seconds


async def sqlite_enqueue(folder: Path, jobs: int, meter: CpuMeter, *, columns: bool) -> float:
    """Seconds to submit `jobs` no-op jobs into a new SQLite file, 1,000 a call."""
    db = folder / f"bulk-{time.perf_counter_ns()}.db"
    async with App(f"sqlite:///{db}") as app:
        return await submit_calls(app, jobs, meter, columns=columns)


async def postgres_enqueue(url: str, jobs: int, meter: CpuMeter, *, columns: bool) -> float:
    """Seconds to submit `jobs` no-op jobs into the emptied PostgreSQL database."""
    await execute(url, BACKROOM_TABLES)
    async with App(url) as app:
        return await submit_calls(app, jobs, meter, columns=columns)


ROWS = {
    "backroom new_jobs + submit_many (PostgreSQL)": ("postgres", True),
    "backroom new_job each + submit_many (PostgreSQL)": ("postgres", False),
    PEER: ("pgqueuer", True),
    "backroom new_jobs + submit_many (SQLite)": ("sqlite", True),
    "backroom new_job each + submit_many (SQLite)": ("sqlite", False),
}
"""Each row: the system and store, and whether its jobs are built as columns."""


@dataclass
class Figures:
    """A row's jobs/s in each round, and the CPU all its rounds took (see `CpuMeter`)."""

    rates: list[float]
    meter: CpuMeter


async def measure(server: Server, jobs: int, rounds: int) -> tuple[dict[str, Figures], list[float]]:
    """Each row's figures; the load average after each round."""
    loads: list[float] = []
    async with (
        server.scratch("bulk_backroom") as backroom_url,
        server.scratch("bulk_pgqueuer") as peer_url,
    ):
        async with App(backroom_url):
            pass  # create the schema
        await pgqueuer_install(peer_url)
        urls = {"postgres": backroom_url, "pgqueuer": peer_url, "sqlite": None}
        figures = {name: Figures([], CpuMeter(urls[kind])) for name, (kind, _) in ROWS.items()}
        with tempfile.TemporaryDirectory() as folder:

            def run(name: str) -> Awaitable[float]:
                kind, columns = ROWS[name]
                meter = figures[name].meter
                if kind == "pgqueuer":
                    return pgqueuer_enqueue(peer_url, jobs, bulk=True, meter=meter)
                if kind == "sqlite":
                    return sqlite_enqueue(Path(folder), jobs, meter, columns=columns)
                return postgres_enqueue(backroom_url, jobs, meter, columns=columns)

            for round_number in range(rounds):
                order = list(ROWS) if round_number % 2 == 0 else list(reversed(ROWS))
                for name in order:
                    figures[name].rates.append(jobs / await run(name))
                loads.append(os.getloadavg()[0])
    return figures, loads


def report(figures: dict[str, Figures], loads: list[float], jobs: int) -> list[str]:
    """The markdown table of `measure`'s figures."""
    each = ", ".join(f"{load:.1f}" for load in loads)
    peer = figures[PEER]
    peer_cpu = (peer.meter.client + peer.meter.server) / len(peer.rates) / jobs
    lines = [
        f"{jobs:,} no-op jobs, 1,000 a call, {len(peer.rates)} rounds alternating;"
        f" load average after each round: {each}",
        "",
        "| row | jobs/s (median) | min - max | vs PgQueuer, same round (median)"
        " | client / server CPU per job | CPU vs PgQueuer's |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in figures.items():
        ratios = [mine / theirs for mine, theirs in zip(row.rates, peer.rates, strict=True)]
        spans = len(row.rates) * jobs
        client, server = row.meter.client / spans, row.meter.server / spans
        lines.append(
            f"| {name} | {statistics.median(row.rates):,.0f} | {min(row.rates):,.0f} -"
            f" {max(row.rates):,.0f} | {statistics.median(ratios):.2f}x"
            f" | {client * 1e6:.1f} / {server * 1e6:.1f} us"
            f" | {peer_cpu / (client + server):.2f}x |"
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
    figures, loads = asyncio.run(
        measure(Server(args.server, args.admin_db), args.jobs, args.rounds)
    )
    print("\n".join(report(figures, loads, args.jobs)))


if __name__ == "__main__":
    main()
