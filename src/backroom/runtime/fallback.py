"""Moving a job along its route of lanes (`Task.lane_route`): LiteLLM's router fallbacks,
but durable (the move is stored on the job and its attempt) and visible (each attempt
names its lane).

A job moves from its current lane to the next one when

1. its lane will have no room for longer than the route's `after_pause_ms` (paused by
   a 429's wait or a cooldown, or out of requests or tokens for that long): at the
   lane gate, or when its own call got that 429;
2. `after_attempts` of its attempts in the lane failed with a retryable error: the
   next attempt runs at once in the next lane.

A job in its last lane stays there, waiting and retrying as any job does; its
`max_attempts` bounds its attempts over every lane together.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from backroom.clock import Clock
from backroom.core.errors import LeaseLost
from backroom.core.job import AttemptOutcome, Job, WaitReason
from backroom.core.lane_routes import LaneRoute
from backroom.core.lanes import LaneRequest
from backroom.core.outcome import Deferred, Outcome, RetryAt
from backroom.store.protocol import AttemptStore
from backroom.tasks import LaneRequester, Task

log = logging.getLogger("backroom.runtime.fallback")

Admit = Callable[[Job, LaneRequester], Awaitable[Outcome | None]]
"""The lane gate's admission of a job into the lane a requester names."""

_LANE_WAITS = frozenset({WaitReason.LANE, WaitReason.RATE_LIMIT})
"""Waits a fallback can escape: the lane's, not the tenant's budget's or the store's."""
_NOT_RUN = frozenset({AttemptOutcome.DEFERRED, AttemptOutcome.INTERRUPTED})


class LaneFallbacks:
    """Moves jobs with alternatives to their next lane, through the store."""

    def __init__(self, store: AttemptStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def admit(self, job: Job, task: Task, admit: Admit) -> tuple[Job, Outcome | None]:
        """Admit `job` into its current lane, moving on while that one would hold it
        back too long; the job as it now is (its lane), and how its attempt ends
        unstarted (None: it may start). Raises `LeaseLost` as `admit` does."""
        route = None if task.lane_route is None else task.lane_route(job.input)
        if route is None:
            assert task.lane_request is not None  # a task with a lane: the caller checks
            return job, await admit(job, task.lane_request)
        while True:
            current = route.current(job.lane)
            unstarted = await admit(job, _always(current))
            following = route.next_after(job.lane)
            if following is None or not self._too_long(route, unstarted):
                return job, unstarted
            why = f"lane {current.lane} {_why(unstarted)}"
            job = await self._move(job, following, why, attempt=True)

    async def after_failure(self, job: Job, task: Task, outcome: Outcome) -> Outcome:
        """`outcome` of an attempt that failed, or a retry at once in the next lane
        when the failure spent the job's attempts in its lane, or a 429 paused it long."""
        route = None if task.lane_route is None else task.lane_route(job.input)
        following = None if route is None else route.next_after(job.lane)
        if route is None or following is None:
            return outcome
        try:
            if isinstance(outcome, Deferred) and self._too_long(route, outcome):
                why = f"lane {job.lane} {_why(outcome)}"
                moved = await self._move(job, following, why, attempt=False)
                return Deferred(self._clock.now(), f"moved to lane {moved.lane}", outcome.error)
            if isinstance(outcome, RetryAt) and await self._spent(job, route):
                spent = f"spent {route.after_attempts} attempts in lane {job.lane}"
                await self._move(job, following, spent, attempt=False)
                return RetryAt(self._clock.now(), outcome.error)
        except LeaseLost:
            pass  # the outcome will not be stored either
        return outcome

    def _too_long(self, route: LaneRoute, unstarted: Outcome | None) -> bool:
        return (
            isinstance(unstarted, Deferred)
            and unstarted.wait in _LANE_WAITS
            and route.waits_too_long(unstarted.run_at, self._clock.now())
        )

    async def _spent(self, job: Job, route: LaneRoute) -> bool:
        """Whether this attempt is the job's `after_attempts`-th that ran in its lane."""
        attempts = await self._store.attempts(job.id)
        ran = [past for past in attempts if past.lane == job.lane and past.outcome not in _NOT_RUN]
        return len(ran) >= route.after_attempts

    async def _move(self, job: Job, following: LaneRequest, why: str, *, attempt: bool) -> Job:
        """The job moved to `following`'s lane (with `attempt`, its attempt too, whose
        call is yet to be made); `LeaseLost` if it is no longer held."""
        now = self._clock.now()
        if not await self._store.move_lane(job.lease, following.lane, now, attempt=attempt):
            raise LeaseLost(f"job {job.id} is no longer held under lease {job.lease_token}")
        log.info("job %d moves to lane %s: %s", job.id, following.lane, why)
        return job.moved_to(following.lane)


def _always(request: LaneRequest) -> LaneRequester:
    """A requester that names `request` whatever the input: the job's current lane."""

    def requested(_payload: object) -> LaneRequest:
        return request

    return requested


def _why(unstarted: Outcome | None) -> str:
    if isinstance(unstarted, Deferred):
        return f"would hold it until {unstarted.run_at} ({unstarted.reason})"
    return "refused it"
