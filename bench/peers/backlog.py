"""A 100,000-job backlog beside 10,000 jobs: `backroom worker` at its defaults, 1 process.

    python -m bench.peers.backlog [--small 10000] [--large 100000] [--rounds 3]
        [--stores postgres,sqlite] [--source SRC]

Each round, on each store: `--small` jobs queued in a fresh store and drained; then
`--large` in a fresh store, drained; then `--small` more queued beside the large run's
finished jobs and drained, and claims timed there (`--claims` claims of 100 from the
queue, through the store as a worker calls it) beside the same claims in a fresh store.
Rates are jobs over the first handler start to the last (as `bench.peers.run`); the
large run's rate is also given per tenth of its jobs, to say where a drop goes. On
PostgreSQL the `jobs` table's autovacuum settings and its count of autovacuum runs,
ANALYZEs (a worker's sweep runs them where autovacuum is off) and dead rows after the
large run are printed beside.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import time
from pathlib import Path
from typing import Any

import asyncpg

from backroom import App
from bench.peers.variants import Variant, drain, fill, store_options, stores
from bench.postgres_support import ROOT

STATS = """SELECT reloptions, n_live_tup, n_dead_tup, autovacuum_count, autoanalyze_count,
    analyze_count
FROM pg_class JOIN pg_stat_user_tables ON relid = pg_class.oid WHERE pg_class.relname = 'jobs'"""


def rate(ran: list[int]) -> float:
    """Jobs per second from the first start to the last."""
    return len(ran) / max((max(ran) - min(ran)) / 1e9, 1e-9)


def tenths(ran: list[int]) -> list[float]:
    """The rate of each tenth of the jobs, in the order they started."""
    size = len(ran) // 10
    return [rate(ran[first : first + size]) for first in range(0, size * 10, size)]


async def claim_ms(url: str, claims: int) -> float:
    """Median milliseconds of `claims` claims of 100 queued jobs."""
    timings = []
    async with App(url) as app:
        for _ in range(claims):
            started = time.perf_counter()
            await app.store.claim((), 100, "bench", 60_000, app.clock.now(), ("noop",))
            timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


async def table_stats(url: str) -> str:
    """The `jobs` table's autovacuum settings and counters (PostgreSQL)."""
    connection = await asyncpg.connect(url)
    try:
        row = await connection.fetchrow(STATS)
    finally:
        await connection.close()
    return ", ".join(f"{key}={value}" for key, value in dict(row or {}).items())


async def one_round(store: str, url: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """The figures of one round on one store."""
    variant = Variant(store, url, [], args.source)
    figures: dict[str, Any] = {"load": os.getloadavg()[0]}
    await fill(url, args.small, fresh=True)
    figures["small"] = rate((await drain(variant, args.small, folder))[0])
    await fill(url, args.small, fresh=True)
    figures["claim fresh"] = await claim_ms(url, args.claims)
    await fill(url, args.large, fresh=True)
    large = (await drain(variant, args.large, folder))[0]
    figures["large"], figures["tenths"] = rate(large), tenths(large)
    if store == "postgres":
        figures["stats"] = await table_stats(url)
    await fill(url, args.small, fresh=False)
    figures["small after large"] = rate((await drain(variant, args.small, folder))[0])
    await fill(url, args.small, fresh=False)
    figures["claim after large"] = await claim_ms(url, args.claims)
    return figures


async def run(args: argparse.Namespace) -> None:
    """Every round on every store; each round's figures printed as it ends."""
    async with contextlib.AsyncExitStack() as stack:
        folder, urls = await stores(stack, args, "backlog")
        for round_number in range(args.rounds):
            for store in args.stores.split(","):
                figures = await one_round(store, urls[store], args, folder)
                ratio = figures["large"] / figures["small"]
                tenths_text = " ".join(f"{value:,.0f}" for value in figures.pop("tenths"))
                print(f"round {round_number + 1} {store}: large/small {ratio:.2f}x {figures}")
                print(f"  per tenth of the large run: {tenths_text}", flush=True)


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--claims", type=int, default=20)
    store_options(parser)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
