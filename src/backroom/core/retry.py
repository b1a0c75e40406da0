"""When to try again: backoff schedules, jitter, Retry-After, and which errors to retry.

Pure: the random source is handed in, so a seeded `random.Random` gives a
reproducible schedule.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass, field
from typing import Protocol

from backroom.core.errors import Permanent, Retryable
from backroom.core.job import ErrorInfo
from backroom.core.outcome import Failed, Outcome, RetryAt


class Schedule(enum.StrEnum):
    """How the wait grows with each attempt."""

    EXPONENTIAL = "exponential"
    LINEAR = "linear"
    CONSTANT = "constant"


class Jitter(enum.StrEnum):
    """How much of the wait is random.

    `full` waits a uniform time in [0, wait] (spreads a herd of retries best);
    `equal` waits wait/2 plus a uniform part up to wait/2; `none` waits exactly.
    """

    NONE = "none"
    FULL = "full"
    EQUAL = "equal"


def backoff_ms(attempt: int, base: int = 1000, cap: int = 8000) -> int:
    """The exponential wait after failed attempt `attempt` (1-based), without jitter.

    >>> [backoff_ms(n) for n in range(1, 6)]
    [1000, 2000, 4000, 8000, 8000]
    """
    if attempt < 1:
        raise ValueError("attempt numbers start at 1")
    # Cap the exponent first so a large attempt number never builds a huge integer.
    return min(cap, base * (1 << min(attempt - 1, 62)))


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many attempts a job gets and how long to wait between them.

    The wait after failed attempt n (1-based) is, before jitter and the cap:
    exponential `base_ms * factor**(n-1)`, linear `base_ms * n`, constant `base_ms`.
    """

    max_attempts: int = 3
    schedule: Schedule = Schedule.EXPONENTIAL
    base_ms: int = 1000
    factor: float = 2.0
    cap_ms: int = 5 * 60 * 1000
    jitter: Jitter = Jitter.FULL

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.base_ms < 0 or self.cap_ms < 0:
            raise ValueError("base_ms and cap_ms must not be negative")
        if self.factor < 1:
            raise ValueError("factor must be at least 1")

    def raw_delay_ms(self, attempt: int) -> int:
        """The wait after failed attempt `attempt`, capped, before jitter."""
        if attempt < 1:
            raise ValueError("attempt numbers start at 1")
        if self.schedule is Schedule.CONSTANT:
            delay = float(self.base_ms)
        elif self.schedule is Schedule.LINEAR:
            delay = float(self.base_ms) * attempt
        else:
            # Past ~1000 doublings a float overflows; the cap is long reached by then.
            delay = float(self.base_ms) * self.factor ** min(attempt - 1, 1000)
        return int(min(delay, self.cap_ms))

    def delay_ms(self, attempt: int, rng: random.Random, retry_after_ms: int | None = None) -> int:
        """The wait after failed attempt `attempt`: jittered, and never below Retry-After."""
        raw = self.raw_delay_ms(attempt)
        if self.jitter is Jitter.FULL:
            delay = rng.randint(0, raw)
        elif self.jitter is Jitter.EQUAL:
            delay = raw // 2 + rng.randint(0, raw - raw // 2)
        else:
            delay = raw
        if retry_after_ms is not None:
            delay = max(delay, retry_after_ms)
        return delay


class Verdict(enum.StrEnum):
    """Whether an error may succeed on a later attempt."""

    RETRY = "retry"
    FAIL = "fail"


def _default_permanent() -> tuple[type[BaseException], ...]:
    return (ValueError, TypeError, KeyError, LookupError, AttributeError, NotImplementedError)


@dataclass(frozen=True, slots=True)
class ErrorClassifier:
    """Decides whether an exception a handler raised is worth retrying.

    `Retryable` and `Permanent` say so themselves. Otherwise the first match wins:
    `retryable` (timeouts, connection errors by default), then `permanent` (validation
    errors: ValueError and its kin, which includes pydantic's ValidationError), then
    `default`.
    """

    retryable: tuple[type[BaseException], ...] = (TimeoutError, ConnectionError)
    permanent: tuple[type[BaseException], ...] = field(default_factory=_default_permanent)
    default: Verdict = Verdict.RETRY

    def classify(self, error: BaseException) -> Verdict:
        """RETRY or FAIL for this exception."""
        if isinstance(error, Retryable):
            return Verdict.RETRY
        if isinstance(error, Permanent):
            return Verdict.FAIL
        if isinstance(error, self.retryable):
            return Verdict.RETRY
        if isinstance(error, self.permanent):
            return Verdict.FAIL
        return self.default


def error_info(error: BaseException) -> ErrorInfo:
    """The stored form of an exception: its kind (its `error_kind`, else its class
    name) and message."""
    if isinstance(error, TimeoutError) and not str(error):
        return ErrorInfo("TimeoutError", "timeout")
    kind = getattr(error, "error_kind", None)
    return ErrorInfo(kind if isinstance(kind, str) else type(error).__name__, str(error))


class Attempted(Protocol):
    """What a retry decision reads of a running job (a `Job`, or a batch line's)."""

    @property
    def attempt(self) -> int:
        """The attempt that failed."""

    @property
    def attempts_left(self) -> int:
        """How many more attempts the job may start."""


def outcome_for_error(
    job: Attempted,
    error: BaseException,
    *,
    policy: RetryPolicy,
    classifier: ErrorClassifier,
    now: int,
    rng: random.Random,
) -> Outcome:
    """What a failed attempt of a running `job` leads to: retry at some time, or fail."""
    info = error_info(error)
    if classifier.classify(error) is Verdict.FAIL or job.attempts_left == 0:
        return Failed(info)
    after_ms = error.after_ms if isinstance(error, Retryable) else None
    return RetryAt(now + policy.delay_ms(job.attempt, rng, after_ms), info)
