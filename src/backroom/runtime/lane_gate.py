"""The lane gate: what a job in a lane must pass before its handler runs.

A task with a `lane` (an LLM call, say) runs only when

1. its tenant has daily budget left: spent, the job waits for the next UTC day, or
   fails if the worker is configured so (`OverBudget`);
2. its lane grants the call a slot, a request and its estimated tokens, in the
   store, shared by every worker (`Store.lane_acquire`): denied, the job waits
   until the lane will have room.

Waiting is a `Deferred` outcome: the job goes back to the queue holding no lease and
using no attempt. So does a call the provider refused for its rate limit
(`LaneLimited`, a 429): the lane was at fault, not the job. The lane itself pauses
for every worker (the call's report, `Store.lane_settle`: the Retry-After as a floor,
or a growing backoff with jitter), and the job waits at least as long on its own. The handler's own
report of each call (see `backroom.llm.usage_sink`) settles the grant with the real
usage; an attempt that ends without one frees its slot (`release`), keeping the
estimate charged. A worker that dies frees its slots when their leases expire: a
lane's calls in flight are its running jobs that hold a grant.
"""

from __future__ import annotations

import logging
import random

from backroom.clock import Clock
from backroom.core.errors import BudgetRefused, LaneLimited, StoreError
from backroom.core.job import AttemptOutcome, ErrorInfo, Job, WaitReason
from backroom.core.lane_health import rate_limit_backoff_ms
from backroom.core.lanes import Denied
from backroom.core.outcome import Deferred, Failed, Outcome
from backroom.core.retry import error_info
from backroom.core.usage import OverBudget, day_start, next_day_start, usd
from backroom.store.protocol import AttemptStore
from backroom.tasks import LaneRequester

log = logging.getLogger("backroom.runtime.lane_gate")

SLOT_RETRY_MS = 10
"""How soon a job denied a slot is due again: the claim passes it over while its lane
is full, and the settle that frees a slot wakes the workers."""
MAX_RATE_LIMIT_DEFERRALS = 50
"""How many 429s a job may wait out without using an attempt: with the backoff that
grows to a minute, far more than a busy lane refuses a job, and an end for a call the
provider never accepts."""
STORE_RETRY_MS = 1_000
"""How long a job waits when the store failed before it could start."""
BUDGET_SETTLE_RETRY_MS = 1_000
"""How long a job waits whose call the budget holds no room for while calls are in
flight: their reservations are worst cases, and settling frees what they did not use."""

BUDGET_EXHAUSTED = "BudgetExhausted"
"""The error kind of a job that met its tenant's spent daily budget."""


class LaneGate:
    """Checks budgets and takes lane grants for one worker's attempts."""

    def __init__(
        self, store: AttemptStore, clock: Clock, over_budget: OverBudget, rng: random.Random
    ) -> None:
        self._store = store
        self._clock = clock
        self._over_budget = over_budget
        self._rng = rng

    async def admit(self, job: Job, lane_request: LaneRequester) -> Outcome | None:
        """None if the running `job` may start; else how its attempt ends unstarted.

        Raises `LeaseLost` when the job's lease is gone: nothing is to be stored then.
        """
        request = lane_request(job.input)
        if request is None:
            return None  # an unusable input: the handler fails it
        now = self._clock.now()
        try:
            spent = await self._budget_spent(job, now)
            if spent is not None:
                return spent
            decision = await self._store.lane_acquire(job.lease, request, now)
        except StoreError as error:
            return Deferred(
                now + STORE_RETRY_MS, "store unavailable", error_info(error), WaitReason.STORE
            )
        if isinstance(decision, Denied):
            ready_at = now + SLOT_RETRY_MS if decision.ready_at is None else decision.ready_at
            return Deferred(ready_at, f"lane {request.lane} is busy ({decision.reason})")
        return None

    async def release(self, job: Job) -> None:
        """Free the lane slot `job`'s attempt holds, if its call's report did not already.

        A failure is only logged: the slot frees anyway when the attempt's end is stored.
        """
        try:
            await self._store.lane_release(job.lease)
        except StoreError as error:
            log.warning("job %d: freeing its lane slot failed: %s", job.id, error)

    async def refused(self, job: Job, error: LaneLimited) -> Deferred | None:
        """The outcome of a call refused for its lane's rate limit: wait, using no attempt.

        The job waits the Retry-After, or else a backoff that grows with its refusals
        (as the lane's does); the claim holds it back longer while its lane is paused.
        None once the job has been refused `MAX_RATE_LIMIT_DEFERRALS` times: a call the
        provider never accepts (a prompt beyond its tokens per minute, say) then uses
        attempts like any retryable failure, and so ends.
        """
        try:
            history = await self._store.attempts(job.id)
        except StoreError:
            history = []
        refusals = sum(
            1 for past in history if past.outcome is AttemptOutcome.DEFERRED and past.error
        )
        if refusals >= MAX_RATE_LIMIT_DEFERRALS:
            return None
        if error.after_ms is None:
            wait_ms = rate_limit_backoff_ms(refusals + 1, self._rng.random())
        else:
            wait_ms = error.after_ms
        info = error_info(error)
        return Deferred(
            self._clock.now() + wait_ms, f"rate limited: {info}", info, WaitReason.RATE_LIMIT
        )

    async def _budget_spent(self, job: Job, now: int) -> Outcome | None:
        """How the attempt ends if the job's tenant has spent today's budget, else None."""
        tenant = await self._store.get_tenant(job.tenant)
        if tenant is None or tenant.daily_budget is None:
            return None
        spent = await self._store.spent_pico_usd(job.tenant, day_start(now), next_day_start(now))
        budget = tenant.daily_budget
        if not budget.exhausted(spent):
            return None
        error = ErrorInfo(
            BUDGET_EXHAUSTED,
            f"tenant {job.tenant!r} has spent ${usd(spent):f} of its daily LLM budget "
            f"of ${usd(budget.limit_pico_usd):f} (UTC day)",
        )
        return self._budget_outcome(error, now)

    def budget_refused(self, job: Job, refusal: BudgetRefused) -> Outcome:
        """How the attempt ends whose call its tenant's budget could not hold (the
        call was not sent): wait for the calls in flight to settle, or for the next
        UTC day (or fail, if the worker is set so)."""
        now = self._clock.now()
        if not refusal.until_next_day:
            return Deferred(
                now + BUDGET_SETTLE_RETRY_MS, f"budget held by calls in flight: {refusal}"
            )
        return self._budget_outcome(ErrorInfo(BUDGET_EXHAUSTED, str(refusal)), now)

    def _budget_outcome(self, error: ErrorInfo, now: int) -> Outcome:
        if self._over_budget is OverBudget.FAIL:
            return Failed(error)
        return Deferred(
            next_day_start(now),
            "daily budget spent: waits for the next UTC day",
            wait=WaitReason.BUDGET,
        )
