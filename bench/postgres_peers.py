"""The peers of `bench.postgres_throughput`: PgQueuer, raw asyncpg and pgbench.

python -m bench.postgres_peers URL [BATCH]    (a PgQueuer worker draining the queue at URL,
                                            BATCH jobs a fetch: 10 by default, PgQueuer's)
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit

import asyncpg
from pgqueuer import AsyncpgDriver, Queries, QueueManager
from pgqueuer.domain.types import QueueExecutionMode

from backroom.clock import SystemClock
from bench.cpu_meter import CpuMeter
from bench.postgres_support import BULK, execute, fetch_one, run_process, timed

PGBENCH_SECONDS = 5


# -- PgQueuer ---------------------------------------------------------------------------

PGQUEUER_TABLES = "TRUNCATE pgqueuer, pgqueuer_log, pgqueuer_statistics"


async def pgqueuer_install(url: str) -> None:
    connection = await asyncpg.connect(url)
    try:
        await Queries(AsyncpgDriver(connection)).install()
    finally:
        await connection.close()


async def pgqueuer_enqueue(
    url: str, jobs: int, *, bulk: bool, meter: CpuMeter | None = None
) -> float:
    """Seconds to enqueue `jobs` no-op jobs into an emptied queue (the CPU it took added
    to `meter`)."""
    await execute(url, PGQUEUER_TABLES)
    connection = await asyncpg.connect(url)
    queries = Queries(AsyncpgDriver(connection))

    async def enqueue_all() -> None:
        if not bulk:
            for n in range(jobs):
                await queries.enqueue("noop", str(n).encode())
            return
        for first in range(0, jobs, BULK):
            count = min(BULK, jobs - first)
            payloads: list[bytes | None] = [str(first + n).encode() for n in range(count)]
            await queries.enqueue(["noop"] * count, payloads, [0] * count)

    try:
        if meter is None:
            return await timed(enqueue_all())
        await meter.start()
        seconds = await timed(enqueue_all())
        await meter.stop()
        return seconds
    finally:
        await connection.close()


async def pgqueuer_process(url: str, jobs: int) -> tuple[float, float]:
    """(wall seconds, processing window seconds) for one PgQueuer process draining `jobs`."""
    await pgqueuer_enqueue(url, jobs, bulk=True)
    await execute(url, "VACUUM ANALYZE pgqueuer")
    wall = run_process([sys.executable, "-m", "bench.postgres_peers", url])
    window = await fetch_one(
        url,
        "SELECT extract(epoch FROM max(created) FILTER (WHERE status = 'successful')"
        " - min(created) FILTER (WHERE status = 'picked')) AS seconds,"
        " count(*) FILTER (WHERE status = 'successful') AS done FROM pgqueuer_log",
    )
    if window["done"] != jobs:
        raise RuntimeError(f"expected {jobs} PgQueuer jobs done, found {window['done']}")
    return wall, float(window["seconds"])


async def pgqueuer_worker(url: str, batch_size: int = 10) -> None:
    """The PgQueuer worker process: its defaults (but `batch_size`), draining the queue,
    then exiting."""
    connection = await asyncpg.connect(url)
    manager = QueueManager(Queries(AsyncpgDriver(connection)))

    @manager.entrypoint("noop")
    async def noop(job: object) -> None:
        return None

    await manager.run(batch_size=batch_size, mode=QueueExecutionMode.drain)


# -- the physical reference -------------------------------------------------------------

RAW_SCHEMA = """
DROP TABLE IF EXISTS q;
CREATE TABLE q (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, state TEXT NOT NULL,
                run_at BIGINT NOT NULL, payload TEXT NOT NULL);
CREATE INDEX q_claim ON q (run_at, id) WHERE state = 'queued';
"""
RAW_INSERT = (
    "INSERT INTO q (state, run_at, payload) SELECT 'queued', 0, payload FROM unnest($1::text[])"
    " AS payload"
)
RAW_CLAIM = """
UPDATE q SET state = 'running' WHERE id = ANY (ARRAY(
    SELECT id FROM q WHERE state = 'queued' AND run_at <= 1 ORDER BY run_at, id
    LIMIT $1 FOR UPDATE SKIP LOCKED))
