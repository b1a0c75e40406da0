"""Processing 10,000 no-op jobs on PostgreSQL beside PgQueuer, round by round, with WAL.

    python -m bench.postgres_processing [--jobs 10000] [--rounds 3] [--processes 1,2,4]
        [--server postgresql://postgres@127.0.0.1:5432] [--admin-db test] [--samples 100]

Then `--samples` pickups a round, as `bench.postgres_pickup` measures them (`--processes
''`: only those rounds; `--samples 0`: none).

Each round runs every system with each number of processes, in alternating order, on
a queue of `--jobs` jobs enqueued in bulk beforehand (VACUUM ANALYZE, CHECKPOINT, then
the run): backroom's `backroom worker --burst` at its defaults (and at `--concurrency
100`; with N > 1, N commands, and one command `--processes N` as well), PgQueuer
draining its queue at its defaults (batch 10) and with `batch_size=100`.
The rate is jobs over the processing window (the first start to the last end, as each
system stores them); the WAL per job is what the run wrote into its own database (see
`bench.postgres_wal`), with the server's whole WAL (others' work included) beside it;
the CPU per job is the worker processes' (start-up included) and their database's
backends' (`bench.process_cpu`). Printed: each row's median and spread, the median of
the same-round ratios to each PgQueuer row, the WAL per job by relation and record
type, and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial

import asyncpg

from backroom import App
from bench.postgres_peers import PGQUEUER_TABLES, pgqueuer_enqueue, pgqueuer_install
from bench.postgres_pickup import pickup_report, pickups
from bench.postgres_support import ROOT, Server, execute
from bench.postgres_throughput import (
    BACKROOM_TABLES,
    backroom_enqueue,
)
from bench.postgres_wal import WalUse, wal_position, wal_use
from bench.process_cpu import CpuUse, cpu_of

BACKROOM: dict[str, list[str]] = {
    "backroom defaults": [],
    "backroom concurrency 100": ["--concurrency", "100"],
}
FORKED = "backroom defaults, one command"
"""The defaults' row run as one `backroom worker --processes N` (N processes forked after
one import) rather than N commands; with 1 process it is the defaults' row."""
PGQUEUER = {"PgQueuer default": "10", "PgQueuer batch 100": "100"}


@dataclass
class Run:
    """One system's run: jobs/s over its processing window, its WAL and its CPU."""

    rate: float
    wal: WalUse
    cpu: CpuUse


@dataclass
class Rows:
    """Every run of every row, by row name."""

    runs: dict[str, list[Run]] = field(default_factory=dict)
    loads: list[float] = field(default_factory=list)


def start_all(commands: list[list[str]]) -> None:
    """Start the processes together; wait for each to exit successfully."""
    processes = [subprocess.Popen(command, cwd=ROOT) for command in commands]
    if any(process.wait() != 0 for process in processes):
        raise RuntimeError(f"a process failed: {commands[0]}")


async def measured(url: str, run: Callable[[], None], window: str, jobs: int) -> Run:
    """Run `run` in a thread between two WAL positions; `window` reads (seconds, done)."""
    await execute(url, "VACUUM ANALYZE", "CHECKPOINT")
    connection = await asyncpg.connect(url)
    try:
        start = await wal_position(connection)
        cpu = await asyncio.to_thread(cpu_of, run, url.rsplit("/", 1)[1])
        end = await wal_position(connection)
        row = await connection.fetchrow(window)
        assert row is not None
        if row["done"] != jobs:
            raise RuntimeError(f"expected {jobs} jobs done, found {row['done']}")
        return Run(jobs / float(row["seconds"]), await wal_use(connection, start, end), cpu)
    finally:
        await connection.close()


BACKROOM_WINDOW = (
    "SELECT (max(finished_at) - min(started_at)) / 1000.0 AS seconds, count(*) AS done"
    " FROM attempts"
)
PGQUEUER_WINDOW = (
    "SELECT extract(epoch FROM max(created) FILTER (WHERE status = 'successful')"
    " - min(created) FILTER (WHERE status = 'picked')) AS seconds,"
    " count(*) FILTER (WHERE status = 'successful') AS done FROM pgqueuer_log"
)


async def backroom_run(
    url: str, jobs: int, processes: int, *, options: list[str], fork: bool = False
) -> Run:
    await backroom_enqueue(url, jobs, bulk=True)
    command = [sys.executable, "-m", "backroom", "worker", "--app", "bench.noop_app:app"]
    command += ["--db", url, "--burst", *options]
    commands = [[*command, "--processes", str(processes)]] if fork else [command] * processes
    return await measured(url, lambda: start_all(commands), BACKROOM_WINDOW, jobs)


async def pgqueuer_run(url: str, jobs: int, processes: int, *, batch: str) -> Run:
    await pgqueuer_enqueue(url, jobs, bulk=True)  # into emptied tables, its log too
    command = [sys.executable, "-m", "bench.postgres_peers", url, batch]
    return await measured(url, lambda: start_all([command] * processes), PGQUEUER_WINDOW, jobs)


