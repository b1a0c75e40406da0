"""The worker path's statements read what they need, whatever the tables' statistics,
and a lease sweep keeps the statistics where autovacuum does not.

A server with autovacuum off never analyzes the tables, and a plan made from no
statistics once read every queued job for each claim (a sort for one tenant's name)
and every job for each batch of the event feed the webhook dispatcher reads. Each test
fills a table it never analyzes and asserts on the rows each plan node read
(EXPLAIN ANALYZE, counts not times). A finish that joined its batch to `jobs` and
`attempts` through a CTE alone read both tables whole once some thousands of jobs had
run, analyzed or not: `test_postgres_finish_plans` reads its plans.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any

import asyncpg
import pytest
from postgres_schemas import scratch_schema
from postgres_store_support import MINUTE, T0, due_job, migrated

from backroom.core.job import DEFAULT_QUEUE, DEFAULT_TENANT
from backroom.core.outcome import Succeeded
from backroom.store.postgres import feed, leases
from backroom.store.postgres.database import PostgresSettings
from backroom.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

QUEUED = 30_000
LIMIT = 10
BATCH = 500
"""The webhook dispatcher's batch of events (its default)."""

FILL = """
INSERT INTO jobs (tenant, task, queue, state, input, max_attempts, run_at, created_at, updated_at)
SELECT $3, 'noop', $4, 'queued', $5, 3, $1, $1, $1 FROM generate_series(1, $2)
"""
"""QUEUED jobs in one statement (no events: the tests that read the feed submit some)."""
INPUT = json.dumps("x" * 200)
"""Each filled job's input: a row as wide as a small job's, the table as many pages."""


STATISTICS = """
SELECT reltuples, analyze_count AS analyses FROM pg_class
JOIN pg_stat_user_tables ON relid = pg_class.oid WHERE pg_class.oid = 'jobs'::regclass
"""


PLANS_KEPT = """
SELECT custom_plans, generic_plans FROM pg_prepared_statements WHERE statement LIKE $1
"""

HEAD = "SELECT xid::text, id FROM job_events ORDER BY xid DESC, id DESC LIMIT 1"


@pytest.fixture
def schema_url(postgres_url: str) -> Iterator[str]:
    with scratch_schema(postgres_url) as url:
        yield url


@pytest.fixture
async def filled(schema_url: str) -> AsyncIterator[asyncpg.Connection[asyncpg.Record]]:
    """A migrated schema with the events of BATCH jobs and QUEUED more jobs, never
    analyzed; a connection to it."""
    store = await migrated(PostgresStore.from_url(schema_url))
    try:
        await store.submit_many([due_job() for _ in range(BATCH)], T0)
    finally:
        await store.close()
    database, schema = schema_url.split("?search_path=")
    connection = await asyncpg.connect(database)
    await connection.execute(f'SET search_path = "{schema}"')
    try:
        await connection.execute(FILL, T0, QUEUED, DEFAULT_TENANT, DEFAULT_QUEUE, INPUT)
        yield connection
    finally:
        await connection.close()


async def plan_run(
    connection: asyncpg.Connection[asyncpg.Record], statement: str, *arguments: Any
) -> list[dict[str, Any]]:
    """The nodes of `statement`'s plan, run, in the plan a worker's connection keeps
    for it (the generic one); rolled back."""
    transaction = connection.transaction()
    await transaction.start()
    try:
        await connection.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        text = await connection.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}", *arguments)
    finally:
        await transaction.rollback()
    return list(_nodes(json.loads(text)[0]["Plan"]))


async def rows_read(
    connection: asyncpg.Connection[asyncpg.Record], statement: str, *arguments: Any
) -> dict[str, int]:
    """The most rows any one plan node of `statement` read from each table (see
    `plan_run`)."""
    most: dict[str, int] = {}
    for node in await plan_run(connection, statement, *arguments):
        if "Relation Name" in node and node["Node Type"] not in ("ModifyTable", "LockRows"):
            kept, removed = node["Actual Rows"], node.get("Rows Removed by Filter", 0)
            rows = (kept + removed) * node["Actual Loops"]
            most[node["Relation Name"]] = max(most.get(node["Relation Name"], 0), rows)
    return most


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", ()):
        yield from _nodes(child)


