"""Where a PostgreSQL backlog's time goes, tenth by tenth: rows read and statements seen.

    python -m bench.peers.backlog_probe [--jobs 100000] [--explain-ms 0] [--source SRC]

`--jobs` no-op jobs are queued in a fresh scratch database and drained by `backroom
worker` at its defaults (as `bench.peers.backlog`). While it drains, the probe samples
`pg_stat_activity` every 10 ms (the worker's active statements and their wait events)
and snapshots the tables' and indexes' counters at each tenth of the jobs. Printed per
tenth: its rate, the statements seen most often, and the rows and pages read per job
from each table and index (a cost that grows with the queue's depth shows as a count
that falls tenth by tenth; one that grows with the jobs done, as one that rises).
`--explain-ms N` has the server log the plan of every statement over N ms in the
scratch database (auto_explain, set on that database only; read the server's log).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import asyncpg

from backroom.clock import SystemClock
from bench.peers import marks
from bench.peers.measure import start_worker, stop_worker
from bench.peers.variants import Variant, fill
from bench.postgres_support import ROOT, Server

COUNTERS = (
    "SELECT indexrelname AS name, idx_tup_read FROM pg_stat_user_indexes",
    "SELECT relname AS name, seq_tup_read, idx_scan FROM pg_stat_user_tables",
    """SELECT relname AS name, heap_blks_hit, heap_blks_read, idx_blks_hit
    FROM pg_statio_user_tables""",
)
FLUSH_MS = 1_500
"""How long the last snapshot waits: a session reports its counters once a second."""
ACTIVE = """SELECT wait_event_type, wait_event, query FROM pg_stat_activity
WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()"""


async def counters(connection: asyncpg.Connection[asyncpg.Record]) -> Counter[str]:
    """Every nonzero counter of every table and index, as `name.counter`."""
    await connection.execute("SELECT pg_stat_clear_snapshot()")
    values: Counter[str] = Counter()
    for query in COUNTERS:
        for row in await connection.fetch(query):
            for key, value in dict(row).items():
                if key != "name" and value:
                    values[f"{row['name']}.{key}"] = int(value)
    return values


def statement(row: asyncpg.Record) -> str:
    """A sampled statement: its wait event and the start of its text."""
    text = re.sub(r"\s+", " ", row["query"]).strip()[:70]
    return f"{row['wait_event_type']}/{row['wait_event']} | {text}"


async def watch(
    connection: asyncpg.Connection[asyncpg.Record],
    marks_file: Path,
    jobs: int,
    worker: subprocess.Popen[bytes],
) -> tuple[list[Counter[str]], list[Counter[str]]]:
    """Until `jobs` have started: the statements sampled and the counters, per tenth."""
    tenth, clock = jobs // 10, SystemClock()
    seen: list[Counter[str]] = [Counter() for _ in range(10)]
    snapshots = [await counters(connection)]
    while (done := marks.count(marks_file)) < jobs:
        if worker.poll() is not None:
            raise RuntimeError("the worker exited")
        while len(snapshots) <= min(done // tenth, 9):
            snapshots.append(await counters(connection))
        part = min(done // tenth, 9)
        seen[part]["(samples)"] += 1
        seen[part].update(statement(row) for row in await connection.fetch(ACTIVE))
        await clock.sleep(10)
    await clock.sleep(FLUSH_MS)
    snapshots.append(await counters(connection))
    return seen, [after - before for before, after in itertools.pairwise(snapshots)]


def report(ran: list[int], seen: list[Counter[str]], read: list[Counter[str]]) -> None:
    """Per tenth: the rate, the statements seen most, the counters per job."""
    tenth = len(ran) // 10
    for index in range(10):
        chunk = ran[index * tenth : (index + 1) * tenth]
        rate = len(chunk) / max((max(chunk) - min(chunk)) / 1e9, 1e-9)
        print(f"tenth {index + 1}: {rate:,.0f} jobs/s, {seen[index]['(samples)']} samples")
        for key, count in seen[index].most_common(6):
            if key != "(samples)":
                print(f"  {count:5d} {key}")
        top = read[index].most_common(12) if index < len(read) else []
        print("  per job: " + ", ".join(f"{key} {value / tenth:.1f}" for key, value in top))


async def run(args: argparse.Namespace) -> None:
    """Fill, drain under watch, report."""
    async with contextlib.AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="probe-")))
        url = await stack.enter_async_context(Server(args.server, args.admin_db).scratch("probe"))
        await fill(url, args.jobs, fresh=True)
        connection = await asyncpg.connect(url)
        stack.push_async_callback(connection.close)
        if args.explain_ms:
            database = url.rsplit("/", 1)[1]
            for setting in (
                "session_preload_libraries = 'auto_explain'",
                f"auto_explain.log_min_duration = '{args.explain_ms}ms'",
            ):
                await connection.execute(f'ALTER DATABASE "{database}" SET {setting}')
        marks_file, log = folder / "marks", folder / "worker.log"
        worker = start_worker(Variant("postgres", url, [], args.source), marks_file, log)
        try:
            seen, read = await watch(connection, marks_file, args.jobs, worker)
        finally:
            stop_worker(worker)
        report(marks.read(marks_file)[: args.jobs], seen, read)


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--explain-ms", type=int, default=0)
    parser.add_argument("--source", default="", help="run this copy of src/ (default: installed)")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--admin-db", default="test")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
