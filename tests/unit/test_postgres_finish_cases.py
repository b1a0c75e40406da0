"""The PostgreSQL finish sends each distinct outcome's transition once per batch (a
success's once for every success, each job's result beside its index), and each job
finds in it, at the offset the database computes from its `RunningFacts`, the
transition `finished` makes for that outcome and those facts."""

from __future__ import annotations

from typing import Any

from backroom.core import transitions
from backroom.core.job import ErrorInfo
from backroom.core.lifecycle import EVERY_RUNNING_FACT, RunningFacts
from backroom.core.outcome import (
    Cancelled,
    Deferred,
    Failed,
    Outcome,
    Released,
    RetryAt,
    Succeeded,
)
from backroom.store.postgres import finish as finish_sql
from backroom.store.rows import dump_nullable_json

NOW = 1_700_000_000_000
ERROR = ErrorInfo("ValueError", "bad input")
OUTCOMES: list[Outcome] = [
    Succeeded(None),
    Succeeded({"answer": [1, 2, {"deep": None}]}),
    Succeeded("text"),
    Succeeded(0),
    RetryAt(NOW + 5_000, ERROR),
    Failed(ERROR),
    Cancelled(),
    Released(),
    Deferred(NOW + 1_000),
    Deferred(NOW + 1_000, "lane full", ERROR),
]


Sent = tuple[str | None, list[tuple[Any, ...]]]
"""A job's result as sent, and the transition it takes in each case of `RunningFacts`."""


def _sent(outcomes: list[Outcome]) -> list[Sent]:
    """What the finish sends for each of `outcomes`, one job each, in one batch."""
    arguments = finish_sql.finish_arguments(
        (((job_id, 1), outcome) for job_id, outcome in enumerate(outcomes)), NOW
    )
    cases = list(zip(*arguments[:13], strict=True))
    job_ids, tokens, first_cases, results = arguments[13:]
    assert job_ids == list(range(len(outcomes))) and tokens == [1] * len(outcomes)
    results += [None] * (len(outcomes) - len(results))  # the database pads it so
    return [
        (result, [cases[first - 1 + _offset(facts)] for facts in EVERY_RUNNING_FACT])
        for first, result in zip(first_cases, results, strict=True)
    ]


def _offset(facts: RunningFacts) -> int:
    """Where the database finds the case of `facts` among a transition's four."""
    return 2 * facts.spent + facts.cancel_requested


def _alone(outcome: Outcome) -> Sent:
    result = outcome.result if isinstance(outcome, Succeeded) else None
    return (
        dump_nullable_json(result),
        [
            finish_sql._transition_row(transitions.finished(outcome, NOW, facts))
            for facts in EVERY_RUNNING_FACT
        ],
    )


def test_each_job_takes_the_transition_of_its_outcome_and_facts() -> None:
    assert _sent(OUTCOMES) == [_alone(outcome) for outcome in OUTCOMES]
    assert [_sent([outcome])[0] for outcome in OUTCOMES] == [_alone(o) for o in OUTCOMES]


def test_each_distinct_transition_is_sent_once() -> None:
    batch: list[Outcome] = [
        Succeeded(None),
        Succeeded("text"),
        Succeeded(0),
        Failed(ERROR),
        Failed(ERROR),
    ]
    arguments = finish_sql.finish_arguments(
        (((job_id, 1), outcome) for job_id, outcome in enumerate(batch)), NOW
    )
    assert len(arguments[0]) == 8  # four cases of a success, four of the failure
    assert arguments[-2] == [1, 1, 1, 5, 5]
    assert arguments[-1] == [None, '"text"', "0"]  # up to the last result


def test_a_batch_with_no_result_sends_none() -> None:
    arguments = finish_sql.finish_arguments([((1, 1), Succeeded(None))], NOW)
    assert arguments[-1] == []
