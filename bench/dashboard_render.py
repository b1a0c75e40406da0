"""The dashboard's pages and the metrics scrape on 1,000,000 jobs: their server time.

    python -m bench.dashboard_render [--jobs 1000000] [--rounds 20] [--postgres URL]

Fills a fresh SQLite file (and, given a server, a fresh PostgreSQL database) with
`--jobs` jobs in one bulk statement: 30 days of history over 3 queues, 19 tenants and 7
tasks (90% succeeded, 5% failed with one of 3 error classes, 2% cancelled, 2% queued,
1% running). Then it asks the dashboard, in process over ASGI (the time is the server's:
no network, no browser), for each page `--rounds` times as the admin and as one tenant,
and prints the median and the 95th percentile. The JSON job listing `GET /v1/jobs` is
measured beside it as the baseline: the pages cost this many times one API page.
Last, `GET /metrics` as Prometheus scrapes it (its store reads: one grouped pass over
the jobs), and beside it `stats()`, the second pass a scrape made before it.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx

from backroom import App
from backroom.api import ApiSettings, create_api
from backroom.clock import SystemClock
from backroom.service.api_keys import issue_key
from bench.postgres_support import Server
from bench.sqlite_bulk import fill_sqlite

ADMIN_KEY = "br_bench-admin-key"
TENANT = "tenant-7"
PAGES = (
    ("overview", "/dashboard/overview"),
    ("jobs", "/dashboard/jobs"),
    ("jobs, failed", "/dashboard/jobs?state=failed"),
    ("jobs, page 2", "/dashboard/jobs?cursor=999000"),
    ("dead letters", "/dashboard/dead-letters"),
    ("job", "/dashboard/jobs/999008"),
    ("API baseline", "/v1/jobs"),
)
DAY_MS = 86_400_000

# One statement: the same distribution as `fill_sqlite`, written in PostgreSQL.
POSTGRES_FILL = """
INSERT INTO jobs (tenant, task, queue, state, input, max_attempts, attempt, run_at,
                  created_at, updated_at, started_at, finished_at, error_kind,
                  error_message, worker_id, lease_expires_at, metadata)
SELECT 'tenant-' || (i % 19), 'task-' || (i % 7),
       (ARRAY['interactive', 'batch', 'reports'])[1 + i % 3],
       s.state, '{"n": ' || i || '}', 3, CASE WHEN s.state = 'queued' THEN 0 ELSE 1 END,
       c.created, c.created, c.created, c.created + 100,
       CASE WHEN s.state IN ('succeeded', 'failed', 'cancelled') THEN c.created + 2000 END,
       CASE WHEN s.state = 'failed'
            THEN (ARRAY['TimeoutError', 'RateLimited', 'ValueError'])[1 + i % 3] END,
       CASE WHEN s.state = 'failed' THEN 'failure number ' || i END,
       CASE WHEN s.state = 'running' THEN 'worker-' || (i % 8) END,
       CASE WHEN s.state = 'running' THEN $2::bigint + 30000 END,
       '{}'
FROM generate_series(1, $1::bigint) AS i
CROSS JOIN LATERAL (SELECT $2::bigint - 2592000000 + (i * (2592000000 / $1::bigint))
                    AS created) AS c
CROSS JOIN LATERAL (SELECT CASE
    WHEN i % 100 < 90 THEN 'succeeded' WHEN i % 100 < 95 THEN 'failed'
    WHEN i % 100 < 97 THEN 'cancelled' WHEN i % 100 < 99 THEN 'queued'
    ELSE 'running' END AS state) AS s
"""


@dataclass(frozen=True)
class Timing:
    """One page's server times, in milliseconds."""

    page: str
    viewer: str
    median: float
    p95: float


async def _session(http: httpx.AsyncClient, key: str) -> None:
    form = await http.get("/dashboard/login")
    token = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert token is not None
    answer = await http.post("/dashboard/login", data={"csrf": token.group(1), "api_key": key})
    assert answer.status_code == 303, answer.text


