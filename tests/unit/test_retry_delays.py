"""Table tests for how long `backroom.core.retry` waits between attempts."""

from __future__ import annotations

import random

import pytest

from backroom.core.retry import Jitter, RetryPolicy, Schedule, backoff_ms

DRAWS = 2_000


@pytest.mark.parametrize(
    ("attempt", "expected"), [(1, 1000), (2, 2000), (3, 4000), (4, 8000), (5, 8000)]
)
def test_backoff_ms_doubles_up_to_the_cap(attempt: int, expected: int) -> None:
    assert backoff_ms(attempt) == expected


def test_backoff_ms_takes_its_base_and_cap() -> None:
    assert [backoff_ms(n, base=100, cap=500) for n in range(1, 5)] == [100, 200, 400, 500]


def test_backoff_ms_stays_at_the_cap_for_huge_attempt_numbers() -> None:
    assert backoff_ms(10**9) == 8000


@pytest.mark.parametrize("attempt", [0, -1])
def test_backoff_ms_refuses_attempts_before_the_first(attempt: int) -> None:
    with pytest.raises(ValueError, match="start at 1"):
        backoff_ms(attempt)


SCHEDULE_TABLE = [
    (Schedule.EXPONENTIAL, 2.0, [1000, 2000, 4000, 8000]),
    (Schedule.EXPONENTIAL, 3.0, [1000, 3000, 9000, 27000]),
    (Schedule.EXPONENTIAL, 1.5, [1000, 1500, 2250, 3375]),
    (Schedule.LINEAR, 2.0, [1000, 2000, 3000, 4000]),
    (Schedule.CONSTANT, 2.0, [1000, 1000, 1000, 1000]),
]


@pytest.mark.parametrize(("schedule", "factor", "expected"), SCHEDULE_TABLE)
def test_each_schedule_grows_as_documented(
    schedule: Schedule, factor: float, expected: list[int]
) -> None:
    policy = RetryPolicy(schedule=schedule, base_ms=1000, factor=factor, jitter=Jitter.NONE)
    assert [policy.raw_delay_ms(n) for n in range(1, 5)] == expected
    # Without jitter the rng is never consulted: the delay is the raw delay.
    assert [policy.delay_ms(n, random.Random(0)) for n in range(1, 5)] == expected


@pytest.mark.parametrize(
    ("schedule", "attempt"),
    [(Schedule.EXPONENTIAL, 4), (Schedule.EXPONENTIAL, 5_000), (Schedule.LINEAR, 6)],
)
def test_the_cap_bounds_every_growing_schedule(schedule: Schedule, attempt: int) -> None:
    policy = RetryPolicy(schedule=schedule, base_ms=1000, cap_ms=5000, jitter=Jitter.NONE)
    assert policy.raw_delay_ms(attempt) == 5000


def test_a_constant_schedule_above_the_cap_is_capped() -> None:
    policy = RetryPolicy(schedule=Schedule.CONSTANT, base_ms=9000, cap_ms=5000)
    assert policy.raw_delay_ms(1) == 5000


def test_the_default_policy_is_exponential_with_full_jitter() -> None:
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.schedule, policy.jitter) == (
        3,
        Schedule.EXPONENTIAL,
        Jitter.FULL,
    )


@pytest.mark.parametrize(
    "settings",
    [{"max_attempts": 0}, {"base_ms": -1}, {"cap_ms": -1}, {"factor": 0.5}],
    ids=lambda settings: next(iter(settings)),
)
def test_a_policy_refuses_nonsense_settings(settings: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**settings)  # type: ignore[arg-type]


def test_raw_delay_refuses_attempts_before_the_first() -> None:
    with pytest.raises(ValueError, match="start at 1"):
        RetryPolicy().raw_delay_ms(0)


def draws(
    policy: RetryPolicy, attempt: int, seed: int, retry_after_ms: int | None = None
) -> list[int]:
    """`DRAWS` jittered delays for one attempt from one seeded rng."""
    rng = random.Random(seed)
    return [policy.delay_ms(attempt, rng, retry_after_ms) for _ in range(DRAWS)]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("attempt", [1, 3, 6])
def test_full_jitter_spreads_over_zero_to_the_raw_delay(seed: int, attempt: int) -> None:
    policy = RetryPolicy(jitter=Jitter.FULL, base_ms=1000, cap_ms=16_000)
    raw = policy.raw_delay_ms(attempt)
    delays = draws(policy, attempt, seed)
    assert all(0 <= delay <= raw for delay in delays)
    # Spread over the whole range, not bunched at one end.
    assert min(delays) < raw * 0.05
    assert max(delays) > raw * 0.95


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("attempt", [1, 3, 6])
def test_equal_jitter_stays_in_the_upper_half(seed: int, attempt: int) -> None:
    policy = RetryPolicy(jitter=Jitter.EQUAL, base_ms=1000, cap_ms=16_000)
    raw = policy.raw_delay_ms(attempt)
    delays = draws(policy, attempt, seed)
    assert all(raw // 2 <= delay <= raw for delay in delays)
    assert min(delays) < raw * 0.55
    assert max(delays) > raw * 0.95


def test_an_odd_raw_delay_with_equal_jitter_can_still_reach_it() -> None:
    policy = RetryPolicy(schedule=Schedule.CONSTANT, base_ms=3, jitter=Jitter.EQUAL)
    assert set(draws(policy, 1, seed=0)) == {1, 2, 3}


@pytest.mark.parametrize("jitter", list(Jitter))
def test_the_same_seed_gives_the_same_schedule(jitter: Jitter) -> None:
    policy = RetryPolicy(jitter=jitter)
    assert draws(policy, 2, seed=42) == draws(policy, 2, seed=42)


@pytest.mark.parametrize("jitter", list(Jitter))
@pytest.mark.parametrize("retry_after_ms", [0, 1500, 4000, 60_000])
def test_retry_after_is_never_undercut(jitter: Jitter, retry_after_ms: int) -> None:
    policy = RetryPolicy(jitter=jitter, base_ms=1000, cap_ms=8000)
    raw = policy.raw_delay_ms(3)
    delays = draws(policy, 3, seed=7, retry_after_ms=retry_after_ms)
    assert all(retry_after_ms <= delay <= max(raw, retry_after_ms) for delay in delays)


@pytest.mark.parametrize("jitter", list(Jitter))
def test_retry_after_beyond_the_cap_is_honoured_exactly(jitter: Jitter) -> None:
    policy = RetryPolicy(jitter=jitter, base_ms=1000, cap_ms=8000)
    assert set(draws(policy, 3, seed=7, retry_after_ms=120_000)) == {120_000}