@pytest.mark.parametrize("analyzed", [False, True])
async def test_a_claim_reads_its_candidates_not_the_queue(
    filled: asyncpg.Connection[asyncpg.Record], analyzed: bool
) -> None:
    if analyzed:
        await filled.execute("ANALYZE")
    claim = leases.CLAIM.format(queue_order=leases.EVERY_QUEUE)
    read = await rows_read(filled, claim, T0, LIMIT, T0 + 60_000, "w", "claimed", None)

    # Each tenant offers 2 x limit candidates; no node reads the whole queue.
    assert read["jobs"] <= 2 * LIMIT


async def test_a_claim_is_planned_once_per_connection_whatever_its_limit(
    settings: PostgresSettings, filled: asyncpg.Connection[asyncpg.Record]
) -> None:
    # Planned for each call, the claim cost more to plan than to run (1-2 ms against
    # 0.5 for a few jobs). Its limits are not estimates (`LIMIT (SELECT $2)`), so the
    # plan made once for any parameters serves every call, and the claims' own session,
    # where every claim runs and the statement is prepared, keeps it from the first
    # (left to choose, a small unanalyzed table had each claim planned afresh).
    await filled.execute("ANALYZE")
    store = PostgresStore(settings)
    try:
        for limit in (1, 3, 1, 7, 2, 1, 5, 1):
            # Reads beside each claim open the pool's other connections: none is claimed on.
            claim = store.claim([], limit, "worker", MINUTE, T0, tasks=["noop"])
            reads = asyncio.gather(*(store.get(1) for _ in range(4)))
            claimed, _ = await asyncio.gather(claim, reads)
            assert len(claimed) == limit
        async with store._claims.connection() as connection:
            # Not asyncpg's type lookup, a recursive query too, run once per connection.
            plans = await connection.fetchrow(PLANS_KEPT, "%WITH RECURSIVE queues%SKIP LOCKED%")
    finally:
        await store.close()

    assert plans is not None
    assert (plans["custom_plans"], plans["generic_plans"]) == (0, 8)


async def test_the_next_wakeup_is_planned_once_on_the_claims_session(
    settings: PostgresSettings, filled: asyncpg.Connection[asyncpg.Record]
) -> None:
    # An idle worker asks after each claim. Planned for each call it took 1.2-2.1 ms,
    # with its plan made once 0.2-0.6 ms. That plan seeks, whatever the parameters and
    # however many jobs are queued: `test_wakeup_plans` reads its rows.
    asks = [([], ["noop"]), ([], None), (["elsewhere"], None), ([], ["other"])] * 2
    store = PostgresStore(settings)
    try:
        due = [await store.next_wakeup(queues, tasks) for queues, tasks in asks]
        async with store._claims.connection() as connection:
            plans = await connection.fetchrow(PLANS_KEPT, "%WITH RECURSIVE queues%full_lanes%")
    finally:
        await store.close()

    assert due == [T0, T0, None, None] * 2
    assert plans is not None
    assert (plans["custom_plans"], plans["generic_plans"]) == (0, len(asks))


async def test_a_feed_batch_reads_its_events_jobs_not_the_table(
    filled: asyncpg.Connection[asyncpg.Record],
) -> None:
    read = await rows_read(filled, feed._READ_DELIVERABLE, "1", 0, BATCH, ["acme"])

    assert read["job_events"] <= BATCH
    assert read["jobs"] <= BATCH


