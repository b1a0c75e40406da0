"""Table tests for which errors `backroom.core.retry` retries and what a failure leads to."""

from __future__ import annotations

import dataclasses
import random

import pydantic
import pytest

from backroom.core import transitions
from backroom.core.errors import Permanent, Retryable
from backroom.core.job import ErrorInfo, Job, NewJob
from backroom.core.outcome import Failed, RetryAt
from backroom.core.retry import (
    ErrorClassifier,
    Jitter,
    RetryPolicy,
    Verdict,
    error_info,
    outcome_for_error,
)

NOW = 1_700_000_000_000
EXACT = RetryPolicy(max_attempts=3, base_ms=1000, cap_ms=8000, jitter=Jitter.NONE)
DEFAULTS = ErrorClassifier()


class Point(pydantic.BaseModel):
    """A model whose validation fails on bad input."""

    x: int


def validation_error() -> pydantic.ValidationError:
    """A real pydantic validation error."""
    try:
        Point.model_validate({"x": "not a number"})
    except pydantic.ValidationError as error:
        return error
    raise AssertionError("the input was valid")


class RetryableValueError(Retryable, ValueError):
    """A handler's own error that says it is retryable, though it is also a ValueError."""


class PermanentTimeout(Permanent, TimeoutError):
    """A handler's own error that says it is permanent, though it is also a timeout."""


DEFAULT_TABLE: list[tuple[BaseException, Verdict]] = [
    (Retryable("try later"), Verdict.RETRY),
    (Retryable(after_ms=5), Verdict.RETRY),
    (Permanent("never"), Verdict.FAIL),
    (TimeoutError(), Verdict.RETRY),
    (ConnectionError(), Verdict.RETRY),
    (ConnectionRefusedError(), Verdict.RETRY),
    (ConnectionResetError(), Verdict.RETRY),
    (ValueError("bad"), Verdict.FAIL),
    (TypeError("bad"), Verdict.FAIL),
    (KeyError("missing"), Verdict.FAIL),
    (IndexError("missing"), Verdict.FAIL),
    (AttributeError("missing"), Verdict.FAIL),
    (NotImplementedError(), Verdict.FAIL),
    (validation_error(), Verdict.FAIL),
    # Anything unknown is retried by default.
    (RuntimeError("flaky"), Verdict.RETRY),
    (OSError("disk"), Verdict.RETRY),
    # What the error says of itself wins over what it inherits.
    (RetryableValueError(), Verdict.RETRY),
    (PermanentTimeout(), Verdict.FAIL),
]


@pytest.mark.parametrize(
    ("error", "verdict"), DEFAULT_TABLE, ids=[type(e).__name__ for e, _ in DEFAULT_TABLE]
)
def test_default_classification(error: BaseException, verdict: Verdict) -> None:
    assert DEFAULTS.classify(error) is verdict


CONFIGURED_TABLE: list[tuple[ErrorClassifier, BaseException, Verdict]] = [
    (ErrorClassifier(default=Verdict.FAIL), RuntimeError(), Verdict.FAIL),
    (ErrorClassifier(default=Verdict.FAIL), TimeoutError(), Verdict.RETRY),
    (ErrorClassifier(retryable=(KeyError,)), KeyError(), Verdict.RETRY),
    # `retryable` is checked before `permanent`.
    (ErrorClassifier(retryable=(KeyError,), permanent=(KeyError,)), KeyError(), Verdict.RETRY),
    (ErrorClassifier(retryable=()), TimeoutError(), Verdict.RETRY),
    (ErrorClassifier(retryable=(), default=Verdict.FAIL), TimeoutError(), Verdict.FAIL),
    (ErrorClassifier(permanent=(RuntimeError,)), RuntimeError(), Verdict.FAIL),
    (ErrorClassifier(permanent=()), ValueError(), Verdict.RETRY),
    # Configuration never overrides what Retryable and Permanent say.
    (ErrorClassifier(permanent=(Retryable,)), Retryable(), Verdict.RETRY),
    (ErrorClassifier(retryable=(Permanent,)), Permanent(), Verdict.FAIL),
]


