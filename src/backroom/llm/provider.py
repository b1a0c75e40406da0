"""The provider seam: what `llm.respond` needs of a provider, whichever API it speaks.

    provider = providers.get(config)          # `backroom.llm.providers.registry`
    result = await provider.respond(request, clock=clock, on_delta=on_delta)
    ...
    await provider.aclose()

A `Provider` makes one call (streamed or not), turns its SDK's failures into
backroom's `Retryable` and `Permanent` (its error map: `RateLimited` for a 429 that
should slow its lane down), and reads its rate-limit headers into the neutral
`RateLimitSnapshot` (its family's parser in `ratelimit_headers.PARSERS`). Each
implementation talks through its official SDK with the SDK's own retries off:
backroom is the only retry layer. The batch half of the seam lives in
`backroom.llm.batch`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from backroom.clock import Clock
from backroom.core.errors import LaneLimited, Permanent, Retryable
from backroom.llm.progress import DeltaCallback
from backroom.llm.ratelimit_headers import RateLimitSnapshot
from backroom.llm.request import LLMRequest, LLMResult

ResponseCreated = Callable[[str], Awaitable[None]]
"""Told the id of a provider-side response as soon as it exists."""


class RateLimited(LaneLimited):
    """A 429 rate-limit answer: retry after `after_ms`, and slow the whole lane down.

    `rate_limits` holds what its headers said: the request and token windows and the
    wait (`after_ms` is `rate_limits.retry_after_ms`). With no wait named, the lane
    backs off on its own (see `backroom.core.lane_health`).
    """

    def __init__(
        self, message: str, *, after_ms: int | None, rate_limits: RateLimitSnapshot
    ) -> None:
        super().__init__(message, after_ms=after_ms)
        self.rate_limits = rate_limits


@dataclass(frozen=True, slots=True)
class Resume:
    """How a call that the provider keeps server-side (OpenAI's background mode) is
    tied to its record: `on_created` hears its id at once, and `resume_id` names one
    an earlier attempt created, to take up instead of sending a new call. Providers
    that keep no calls ignore it."""

    on_created: ResponseCreated
    resume_id: str | None = None


class Provider(Protocol):
    """One configured provider, through its SDK client (made once, kept, closed)."""

    kind: str
    """Its API's family: a key of `ratelimit_headers.PARSERS`."""

    async def respond(
        self,
        request: LLMRequest,
        *,
        clock: Clock,
        on_delta: DeltaCallback | None = None,
        resume: Resume | None = None,
    ) -> LLMResult:
        """Make one call; with `request.stream`, report the text so far to `on_delta`
        (about every 250 ms of `clock` time). Raises `Retryable` or `Permanent`,
        chained to the SDK's exception."""

    def error_for(self, error: Exception, *, now: int) -> Retryable | Permanent:
        """The job error for an exception its SDK raised (`now`: ms since the epoch)."""

    def rate_limits(self, headers: Mapping[str, str], now: int) -> RateLimitSnapshot:
        """What a response's headers say of the provider's limits."""

    def answered(self, error: BaseException) -> bool:
        """Whether `error` (a job error's cause) is the provider's HTTP error answer,
        which it does not bill, rather than a call that may have run."""

    async def aclose(self) -> None:
        """Close the SDK client's connections."""