RETURNING id
"""
RAW_COMPLETE = "UPDATE q SET state = 'done' WHERE id = ANY ($1::bigint[])"


async def raw_insert(url: str, jobs: int) -> float:
    """Seconds to insert `jobs` rows, 1,000 per statement and transaction."""
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(RAW_SCHEMA)
        payloads = [str(n) for n in range(jobs)]

        async def insert_all() -> None:
            for first in range(0, jobs, BULK):
                await connection.execute(RAW_INSERT, payloads[first : first + BULK])

        return await timed(insert_all())
    finally:
        await connection.close()


async def raw_claim_and_complete(url: str, jobs: int, batch: int = 100) -> float:
    """Seconds to claim and complete `jobs` rows, `batch` per transaction."""
    await raw_insert(url, jobs)
    connection = await asyncpg.connect(url)
    try:

        async def drain() -> None:
            while claimed := await connection.fetch(RAW_CLAIM, batch):
                await connection.execute(RAW_COMPLETE, [row["id"] for row in claimed])

        return await timed(drain())
    finally:
        await connection.close()


RAW_CHANNEL = "raw_pickup"
RAW_SUBMIT = f"""
WITH new AS (INSERT INTO q (state, run_at, payload) VALUES ('queued', 0, $1) RETURNING id)
SELECT pg_notify('{RAW_CHANNEL}', '') FROM new
"""


async def raw_pickup(url: str, samples: int) -> list[float]:
    """Milliseconds from an INSERT with NOTIFY to the SKIP LOCKED claim of the new row.

    One process, three connections (submitter, listener, claimer): the floor under the
    pickup latency of any PostgreSQL queue on this machine.
    """
    submitter, listener, claimer = [await asyncpg.connect(url) for _ in range(3)]
    heard = asyncio.Event()
    clock = SystemClock()
    latencies: list[float] = []
    try:
        await submitter.execute(RAW_SCHEMA)
        await listener.add_listener(RAW_CHANNEL, lambda *_: heard.set())
        for _ in range(samples):
            await clock.sleep(20)
            heard.clear()
            started = time.perf_counter()
            await submitter.fetch(RAW_SUBMIT, "pickup")
            await heard.wait()
            if len(await claimer.fetch(RAW_CLAIM, 1)) != 1:
                raise RuntimeError("the raw claim found no row")
            latencies.append((time.perf_counter() - started) * 1000)
    finally:
        for connection in (submitter, listener, claimer):
            await connection.close()
    return latencies


PGBENCH_UPDATE = """\\set aid random(1, 100000 * :scale)
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
"""


def pgbench_tps(url: str, clients: int) -> float:
    """pgbench's single-row UPDATE transactions per second with `clients` connections."""
    parts = urlsplit(url)
    target = [
        f"--host={parts.hostname}",
        f"--port={parts.port or 5432}",
        f"--username={parts.username}",
    ]
    database = parts.path.lstrip("/")
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as script:
        script.write(PGBENCH_UPDATE)
        script.flush()
        output = subprocess.run(
            [
                "pgbench",
                *target,
                "--no-vacuum",
                f"--file={script.name}",
                f"--client={clients}",
                f"--jobs={min(clients, os.cpu_count() or 1)}",
                f"--time={PGBENCH_SECONDS}",
                database,
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    found = re.search(r"tps = ([\d.]+)", output)
    if found is None:
        raise RuntimeError(f"no tps in pgbench's output:\n{output}")
    return float(found[1])


def pgbench_init(url: str) -> None:
    parts = urlsplit(url)
    subprocess.run(
        [
            "pgbench",
            f"--host={parts.hostname}",
            f"--port={parts.port or 5432}",
            f"--username={parts.username}",
            "--initialize",
            "--quiet",
            parts.path.lstrip("/"),
        ],
        check=True,
        capture_output=True,
    )


if __name__ == "__main__":
    asyncio.run(pgqueuer_worker(sys.argv[1], *map(int, sys.argv[2:3])))
