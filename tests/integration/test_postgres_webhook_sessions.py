"""PostgreSQL terminates every session of the delivery workers mid-delivery.

Two real `backroom worker` processes on a PostgreSQL schema of the test's own deliver
`job.succeeded` webhooks to a loopback receiver. While the receiver holds one request
(a worker is mid-delivery), the server terminates all their sessions (what an
operator's `pg_terminate_backend` or a failover does; the server is shared, so it is
not restarted). Every event is still delivered, any repeat under the same
`webhook-id`; no delivery is lost, events that come after are delivered too, and the
workers keep running until SIGTERM, which they obey with exit code 0.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
from deadline_polls import wait_until
from postgres_schemas import scratch_schema
from standardwebhooks import Webhook
from webhook_processes import all_succeeded, deliveries, start_worker, stop, submit, subscribe
from webhook_receiver import Answer, receiver

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
JOBS = 10


@pytest.fixture
def db_url(postgres_url: str) -> Iterator[str]:
    """A PostgreSQL schema of this test's own."""
    with scratch_schema(postgres_url) as url:
        yield url


def terminate_worker_sessions(db_url: str) -> int:
    """Terminate every `backroom` session on the test's database; how many there were.

    The test opens its own stores only for a moment (none is open here), and the
    database is this test session's alone, so only the workers' sessions are hit."""

    async def run() -> int:
        connection = await asyncpg.connect(db_url)
        try:
            terminated = await connection.fetchval(
                "SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name = 'backroom' "
                "AND pid <> pg_backend_pid()"
            )
        finally:
            await connection.close()
        assert isinstance(terminated, int)
        return terminated

    return asyncio.run(run())


def test_deliveries_survive_the_server_terminating_the_workers_sessions(
    db_url: str, tmp_path: Path
) -> None:
    release = threading.Event()
    with receiver() as hooks:
        url = hooks.script("/hooks", Answer(200, hold=release), Answer(200))
        secret = subscribe(db_url, url)
        job_ids = submit(db_url, JOBS)
        workers = [
            start_worker(db_url, tmp_path / f"worker-{n}.log", "--lease", "2") for n in range(2)
        ]
        try:
            hooks.wait_for("/hooks", 1, 60)
            terminated = terminate_worker_sessions(db_url)
            release.set()
            job_ids += submit(db_url, JOBS, first=JOBS)
            wait_until(lambda: all_succeeded(db_url, job_ids), "every delivery to succeed", 120)
            running = [worker.poll() is None for worker in workers]
        finally:
            release.set()
            codes = [stop(worker) for worker in workers]
        requests = hooks.at("/hooks")

    logs = "\n".join(log.read_text() for log in sorted(tmp_path.glob("worker-*.log")))
    assert terminated >= 2, terminated
    assert running == [True, True], logs
    assert codes == [0, 0], logs
    jobs_by_id: dict[str, set[int]] = defaultdict(set)
    for request in requests:
        body = Webhook(secret).verify(request.body, request.headers)
        jobs_by_id[request.headers["webhook-id"]].add(body["data"]["job_id"])
    assert all(len(jobs) == 1 for jobs in jobs_by_id.values()), jobs_by_id
    assert sorted(job for jobs in jobs_by_id.values() for job in jobs) == sorted(job_ids)
    stored = {items[0]["webhook_id"] for items in deliveries(db_url, job_ids).values()}
    assert stored == set(jobs_by_id)
