"""Contract: a bulk `submit_many` (hundreds of jobs) answers exactly as a small one.

PostgreSQL sends a bulk submission's jobs as one JSON document rather than one array per
column (`postgres.submit_rows`): every field must survive that way too.
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_support import T0, new_job, submit

from backroom.core import transitions
from backroom.core.errors import IdempotencyConflict, QueueFull
from backroom.core.job import JobEvent, JobState, NewJob
from backroom.store.protocol import Store

BULK = 120
"""More jobs than any backend sends the small way."""

ODD_VALUES: list[Any] = [
    {"text": "naïve café ☕ 日本語 \U0001f600", "quote": '"\\/\n\t', "nul": "a\u0000b"},
    [1, 2.5, -0.0, 1e300, True, None, "null", {"nested": [[]]}],
    "plain string",
    12345678901234567890,
    None,
]


def _varied(n: int) -> NewJob:
    """A submission using every field, with values that are awkward to carry."""
    return new_job(
        f"task-{n % 3}",
        {"n": n, "value": ODD_VALUES[n % len(ODD_VALUES)]},
        run_at=T0 + (n % 4) * 1_000,
        tenant=f"tenant-{n % 2}",
        queue="batch" if n % 2 else "default",
        priority=n % 7 - 3,
        max_attempts=1 + n % 5,
        timeout_ms=None if n % 3 else 1_000 + n,
        metadata={} if n % 2 else {"i": n, "label": "ünïcode"},
        lane="openai/gpt-4o" if n % 5 == 0 else None,
        webhook_url=f"https://hooks.example.com/{n}" if n % 4 == 0 else None,
        traceparent="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" if n % 6 else None,
        key=f"k-{n}" if n % 2 else None,
    )


async def test_every_field_of_a_bulk_submission_is_stored(store: Store) -> None:
    batch = [_varied(n) for n in range(BULK)]

    results = await store.submit_many(batch, T0)

    assert all(result.created for result in results)
    for new, result in zip(batch, results, strict=True):
        assert result.job == transitions.new_job(result.job.id, new, T0)
        assert await store.get(result.job.id) == result.job
    assert [result.job.id for result in results] == sorted(result.job.id for result in results)
    assert await store.events(results[7].job.id) == [
        JobEvent(results[7].job.id, T0, None, JobState.QUEUED, "submitted")
    ]


async def test_a_bulk_submission_resolves_keys_against_stored_jobs_and_each_other(
    store: Store,
) -> None:
    stored = await store.submit(new_job(key="old"), T0)
    batch = [new_job(payload={"doc": n}, key=f"k-{n}") for n in range(BULK)]
    batch += [new_job(key="old"), new_job(payload={"doc": 3}, key="k-3"), new_job()]

    results = await store.submit_many(batch, T0 + 1)

    assert [result.created for result in results] == [True] * BULK + [False, False, True]
    assert results[BULK].job == stored.job
    assert results[BULK + 1].job == results[3].job
    again = await store.submit_many(batch[:BULK], T0 + 2)
    assert [result.job for result in again] == [result.job for result in results[:BULK]]
    assert not any(result.created for result in again)


async def test_a_conflict_in_a_bulk_submission_stores_nothing(store: Store) -> None:
    await store.submit(new_job(payload={"doc": 1}, key="k1"), T0)
    batch = [new_job(payload={"doc": n}, key=f"fresh-{n}") for n in range(BULK)]

    with pytest.raises(IdempotencyConflict):
        await store.submit_many([*batch, new_job(payload={"doc": 2}, key="k1")], T0)

    assert (await store.submit(batch[0], T0)).created


@pytest.mark.parametrize("keyed", [False, True])
async def test_a_bulk_submission_beyond_the_cap_stores_nothing(store: Store, keyed: bool) -> None:
    await submit(store, tenant="capped", max_active=BULK)
    batch = [
        new_job(
            payload={"doc": n}, tenant="capped", max_active=BULK, key=f"k-{n}" if keyed else None
        )
        for n in range(BULK)
    ]

    with pytest.raises(QueueFull):
        await store.submit_many(batch, T0)

    assert await store.count_active("capped") == 1
    assert len(await store.submit_many(batch[: BULK - 1], T0)) == BULK - 1
    assert await store.count_active("capped") == BULK