async def test_a_feed_batch_past_the_analyzed_events_reads_each_job_once(
    schema_url: str, filled: asyncpg.Connection[asyncpg.Record]
) -> None:
    # Analyzed, then BATCH more events: the statistics say none are past the position.
    await filled.execute("ANALYZE")
    head = await filled.fetchrow(HEAD)
    assert head is not None
    store = PostgresStore.from_url(schema_url)
    try:
        await store.submit_many([due_job() for _ in range(BATCH)], T0)
    finally:
        await store.close()

    read = await rows_read(filled, feed._READ_DELIVERABLE, head["xid"], head["id"], BATCH, ["acme"])

    assert read["jobs"] <= BATCH


async def test_a_sweep_analyzes_a_grown_table_autovacuum_leaves_alone(
    schema_url: str, filled: asyncpg.Connection[asyncpg.Record]
) -> None:
    await filled.execute("ALTER TABLE jobs SET (autovacuum_enabled = false)")
    sweeps = []
    for _ in range(2):
        store = PostgresStore.from_url(schema_url)
        try:
            await store.expire_leases(T0)
        finally:
            await store.close()  # waits for the refresh the sweep started beside it
        sweeps.append(await filled.fetchrow(STATISTICS))
    first, second = sweeps

    assert first is not None and second is not None
    assert first["reltuples"] > QUEUED / 2  # analyzed (-1 before: never)
    assert second["analyses"] == first["analyses"] == 1  # not again until it doubles


HOOKED = 5
"""Jobs of a batch with a `webhook_url` of their own."""

VISIBLE_AFTER = """
SELECT count(*) FROM job_events
WHERE (xid, id) > ($1::text::xid8, $2) AND xid < pg_snapshot_xmin(pg_current_snapshot())
"""


async def _finished_batch(schema_url: str, filled: asyncpg.Connection[Any]) -> tuple[str, int]:
    """BATCH jobs of their own queue, HOOKED with a URL, run to the end: the position
    before their terminal events, once those are all visible to the feed."""
    hooked = replace(due_job(), queue="hooks", webhook_url="https://x.test/hook")
    plain = replace(due_job(), queue="hooks")
    store = PostgresStore.from_url(schema_url)
    try:
        await store.submit_many([hooked] * HOOKED + [plain] * (BATCH - HOOKED), T0)
        jobs = await store.claim(["hooks"], BATCH, "worker", MINUTE, T0)
        head = await filled.fetchrow(HEAD)
        assert head is not None and len(jobs) == BATCH
        await store.finish([(job.lease, Succeeded(None)) for job in jobs], T0)
    finally:
        await store.close()
    deadline = asyncio.get_running_loop().time() + 30  # other sessions' transactions end
    while await filled.fetchval(VISIBLE_AFTER, head["xid"], head["id"]) < BATCH:
        assert asyncio.get_running_loop().time() < deadline, "the events never became visible"
        await asyncio.sleep(0.01)
    return head["xid"], head["id"]


@pytest.mark.parametrize("analyzed", [False, True])
async def test_a_feed_batch_no_tenant_subscribes_to_reads_only_hooked_jobs(
    schema_url: str, filled: asyncpg.Connection[asyncpg.Record], analyzed: bool
) -> None:
    # Only terminal events of jobs with their own URL can call for a delivery: a probe
    # of jobs_hooked (migration 021) each, and only those jobs' rows are read.
    after = await _finished_batch(schema_url, filled)
    if analyzed:
        await filled.execute("ANALYZE")

    nodes = await plan_run(filled, feed._READ_HOOKED, *after, BATCH)
    rows = await filled.fetch(feed._READ_HOOKED, *after, BATCH)

    events = [node for node in nodes if node.get("Relation Name") == "job_events"]
    probes = [node for node in nodes if node.get("Relation Name") == "jobs"]
    assert [node["Actual Rows"] for node in events] == [BATCH]
    # A probe a terminal event, of the index of jobs with a URL: no other job is read.
    assert [(node["Index Name"], node["Actual Loops"]) for node in probes] == [
        ("jobs_hooked", BATCH)
    ]
    assert sum(row["wanted"] for row in rows) == HOOKED
