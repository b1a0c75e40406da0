"""Running the LLM benchmark's calls inside one process: a naive loop, and lanes alone.

Both run `concurrency` loops on one event loop sharing one SDK client; each loop takes
the next call and makes it until it succeeds. The naive loop retries each call with
its own exponential backoff and full jitter (1 s base, 60 s cap, never sooner than
Retry-After), knowing nothing of the limits. The lane loop asks one lane, shared in
memory, before every call (`backroom.core.lanes`, no store): the rules alone, as a
reference for backroom's workers, which keep the lane in the store instead.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import openai

from backroom.clock import SystemClock
from backroom.core.errors import Retryable
from backroom.core.lanes import (
    Grant,
    LaneLimits,
    LaneState,
    acquire,
    full_lane,
    pause,
    reconcile,
    release,
)
from backroom.core.retry import Jitter, RetryPolicy
from backroom.llm.config import ProviderConfig
from backroom.llm.lanes import estimate_call_tokens, lane_tokens, throttle_from_headers
from backroom.llm.providers.openai.call import make_client, respond
from backroom.llm.providers.openai.errors import RateLimited
from backroom.llm.ratelimit_headers import RateLimitSnapshot
from backroom.llm.request import LLMRequest, LLMResult

NAIVE_BACKOFF = RetryPolicy(base_ms=1_000, cap_ms=60_000, jitter=Jitter.FULL)
MAX_CALLS_PER_JOB = 100
"""A job called this often is given up (counted as failed)."""
SLOT_RETRY_MS = 5
"""How soon a call denied for want of a concurrency slot asks the lane again."""
CALL_TIMEOUT_S = 60


@dataclass(slots=True)
class RunStats:
    """What one way of running the workload achieved."""

    name: str
    makespan_s: float = 0.0
    calls: int = 0
    rate_limited: int = 0
    failed: int = 0
    attempts: list[int] = field(default_factory=list)
    """Calls each job needed, for those that succeeded."""


Loop = Callable[[asyncio.Queue[LLMRequest], openai.AsyncOpenAI], Awaitable[None]]
"""One of the concurrent loops: takes calls from the queue until it is empty."""


def _run_loops(
    stats: RunStats, base_url: str, requests: list[LLMRequest], concurrency: int, loop: Loop
) -> RunStats:
    """Run `concurrency` copies of `loop` over `requests`; the makespan goes in `stats`."""

    async def run() -> None:
        queue: asyncio.Queue[LLMRequest] = asyncio.Queue()
        for request in requests:
            queue.put_nowait(request)
        provider = ProviderConfig("mock", base_url)
        async with make_client(provider, timeout_s=CALL_TIMEOUT_S) as client:
            started = time.perf_counter()
            await asyncio.gather(*(loop(queue, client) for _ in range(concurrency)))
            stats.makespan_s = time.perf_counter() - started

    asyncio.run(run())
    return stats


def naive_run(base_url: str, requests: list[LLMRequest], concurrency: int, seed: int) -> RunStats:
    """`requests` through `concurrency` independent retry loops."""
    stats = RunStats(f"naive loop ({concurrency} concurrent, backoff with jitter)")
    rng = random.Random(seed)
    clock = SystemClock()

    async def loop(queue: asyncio.Queue[LLMRequest], client: openai.AsyncOpenAI) -> None:
        while not queue.empty():
            request = queue.get_nowait()
            for attempt in range(1, MAX_CALLS_PER_JOB + 1):
                stats.calls += 1
                try:
                    await respond(client, request, chat_only=False, clock=clock)
                except Retryable as error:
                    stats.rate_limited += isinstance(error, RateLimited)
                    await clock.sleep(NAIVE_BACKOFF.delay_ms(attempt, rng, error.after_ms))
                else:
                    stats.attempts.append(attempt)
                    break
            else:
                stats.failed += 1

    return _run_loops(stats, base_url, requests, concurrency, loop)


def _feedback(
    grant: Grant, outcome: LLMResult | Retryable, now: int
) -> tuple[int, RateLimitSnapshot, int | None]:
    """(tokens the provider counted, its rate-limit headers, pause until) for a call."""
    if isinstance(outcome, LLMResult):
        return lane_tokens(outcome.usage), outcome.rate_limits, None
    if isinstance(outcome, RateLimited):
        pause_until = None if outcome.after_ms is None else now + outcome.after_ms
        return 0, outcome.rate_limits, pause_until
    return grant.tokens, RateLimitSnapshot(), None  # unknown: keep the estimate


@dataclass(slots=True)
class SharedLane:
    """The one lane all loops share: a single event loop needs no lock around it."""

    limits: LaneLimits
    state: LaneState

    async def take(self, estimate: int, clock: SystemClock) -> Grant:
        """Wait until the lane grants a call of `estimate` tokens."""
        while True:
            now = clock.now()
            self.state, decision = acquire(self.state, self.limits, estimate, now)
            if isinstance(decision, Grant):
                return decision
            wait_ms = SLOT_RETRY_MS if decision.ready_at is None else decision.ready_at - now
            await clock.sleep(wait_ms)

    def settle(self, grant: Grant, outcome: LLMResult | Retryable, now: int) -> None:
        """Settle a call's tokens, free its slot, learn from its headers and its 429."""
        tokens, rate_limits, pause_until = _feedback(grant, outcome, now)
        state = release(reconcile(self.state, self.limits, grant, tokens, now))
        state = throttle_from_headers(state, self.limits, rate_limits, sent_at=grant.at, now=now)
        self.state = state if pause_until is None else pause(state, pause_until)


def lane_rules_run(
    base_url: str, requests: list[LLMRequest], limits: LaneLimits, concurrency: int
) -> RunStats:
    """`requests` through `concurrency` loops that ask one shared lane before each call."""
    stats = RunStats(f"lane rules alone ({concurrency} concurrent, one process, no store)")
    clock = SystemClock()
    lane = SharedLane(limits, full_lane(limits, clock.now()))

    async def loop(queue: asyncio.Queue[LLMRequest], client: openai.AsyncOpenAI) -> None:
        while not queue.empty():
            request = queue.get_nowait()
            for attempt in range(1, MAX_CALLS_PER_JOB + 1):
                grant = await lane.take(estimate_call_tokens(request), clock)
                stats.calls += 1
                try:
                    result = await respond(client, request, chat_only=False, clock=clock)
                except Retryable as error:
                    stats.rate_limited += isinstance(error, RateLimited)
                    lane.settle(grant, error, clock.now())
                    continue
                lane.settle(grant, result, clock.now())
                stats.attempts.append(attempt)
                break
            else:
                stats.failed += 1

    return _run_loops(stats, base_url, requests, concurrency, loop)
