"""Contract: a store writes exactly the core's transition, in every case it depends on.

For each way an attempt ends (an outcome, or an expired lease) and each case of
`RunningFacts` (last attempt or not, cancellation asked or not), the stored job is the
core's `apply` of the transition, its last event is the transition's, and its attempt
row is closed as the transition's `AttemptEnd` says.
"""

from __future__ import annotations

import pytest
from contract_support import BOOM, LEASE_MS, T0, running

from backroom.core import transitions
from backroom.core.job import Job
from backroom.core.lifecycle import (
    EVERY_RUNNING_FACT,
    RunningFacts,
    Transition,
    apply,
    running_facts,
)
from backroom.core.outcome import Cancelled, Deferred, Failed, Outcome, Released, RetryAt, Succeeded
from backroom.store.protocol import Store

ENDED_AT = T0 + 2_000
OUTCOMES: list[Outcome] = [
    Succeeded({"summary": "short"}),
    RetryAt(T0 + 9_000, BOOM),
    Failed(BOOM),
    Cancelled("stopped by user"),
    Released(),
    Deferred(T0 + 7_000, "lane busy", BOOM),
]


async def running_in_case(store: Store, facts: RunningFacts) -> Job:
    """A running job on its last attempt or not, with its cancellation asked or not."""
    job = await running(store, max_attempts=1 if facts.spent else 3)
    if facts.cancel_requested:
        await store.cancel(job.id, T0 + 1)
    stored = await store.get(job.id)
    assert stored is not None
    assert running_facts(stored) == facts
    return stored


async def assert_written(store: Store, before: Job, transition: Transition) -> None:
    """The job, its last event and its attempt row are what `transition` writes."""
    assert await store.get(before.id) == apply(before, transition)
    assert (await store.events(before.id))[-1] == transition.event(before.id)
    attempt = (await store.attempts(before.id))[-1]
    end = transition.attempt_end
    assert end is not None
    assert (attempt.finished_at, attempt.outcome, attempt.error, attempt.next_attempt_at) == (
        transition.at,
        end.outcome,
        end.error,
        end.next_attempt_at,
    )


@pytest.mark.parametrize("facts", EVERY_RUNNING_FACT, ids=str)
@pytest.mark.parametrize("outcome", OUTCOMES, ids=lambda outcome: type(outcome).__name__)
async def test_ending_an_attempt_writes_the_cores_transition(
    store: Store, outcome: Outcome, facts: RunningFacts
) -> None:
    job = await running_in_case(store, facts)

    assert await store.finish([(job.lease, outcome)], ENDED_AT) == [True]

    await assert_written(store, job, transitions.finished(outcome, ENDED_AT, facts))


@pytest.mark.parametrize("facts", EVERY_RUNNING_FACT, ids=str)
async def test_an_expired_lease_writes_the_cores_transition(
    store: Store, facts: RunningFacts
) -> None:
    job = await running_in_case(store, facts)
    expired_at = T0 + LEASE_MS

    (swept,) = await store.expire_leases(expired_at)

    assert swept == apply(job, transitions.expired(expired_at, facts))
    await assert_written(store, job, transitions.expired(expired_at, facts))
