"""Which jobs each real store (SQLite, memory) claims, and in what turn, against the reference.

The lifecycle machine meets a crowded lane only now and then; here every example is
one: up to a dozen jobs from a few tenants in a few lanes, drained a few at a time.
Each claim must take the same jobs as the reference: lane by lane, highest priority
first, the tenants of a lane taking turns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_store import ReferenceStore

from backroom.core.job import NewJob
from backroom.store.memory import MemoryStore
from backroom.store.protocol import Store
from backroom.store.sqlite.store import SqliteStore

SUBMITTED_AT = 1_700_000_000_000
CLAIMED_AT = SUBMITTED_AT + 1_000
LEASE_MS = 30_000

JobSpec = tuple[str, str, int, int]
"""Tenant, queue, priority, and delay after submission."""

job_specs: st.SearchStrategy[JobSpec] = st.tuples(
    st.sampled_from(["acme", "globex", "initech"]),
    st.sampled_from(["interactive", "email", "batch"]),
    st.sampled_from([0, 0, 1]),
    # Some jobs fall due exactly at the claim, some after it: those stay queued.
    st.sampled_from([0, 0, 500, 1_000, 2_000]),
)
queue_selections = st.sampled_from([(), ("email",), ("batch", "interactive")])

Batches = list[list[int]]
"""The ids each claim took, in id order, claim after claim."""


def new_job(spec: JobSpec) -> NewJob:
    """The submission a spec describes."""
    tenant, queue, priority, delay = spec
    return NewJob(
        task="summarise",
        input={},
        run_at=SUBMITTED_AT + delay,
        tenant=tenant,
        queue=queue,
        priority=priority,
    )


def drain_reference(specs: Sequence[JobSpec], queues: Sequence[str], limit: int) -> Batches:
    """Submit the jobs to the reference, then claim `limit` at a time until none are due."""
    reference = ReferenceStore()
    for spec in specs:
        reference.submit(new_job(spec), SUBMITTED_AT)
    batches = []
    while batch := reference.claim(queues, limit, "w1", LEASE_MS, CLAIMED_AT):
        batches.append(sorted(job.id for job in batch))
    return batches


STORES: dict[str, Callable[[], Store]] = {
    "sqlite": lambda: SqliteStore.from_url("sqlite://:memory:"),
    "memory": MemoryStore,
}
"""Each store under test, by name, opened fresh for each example."""


async def drain_store(
    open_store: Callable[[], Store], specs: Sequence[JobSpec], queues: Sequence[str], limit: int
) -> Batches:
    """The same on a fresh store."""
    store = open_store()
    await store.migrate()
    try:
        await store.submit_many([new_job(spec) for spec in specs], SUBMITTED_AT)
        batches = []
        while batch := await store.claim(queues, limit, "w1", LEASE_MS, CLAIMED_AT):
            batches.append(sorted(job.id for job in batch))
        return batches
    finally:
        await store.close()


@pytest.mark.parametrize("backend", sorted(STORES))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    specs=st.lists(job_specs, min_size=1, max_size=12),
    queues=queue_selections,
    limit=st.integers(1, 4),
)
def test_each_claim_takes_the_jobs_the_reference_takes(
    backend: str, specs: list[JobSpec], queues: tuple[str, ...], limit: int
) -> None:
    expected = drain_reference(specs, queues, limit)
    assert asyncio.run(drain_store(STORES[backend], specs, queues, limit)) == expected