@pytest.mark.parametrize(("classifier", "error", "verdict"), CONFIGURED_TABLE)
def test_configured_classification(
    classifier: ErrorClassifier, error: BaseException, verdict: Verdict
) -> None:
    assert classifier.classify(error) is verdict


@pytest.mark.parametrize(
    ("error", "info"),
    [
        (TimeoutError(), ErrorInfo("TimeoutError", "timeout")),
        (TimeoutError("read timed out"), ErrorInfo("TimeoutError", "read timed out")),
        (ValueError("bad input"), ErrorInfo("ValueError", "bad input")),
        (Retryable("rate limited", after_ms=10), ErrorInfo("Retryable", "rate limited")),
        (RuntimeError(), ErrorInfo("RuntimeError", "")),
    ],
)
def test_error_info_keeps_the_class_name_and_message(error: BaseException, info: ErrorInfo) -> None:
    assert error_info(error) == info


def running_job(attempt: int, max_attempts: int = 3) -> Job:
    """A job in its `attempt`-th attempt."""
    new = NewJob(task="summarise", input={}, run_at=NOW, max_attempts=max_attempts)
    queued = dataclasses.replace(transitions.new_job(1, new, NOW), attempt=attempt - 1)
    return transitions.claim(queued, NOW, "w1", 30_000)


def outcome(job: Job, error: BaseException, policy: RetryPolicy = EXACT) -> object:
    """What `error` in `job`'s current attempt leads to, with the default classifier."""
    return outcome_for_error(
        job, error, policy=policy, classifier=DEFAULTS, now=NOW, rng=random.Random(0)
    )


@pytest.mark.parametrize("attempt", [1, 2, 3])
@pytest.mark.parametrize("error", [Permanent("never"), ValueError("bad")])
def test_a_permanent_error_fails_at_once(attempt: int, error: BaseException) -> None:
    assert outcome(running_job(attempt), error) == Failed(error_info(error))


@pytest.mark.parametrize(("attempt", "wait"), [(1, 1000), (2, 2000)])
def test_a_retryable_error_with_attempts_left_retries_after_the_backoff(
    attempt: int, wait: int
) -> None:
    error = TimeoutError()
    assert outcome(running_job(attempt), error) == RetryAt(NOW + wait, error_info(error))


def test_a_retryable_error_retries_no_earlier_than_its_retry_after() -> None:
    error = Retryable("rate limited", after_ms=30_000)
    assert outcome(running_job(1), error) == RetryAt(NOW + 30_000, error_info(error))


def test_a_short_retry_after_does_not_shorten_the_backoff() -> None:
    error = Retryable("rate limited", after_ms=10)
    assert outcome(running_job(2), error) == RetryAt(NOW + 2000, error_info(error))


@pytest.mark.parametrize("error", [TimeoutError(), Retryable(after_ms=5), RuntimeError("x")])
def test_a_retryable_error_on_the_last_attempt_fails(error: BaseException) -> None:
    assert outcome(running_job(3), error) == Failed(error_info(error))


def test_a_single_attempt_job_never_retries() -> None:
    job = running_job(1, max_attempts=1)
    assert isinstance(outcome(job, TimeoutError()), Failed)


@pytest.mark.parametrize("seed", range(20))
def test_a_jittered_retry_lands_within_the_backoff(seed: int) -> None:
    policy = RetryPolicy(base_ms=1000, cap_ms=8000, jitter=Jitter.FULL)
    result = outcome_for_error(
        running_job(2),
        TimeoutError(),
        policy=policy,
        classifier=DEFAULTS,
        now=NOW,
        rng=random.Random(seed),
    )
    assert isinstance(result, RetryAt)
    assert NOW <= result.at <= NOW + 2000
