"""The lifecycle as values: what each transition a store writes says."""

from __future__ import annotations

import pytest

from backroom.core import transitions
from backroom.core.errors import IllegalTransition
from backroom.core.job import ErrorInfo, JobState, NewJob
from backroom.core.lifecycle import (
    ALLOWED,
    EVERY_RUNNING_FACT,
    USUAL,
    LeaseGrant,
    RunningFacts,
    Transition,
    apply,
)
from backroom.core.outcome import Cancelled, Deferred, Failed, Outcome, Released, RetryAt, Succeeded

T0 = 1_700_000_000_000
BOOM = ErrorInfo("RuntimeError", "boom")
ENDS_WITHOUT_FACTS: list[Outcome] = [Succeeded({"ok": True}), Failed(BOOM), Cancelled()]
ENDS_WITH_FACTS: list[Outcome] = [RetryAt(T0 + 5, BOOM), Released(), Deferred(T0 + 9)]


def every_transition() -> list[Transition]:
    """Every transition the core can produce at T0."""
    ends = [
        transitions.finished(outcome, T0, facts)
        for outcome in ENDS_WITHOUT_FACTS + ENDS_WITH_FACTS
        for facts in EVERY_RUNNING_FACT
    ]
    expiries = [transitions.expired(T0, facts) for facts in EVERY_RUNNING_FACT]
    others = [
        transitions.claimed(T0, "w", 1_000),
        transitions.cancelled(T0),
        transitions.redriven(T0),
    ]
    return ends + expiries + others


@pytest.mark.parametrize("transition", every_transition())
def test_every_transition_is_one_the_lifecycle_allows(transition: Transition) -> None:
    assert transition.source is not None
    assert (transition.source, transition.target) in ALLOWED
    # Leaving running ends the attempt; nothing else does.
    assert (transition.attempt_end is not None) == (transition.source is JobState.RUNNING)


@pytest.mark.parametrize("outcome", ENDS_WITHOUT_FACTS, ids=lambda o: type(o).__name__)
def test_an_end_that_cannot_queue_the_job_again_is_one_case_for_every_job(
    outcome: Outcome,
) -> None:
    assert transitions.finish_cases(outcome, T0) == [
        (None, transitions.finished(outcome, T0, USUAL))
    ]
    usual = transitions.finished(outcome, T0, USUAL)
    assert all(transitions.finished(outcome, T0, facts) == usual for facts in EVERY_RUNNING_FACT)


@pytest.mark.parametrize("outcome", ENDS_WITH_FACTS, ids=lambda o: type(o).__name__)
def test_an_end_that_may_queue_the_job_again_comes_once_per_case(outcome: Outcome) -> None:
    cases = transitions.finish_cases(outcome, T0)

    assert [facts for facts, _ in cases] == list(EVERY_RUNNING_FACT)
    assert all(value == transitions.finished(outcome, T0, facts) for facts, value in cases if facts)
    cancelled = transitions.finished(outcome, T0, RunningFacts(spent=False, cancel_requested=True))
    assert cancelled.target is JobState.CANCELLED


def test_the_expire_cases_cover_every_job_and_only_a_job_with_attempts_left_is_queued() -> None:
    targets = {facts: value.target for facts, value in transitions.expire_cases(T0)}

    assert targets == {
        RunningFacts(spent=False, cancel_requested=False): JobState.QUEUED,
        RunningFacts(spent=True, cancel_requested=False): JobState.FAILED,
        RunningFacts(spent=False, cancel_requested=True): JobState.CANCELLED,
        RunningFacts(spent=True, cancel_requested=True): JobState.CANCELLED,
    }


def test_a_claim_grants_its_lease_and_nothing_else_does() -> None:
    assert transitions.claimed(T0, "w", 1_000).granted_lease() == LeaseGrant("w", T0 + 1_000)
    with pytest.raises(IllegalTransition, match="grants no lease"):
        transitions.cancelled(T0).granted_lease()


def test_apply_refuses_a_transition_from_another_state() -> None:
    queued = transitions.new_job(1, NewJob(task="t", input=None, run_at=T0), T0)

    with pytest.raises(IllegalTransition, match="from queued to queued"):
        apply(queued, transitions.redriven(T0))
    with pytest.raises(IllegalTransition, match="from queued to succeeded"):
        apply(queued, transitions.finished(Succeeded(None), T0, USUAL))


def test_each_transition_logs_its_own_move() -> None:
    event = transitions.redriven(T0).event(7)

    assert (event.job_id, event.at, event.from_state, event.to_state, event.reason) == (
        7,
        T0,
        JobState.FAILED,
        JobState.QUEUED,
        "redrive",
    )
