"""The mock's rate limits: requests and tokens per minute, per model, on an injected clock.

Each limit is a bucket that holds one minute's allowance, starts full and refills
continuously (a limit of 600/min regains one request every 100 ms). A call needs one
request and its tokens from the buckets; if either is short, it gets a 429 saying how
long until both would suffice. The `x-ratelimit-*` headers report what is left and
how long until a bucket is full again. When a call's tokens are charged is the
provider's accounting (`ChargeAt`), which real providers do differently:

    usage       the tokens it will really use (input and output), when admitted: an
                ideal provider that knows the answer's length in advance (the default)
    admission   input plus the request's `max_output_tokens` (the real output when it
                sets none), when admitted, never refunded: OpenAI's documented way
    completion  admitted while the bucket holds the input; input plus the real output
                charged when the answer is sent (the bucket may owe): a proxy that
                counts usage after the fact, as LiteLLM's limiter does
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi.responses import JSONResponse

from backroom.llm.mock.charge import ChargeAt, TokenCharge
from backroom.llm.mock.errors import error_response
from backroom.llm.ratelimit_headers import format_duration

MS_PER_MINUTE = 60_000


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


class _Bucket:
    """`per_minute` units that refill continuously.

    The level is kept in 1/60,000ths of a unit, so one millisecond of refill adds
    exactly `per_minute` of them and all arithmetic stays in integers.
    """

    def __init__(self, per_minute: int, now: int) -> None:
        self.per_minute = per_minute
        self._capacity = per_minute * MS_PER_MINUTE
        self._level = self._capacity
        self._updated_at = now

    def refill(self, now: int) -> None:
        """Add what the time since the last refill has earned, up to a full bucket."""
        elapsed = max(0, now - self._updated_at)
        self._updated_at = max(now, self._updated_at)
        self._level = min(self._capacity, self._level + elapsed * self.per_minute)

    def wait_ms(self, amount: int) -> int:
        """How long until `amount` units are there (0: now)."""
        return max(0, _ceil_div(amount * MS_PER_MINUTE - self._level, self.per_minute))

    def take(self, amount: int) -> None:
        """Remove `amount` units (the caller has checked that they are there)."""
        self._level -= amount * MS_PER_MINUTE

    def remaining(self) -> int:
        """Whole units left."""
        return self._level // MS_PER_MINUTE

    def reset_ms(self) -> int:
        """How long until the bucket is full again."""
        return _ceil_div(self._capacity - self._level, self.per_minute)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a call was refused, and how long to wait; `wait_ms` None means it never fits."""

    kind: str
    """`requests` or `tokens`."""
    limit: int
    requested: int
    wait_ms: int | None


class ModelLimiter:
    """The request and token buckets of one model; either may be absent (no limit)."""

    def __init__(
        self,
        requests_per_minute: int | None,
        tokens_per_minute: int | None,
        now: int,
        charge_at: ChargeAt = ChargeAt.USAGE,
    ) -> None:
        self.charge_at = charge_at
        self._buckets = {
            kind: _Bucket(per_minute, now)
            for kind, per_minute in (
                ("requests", requests_per_minute),
                ("tokens", tokens_per_minute),
            )
            if per_minute is not None
        }

    def admit(self, tokens: int, now: int) -> Refusal | None:
        """Take one request and `tokens` tokens if both are there; else say why not.

        Under `ChargeAt.COMPLETION` the tokens must be there but are not taken: the
        answer's are, by `complete`.
        """
        wanted = {"requests": 1, "tokens": tokens}
        refusals: list[Refusal] = []
        for kind, bucket in self._buckets.items():
            bucket.refill(now)
            amount = wanted[kind]
            wait = None if amount > bucket.per_minute else bucket.wait_ms(amount)
            if wait != 0:
                refusals.append(Refusal(kind, bucket.per_minute, amount, wait))
        if refusals:
            # The call can go only when every bucket suffices: report the longest wait.
            return max(
                refusals, key=lambda refusal: (refusal.wait_ms is None, refusal.wait_ms or 0)
            )
        if self.charge_at is ChargeAt.COMPLETION:
            wanted["tokens"] = 0
        for kind, bucket in self._buckets.items():
            bucket.take(wanted[kind])
        return None

    def complete(self, call: TokenCharge, now: int) -> None:
        """Charge an answered call's tokens when the provider counts them at the end."""
        bucket = self._buckets.get("tokens")
        if self.charge_at is ChargeAt.COMPLETION and bucket is not None:
            bucket.refill(now)
            bucket.take(call.input_tokens + call.output_tokens)

    def headers(self) -> dict[str, str]:
        """The `x-ratelimit-*` headers for the buckets' current state."""
        headers: dict[str, str] = {}
        for kind, bucket in self._buckets.items():
            headers[f"x-ratelimit-limit-{kind}"] = str(bucket.per_minute)
            headers[f"x-ratelimit-remaining-{kind}"] = str(max(0, bucket.remaining()))
            headers[f"x-ratelimit-reset-{kind}"] = format_duration(bucket.reset_ms())
        return headers


def refusal_response(model: str, refusal: Refusal, headers: dict[str, str]) -> JSONResponse:
    """The 429 for a refused call, with Retry-After in both forms when a wait can help."""
    what = (
        f"{model} on {refusal.kind} per min: Limit {refusal.limit}, Requested {refusal.requested}"
    )
    if refusal.wait_ms is None:
        # No wait makes this call fit: tell the client not to retry it.
        return error_response(
            429,
            f"Request too large for {what}.",
            error_type=refusal.kind,
            code="rate_limit_exceeded",
            headers=headers | {"x-should-retry": "false"},
        )
    wait = refusal.wait_ms
    retry_headers = {"retry-after": str(_ceil_div(wait, 1000)), "retry-after-ms": str(wait)}
    return error_response(
        429,
        f"Rate limit reached for {what}. Please try again in {format_duration(wait)}.",
        error_type=refusal.kind,
        code="rate_limit_exceeded",
        headers=headers | retry_headers,
    )