async def measure(server: Server, jobs: int, rounds: int, counts: list[int]) -> Rows:
    rows = Rows()
    async with (
        server.scratch("proc_backroom") as mine,
        server.scratch("proc_pgqueuer") as peer,
    ):
        async with App(mine):
            pass  # create the schema
        await pgqueuer_install(peer)
        systems: dict[str, Callable[[int], Awaitable[Run]]] = {
            **{name: partial(backroom_run, mine, jobs, options=o) for name, o in BACKROOM.items()},
            FORKED: partial(backroom_run, mine, jobs, options=[], fork=True),
            **{name: partial(pgqueuer_run, peer, jobs, batch=b) for name, b in PGQUEUER.items()},
        }
        for number in range(rounds):
            for processes in counts:
                order = list(systems) if number % 2 == 0 else list(reversed(systems))
                for name in order:
                    if name == FORKED and processes == 1:
                        continue
                    label = f"{name}, {processes} process{'es' if processes > 1 else ''}"
                    rows.runs.setdefault(label, []).append(await systems[name](processes))
                    rows.loads.append(os.getloadavg()[0])
        await execute(mine, BACKROOM_TABLES)
        await execute(peer, PGQUEUER_TABLES)
    return rows


def report(rows: Rows, jobs: int) -> list[str]:
    """Markdown: rates and ratios, then WAL per job."""
    loads, per_round = rows.loads, len(rows.runs)
    by_round = [loads[first : first + per_round] for first in range(0, len(loads), per_round)]
    lines = [
        f"{jobs:,} no-op jobs, {len(next(iter(rows.runs.values())))} rounds alternating;"
        f" load average {min(loads):.1f}-{max(loads):.1f} (median {statistics.median(loads):.1f};"
        f" by round: {', '.join(f'{min(part):.1f}-{max(part):.1f}' for part in by_round)})",
        "",
        "| row | jobs/s (median) | min - max | vs PgQueuer default | vs PgQueuer batch 100"
        " | WAL/job, its database | of which full pages | server WAL/job"
        " | CPU/job: workers (start-up included) | its backends |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, runs in rows.runs.items():
        processes = label.rsplit(", ", 1)[1]
        rates = [run.rate for run in runs]
        ratios = [_ratio(rates, rows.runs[f"{peer}, {processes}"]) for peer in PGQUEUER]
        lines.append(
            f"| {label} | {statistics.median(rates):,.0f} | {min(rates):,.0f} -"
            f" {max(rates):,.0f} | {ratios[0]} | {ratios[1]}"
            f" | {_median(runs, lambda w: w.database) / jobs:,.0f} B"
            f" | {_median(runs, lambda w: w.full_pages) / jobs:,.0f} B"
            f" | {statistics.median(run.wal.total for run in runs) / jobs:,.0f} B"
            f" | {statistics.median(run.cpu.workers for run in runs) * 1e6 / jobs:,.0f} us"
            f" | {statistics.median(run.cpu.backends for run in runs) * 1e6 / jobs:,.0f} us |"
        )
    return [*lines, "", *wal_detail(rows, jobs)]


def _ratio(rates: list[float], peer_runs: list[Run]) -> str:
    ratios = [mine / run.rate for mine, run in zip(rates, peer_runs, strict=True)]
    return f"{statistics.median(ratios):.2f}x"


def _median(runs: list[Run], part: Callable[[WalUse], int]) -> float:
    """The median over the runs whose WAL records were read (NaN if none were)."""
    known = [part(run.wal) for run in runs if run.wal.complete]
    return statistics.median(known) if known else float("nan")


def wal_detail(rows: Rows, jobs: int) -> list[str]:
    """Per single-process row, its database's WAL per job by relation and record type
    (bytes, and records per job), from its last run."""
    lines = []
    for label, runs in rows.runs.items():
        if not label.endswith(", 1 process"):
            continue
        complete = [run.wal for run in runs if run.wal.complete]
        if not complete:
            continue
        wal = complete[-1]
        lines += [f"WAL per job, {label}:", "", "| relation/record | bytes | records |"]
        lines.append("| --- | ---: | ---: |")
        for kind, size in Counter(wal.by_kind).most_common():
            lines.append(f"| {kind} | {size / jobs:,.1f} | {wal.count_by_kind[kind] / jobs:.2f} |")
        lines.append("")
    return lines


def main() -> None:
    """Run the rounds and print markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--admin-db", default="test")
    parser.add_argument("--samples", type=int, default=100, help="pickups a round (0: none)")
    args = parser.parse_args()
    counts = [int(part) for part in args.processes.split(",") if part]
    started = time.perf_counter()
    server = Server(args.server, args.admin_db)
    if counts:  # --processes '': the pickup rows alone
        rows = asyncio.run(measure(server, args.jobs, args.rounds, counts))
        print("\n".join(report(rows, args.jobs)))
    if args.samples:
        found = asyncio.run(pickups(server, args.rounds, args.samples))
        print("\n".join(pickup_report(found)), f"\nload average {os.getloadavg()[0]:.1f}")
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
