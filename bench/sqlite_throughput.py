"""Submitting and processing 10,000 no-op jobs on SQLite (synchronous=FULL), side by side.

    python -m bench.sqlite_throughput [--jobs 10000] [--repeat 3]

Rows, all in one run on the same disk:
- backroom, enqueue in bulk (`submit_many`, 1,000 per call);
- backroom, processing with 1 and 2 `backroom worker --burst` processes (wall time from
  start to exit, and the processing window from the stored attempt times);
- huey (SqliteHuey, its defaults), enqueue one by one and one consumer loop;
- raw SQL, claiming and completing 100 jobs per transaction: the physical reference.
The best of `--repeat` runs is kept for each row.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from huey import SqliteHuey

from backroom import App
from backroom.store.sqlite.store import SqliteStore

ROOT = Path(__file__).resolve().parent.parent


def enqueue_backroom(db: Path, jobs: int) -> float:
    """Seconds to submit `jobs` no-op jobs with submit_many."""

    async def run() -> float:
        async with App(store=SqliteStore.from_url(f"sqlite:///{db}")) as app:
            batch = [app.new_job("noop", n) for n in range(jobs)]
            started = time.perf_counter()
            for first in range(0, jobs, 1000):
                await app.submit_many(batch[first : first + 1000])
            return time.perf_counter() - started

    return asyncio.run(run())


def processing_window(db: Path) -> float:
    """Seconds from the first attempt's start to the last one's end, as stored."""
    with sqlite3.connect(db) as connection:
        first, last = connection.execute(
            "SELECT MIN(started_at), MAX(finished_at) FROM attempts"
        ).fetchone()
    return float(last - first) / 1000


def process_backroom(db: Path, processes: int) -> tuple[float, float]:
    """(wall seconds, stored processing window) for `processes` burst workers."""
    command = [sys.executable, "-m", "backroom", "worker", "--app", "bench.noop_app:app"]
    options = ["--db", f"sqlite:///{db}", "--burst", "--concurrency", "200"]
    started = time.perf_counter()
    workers = [subprocess.Popen(command + options, cwd=ROOT) for _ in range(processes)]
    for worker in workers:
        if worker.wait() != 0:
            raise RuntimeError("a benchmark worker failed")
    return time.perf_counter() - started, processing_window(db)


def huey_run(db: Path, jobs: int) -> tuple[float, float]:
    """(enqueue seconds, processing seconds) for huey's SqliteHuey, one consumer loop."""
    huey = SqliteHuey(filename=str(db))

    @huey.task()  # type: ignore[untyped-decorator]  # huey ships no types
    def noop(payload: int) -> None:
        return None

    started = time.perf_counter()
    for n in range(jobs):
        noop(n)
    enqueued = time.perf_counter()
    while (task := huey.dequeue()) is not None:
        huey.execute(task)
    return enqueued - started, time.perf_counter() - enqueued


def raw_sql(db: Path, jobs: int, batch: int = 100) -> float:
    """Seconds to claim and complete `jobs` rows, `batch` per transaction, in plain SQL."""
    connection = sqlite3.connect(db, isolation_level=None)
    connection.executescript(
        """
        PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
        CREATE TABLE q (id INTEGER PRIMARY KEY, state TEXT, run_at INTEGER, payload TEXT);
        CREATE INDEX q_claim ON q (run_at, id) WHERE state = 'queued';
        """
    )
    connection.execute("BEGIN")
    connection.executemany(
        "INSERT INTO q (state, run_at, payload) VALUES ('queued', 0, ?)",
        ((str(n),) for n in range(jobs)),
    )
    connection.execute("COMMIT")
    started = time.perf_counter()
    while True:
        connection.execute("BEGIN IMMEDIATE")
        ids = connection.execute(
            "UPDATE q SET state = 'running' WHERE id IN (SELECT id FROM q "
            "WHERE state = 'queued' AND run_at <= 1 ORDER BY run_at, id LIMIT ?) RETURNING id",
            (batch,),
        ).fetchall()
        connection.execute("COMMIT")
        if not ids:
            break
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany("UPDATE q SET state = 'done' WHERE id = ?", ids)
        connection.execute("COMMIT")
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed


def best(repeat: int, measure: Callable[[Path], float]) -> float:
    """The smallest of `repeat` measurements, each on a fresh database file."""
    results = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as folder:
            results.append(measure(Path(folder) / "bench.db"))
    return min(results)


def main() -> None:
    """Run every row and print a markdown table of jobs/s and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    jobs, repeat = args.jobs, args.repeat

    def backroom_run(processes: int) -> Callable[[Path], float]:
        def measure(db: Path) -> float:
            enqueue_backroom(db, jobs)
            wall, _ = process_backroom(db, processes)
            return wall

        return measure

    def backroom_window(processes: int) -> Callable[[Path], float]:
        def measure(db: Path) -> float:
            enqueue_backroom(db, jobs)
            return process_backroom(db, processes)[1]

        return measure

    rows = {
        "backroom enqueue (submit_many)": best(repeat, lambda db: enqueue_backroom(db, jobs)),
        "backroom 1 worker process (wall, incl. start-up)": best(repeat, backroom_run(1)),
        "backroom 1 worker process (processing window)": best(repeat, backroom_window(1)),
        "backroom 2 worker processes (wall, incl. start-up)": best(repeat, backroom_run(2)),
        "backroom 2 worker processes (processing window)": best(repeat, backroom_window(2)),
        "huey SqliteHuey enqueue (one by one)": best(repeat, lambda db: huey_run(db, jobs)[0]),
        "huey SqliteHuey 1 consumer loop": best(repeat, lambda db: huey_run(db, jobs)[1]),
        "raw SQL, 100 jobs per transaction": best(repeat, lambda db: raw_sql(db, jobs)),
    }
    reference = jobs / rows["huey SqliteHuey 1 consumer loop"]
    print(f"{jobs:,} no-op jobs, SQLite synchronous=FULL, best of {repeat}\n")
    print("| row | jobs/s | vs huey consumer |")
    print("| --- | ---: | ---: |")
    for name, seconds in rows.items():
        rate = jobs / seconds
        print(f"| {name} | {rate:,.0f} | {rate / reference:.2f}x |")


if __name__ == "__main__":
    main()
