"""A finish reads `jobs` and `attempts` by key beside thousands of finished jobs, in
the plan made for its arguments and in the generic plan a connection keeps after five
finishes.

Joined to its batch through a CTE alone, a finish once read both tables whole once
some thousands of jobs had run, analyzed or not; and its generic plan, counting the
batch by `unnest`, expected 10 jobs and looked each job's attempt up by an index scan
that also stepped through every id of the batch. Plans are read with EXPLAIN only.
"""

from __future__ import annotations

from collections.abc import Callable

import asyncpg
import pytest
from postgres_store_support import MINUTE, T0, due_job, migrated

from backroom.core.job import Lease
from backroom.core.outcome import Succeeded
from backroom.store.postgres import finish as finish_sql
from backroom.store.postgres.database import PostgresSettings
from backroom.store.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres

HELD = 200
DONE_BEFORE = 4_000
"""Jobs run to the end before the batch whose finish is planned."""


async def _run_to_the_end(store: PostgresStore, count: int) -> None:
    for first in range(0, count, 1_000):
        jobs = await store.claim([], min(1_000, count - first), "worker", MINUTE, T0)
        applied = await store.finish([(job.lease, Succeeded(None)) for job in jobs], T0)
        assert all(applied)


_FINISH_TYPES = (
    "bigint",
    "text",
    *(f"{kind}[]" for _, kind in finish_sql._TRANSITION_COLUMNS),
    "bigint[]",
    "bigint[]",
    "integer[]",
    "text[]",
)
"""The types of the finish's parameters, $1 on."""


async def _finish_plan(settings: PostgresSettings, held: list[Lease], generic: bool) -> str:
    """The plan of a finish of `held`: the one made for its arguments, or the generic
    one a connection keeps after five finishes (PREPARE takes no bound arguments:
    the server writes them as literals)."""
    arguments = finish_sql.finish_arguments(
        (((lease.job_id, lease.token), Succeeded(None)) for lease in held), T0
    )
    arguments = [T0, "unused", *arguments]
    connection = await asyncpg.connect(settings.dsn)
    try:
        if generic:  # as a worker plans it while its tables grow: unanalyzed
            literals = [
                await connection.fetchval(f"SELECT quote_nullable($1::{kind}) || '::{kind}'", value)
                for kind, value in zip(_FINISH_TYPES, arguments, strict=True)
            ]
            await connection.execute("SET plan_cache_mode = force_generic_plan")
            await connection.execute("PREPARE finish AS " + finish_sql.FINISH_HINTED)
            plan = await connection.fetch(f"EXPLAIN EXECUTE finish({', '.join(literals)})")
        else:
            await connection.execute("ANALYZE")
            plan = await connection.fetch("EXPLAIN " + finish_sql.FINISH_HINTED, *arguments)
    finally:
        await connection.close()
    return "\n".join(row[0] for row in plan)


@pytest.mark.parametrize("generic", [False, True], ids=["for its arguments", "generic"])
async def test_a_finish_reads_jobs_and_attempts_by_key_beside_thousands_run(
    open_store: Callable[[], PostgresStore], settings: PostgresSettings, generic: bool
) -> None:
    store = await migrated(open_store())
    await store.submit_many([due_job()] * (DONE_BEFORE + HELD), T0)
    await _run_to_the_end(store, DONE_BEFORE)
    held = await store.claim([], HELD, "worker", MINUTE, T0)
    plan = await _finish_plan(settings, [job.lease for job in held], generic)
    assert "Seq Scan on jobs" not in plan, plan
    assert "Seq Scan on attempts" not in plan, plan
    # Nor an index scan per job that also steps through the batch's ids (the generic
    # plan of a batch counted by `unnest`, which it expects to hold 10 jobs).
    per_job = [line for line in plan.splitlines() if "= ANY" in line and "held" in line]
    assert not per_job, plan