async def _measure(app: App, key: str, viewer: str, rounds: int) -> list[Timing]:
    api = create_api(app, ApiSettings(admin_key=ADMIN_KEY))
    transport = httpx.ASGITransport(api)
    timings = []
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
        await _session(http, key)
        for name, path in PAGES:
            headers = {"Authorization": f"Bearer {key}"} if path.startswith("/v1") else {}

            async def ask(path: str = path, headers: dict[str, str] = headers) -> None:
                response = await http.get(path, headers=headers)
                assert response.status_code == 200, (path, response.status_code)

            timings.append(await _timed(name, viewer, rounds, ask))
    return timings


async def measure_scrape(url: str, rounds: int) -> list[Timing]:
    """`/metrics` as Prometheus scrapes it, its one grouped pass over the jobs alone
    (`job_counts()`), and the pass it no longer makes (`stats()`, which it ran first)."""
    async with App(url) as app:
        api = create_api(app, ApiSettings(admin_key=ADMIN_KEY))
        transport = httpx.ASGITransport(api)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:

            async def scrape() -> None:
                response = await http.get("/metrics")
                assert response.status_code == 200, response.status_code

            async def one_pass() -> None:
                await app.store.job_counts(app.clock.now())

            async def second_pass() -> None:
                await app.store.stats(app.clock.now())

            return [
                await _timed("metrics scrape", "scraper", rounds, scrape),
                await _timed("job_counts()", "scraper", rounds, one_pass),
                await _timed("stats() (gone)", "scraper", rounds, second_pass),
            ]


async def _timed(
    name: str, viewer: str, rounds: int, call: Callable[[], Awaitable[None]]
) -> Timing:
    times = []
    for _ in range(rounds + 1):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    times = sorted(times[1:])  # the first warms caches
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    return Timing(name, viewer, statistics.median(times), p95)


async def measure_store(url: str, rounds: int) -> list[Timing]:
    """Every page's times on the store at `url`, as the admin and as one tenant."""
    async with App(url) as app:
        _, key = await issue_key(app, TENANT)
        return await _measure(app, ADMIN_KEY, "admin", rounds) + await _measure(
            app, key, TENANT, rounds
        )


async def fill_postgres(url: str, jobs: int) -> float:
    """Migrate and fill the database at `url`; the seconds the fill took."""
    async with App(url):
        pass  # migrates
    connection = await asyncpg.connect(url)
    try:
        started = time.perf_counter()
        await connection.execute(POSTGRES_FILL, jobs, SystemClock().now())
        await connection.execute("ANALYZE jobs")
        return time.perf_counter() - started
    finally:
        await connection.close()


def report(backend: str, jobs: int, fill_s: float, timings: list[Timing]) -> None:
    """Print one backend's table."""
    print(f"\n{backend}: {jobs:,} jobs (bulk fill {fill_s:.1f} s)")
    print(f"{'page':<16}{'viewer':<10}{'median ms':>10}{'p95 ms':>9}{'x API':>8}")
    baseline = {t.viewer: t.median for t in timings if t.page == "API baseline"}
    for timing in timings:
        ratio = timing.median / baseline.get(timing.viewer, timing.median)
        print(
            f"{timing.page:<16}{timing.viewer:<10}{timing.median:>10.1f}{timing.p95:>9.1f}"
            f"{ratio:>8.1f}"
        )


async def main(jobs: int, rounds: int, postgres: str | None) -> None:
    """Fill, measure and report each backend."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dashboard.db"
        async with App(f"sqlite:///{path}"):
            pass  # migrates
        fill_s = fill_sqlite(path, jobs, SystemClock().now())
        url = f"sqlite:///{path}"
        timings = await measure_store(url, rounds) + await measure_scrape(url, rounds)
        report("SQLite", jobs, fill_s, timings)
    if postgres is not None:
        server = Server(postgres, "postgres")
        async with server.scratch("bench_dashboard") as url:
            fill_s = await fill_postgres(url, jobs)
            timings = await measure_store(url, rounds) + await measure_scrape(url, rounds)
            report("PostgreSQL", jobs, fill_s, timings)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--postgres", default=None, help="a server URL, e.g. postgresql://root@127.0.0.1:5432"
    )
    arguments = parser.parse_args()
    asyncio.run(main(arguments.jobs, arguments.rounds, arguments.postgres))
