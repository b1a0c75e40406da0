"""POST /v1/jobs:batch (1,000 jobs a request) beside POST /v1/jobs, one server process.

    .venv/bin/python -m bench.api_batch [--seconds 5] [--rounds 3] [--postgres URL]

`backroom serve --no-worker` on SQLite (synchronous=FULL), and on PostgreSQL when
`--postgres` names a server (a scratch database is made and dropped). Each round, in
alternating order: single submissions over 32 keep-alive connections (each with its
own Idempotency-Key; the figure of `bench.api_throughput`), then batches of 1,000 jobs
over 4 connections (each job with its own key). Printed: jobs/s medians, the same-round
ratio batch / single, the server process's CPU time per batch job (the rate it would
reach on a core of its own, with the database's own work on PostgreSQL not counted),
and the load average (the machine may be shared).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.api_servers import HOST, Server, load, start_backroom
from bench.postgres_support import Server as PostgresServer

BATCH = 1_000
_numbers = itertools.count()


def batch_request(key: str) -> bytes:
    """One POST /v1/jobs:batch request of `BATCH` no-op jobs, each with a fresh key."""
    first = next(_numbers) * BATCH
    jobs = [
        {"task": "demo.noop", "input": {"n": n}, "idempotency_key": f"batch-{n}"}
        for n in range(first, first + BATCH)
    ]
    body = json.dumps({"jobs": jobs}, separators=(",", ":")).encode()
    head = (
        f"POST /v1/jobs:batch HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def batch_loop(port: int, key: str, stop_at: float) -> int:
    """Send batches one after another on one keep-alive connection; jobs created."""
    reader, writer = await asyncio.open_connection(HOST, port)
    created = 0
    try:
        while time.perf_counter() < stop_at:
            writer.write(batch_request(key))
            head = await reader.readuntil(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 200"):
                raise SystemExit(f"unexpected answer: {head[:80]!r}")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            answer = json.loads(await reader.readexactly(length))
            created += sum(1 for entry in answer["results"] if entry["status"] == 202)
    finally:
        writer.close()
    return created


async def batch_load(port: int, key: str, seconds: float, connections: int) -> float:
    """Jobs created per second over `connections` connections for `seconds`."""
    began = time.perf_counter()
    stop_at = began + seconds
    done = await asyncio.gather(*(batch_loop(port, key, stop_at) for _ in range(connections)))
    return sum(done) / (time.perf_counter() - began)


@contextmanager
def serving(db: str) -> Iterator[Server]:
    server = start_backroom(Path(), worker=False, db=db)
    try:
        yield server
    finally:
        server.stop()


def rounds(server: Server, seconds: float, count: int) -> dict[str, list[float]]:
    """Jobs/s of single and batch submissions, alternating, `count` rounds; and the
    server process's CPU time per batch job, in microseconds (`batch_cpu_us`)."""
    asyncio.run(batch_load(server.port, server.key, 1.0, 4))  # warm-up
    rates: dict[str, list[float]] = {"single": [], "batch": [], "batch_cpu_us": []}
    start = 10**8
    for number in range(count):
        order = ["single", "batch"] if number % 2 == 0 else ["batch", "single"]
        for kind in order:
            if kind == "single":
                start += 10**7
                rate = asyncio.run(load(server.port, server.key, seconds, 32, start))
            else:
                cpu = server.cpu_seconds()
                began = time.perf_counter()
                rate = asyncio.run(batch_load(server.port, server.key, seconds, 4))
                jobs = rate * (time.perf_counter() - began)
                rates["batch_cpu_us"].append((server.cpu_seconds() - cpu) / jobs * 1e6)
            rates[kind].append(rate)
    return rates


def report(store: str, rates: dict[str, list[float]]) -> str:
    ratios = [batch / single for batch, single in zip(rates["batch"], rates["single"], strict=True)]
    cpu_us = statistics.median(rates["batch_cpu_us"])
    return (
        f"| {store} | {statistics.median(rates['single']):,.0f} |"
        f" {statistics.median(rates['batch']):,.0f} ({min(rates['batch']):,.0f} -"
        f" {max(rates['batch']):,.0f}) | {statistics.median(ratios):.1f}x |"
        f" {cpu_us:.0f} us ({1e6 / cpu_us:,.0f} jobs/s) |"
    )


async def _scratch_run(postgres: str, admin_db: str, seconds: float, count: int) -> str:
    async with PostgresServer(postgres, admin_db).scratch("bench_batch") as url:
        return await asyncio.to_thread(lambda: _measure_at(url, "PostgreSQL", seconds, count))


def _measure_at(db: str, store: str, seconds: float, count: int) -> str:
    with serving(db) as server:
        return report(store, rounds(server, seconds, count))


def main() -> None:
    """Measure on SQLite (and PostgreSQL) and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", help="a server URL, e.g. postgresql://postgres@127.0.0.1")
    parser.add_argument("--admin-db", default="test")
    args = parser.parse_args()
    lines = [
        "| store | single POST /v1/jobs, jobs/s | batch of 1,000, jobs/s | batch / single"
        " | server CPU per batch job (jobs per CPU-second) |"
    ]
    lines.append("| --- | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as folder:
        sqlite = f"sqlite:///{Path(folder) / 'bench.db'}"
        lines.append(_measure_at(sqlite, "SQLite", args.seconds, args.rounds))
    if args.postgres:
        lines.append(
            asyncio.run(_scratch_run(args.postgres, args.admin_db, args.seconds, args.rounds))
        )
    load = os.getloadavg()[0]
    print(f"{args.rounds} rounds alternating, one server process; load average {load:.2f}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
