"""The PostgreSQL finish works out each distinct outcome's transition once per batch,
and a success's once for every success: the rows it sends are those of each outcome
worked out alone."""

from __future__ import annotations

from typing import Any

import pytest

from backroom.core import transitions
from backroom.core.job import ErrorInfo
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


def _alone(outcome: Outcome) -> list[tuple[Any, tuple[Any, ...]]]:
    return [
        (facts, finish_sql._transition_row(transition))
        for facts, transition in transitions.finish_cases(outcome, NOW)
    ]


@pytest.mark.parametrize("outcome", OUTCOMES, ids=repr)
def test_each_outcome_in_a_batch_sends_the_rows_it_would_alone(outcome: Outcome) -> None:
    known: dict[Outcome, Any] = {}
    for other in OUTCOMES:  # the batch's other outcomes worked out first
        finish_sql._cases(other, NOW, known)

    assert finish_sql._cases(outcome, NOW, known) == _alone(outcome)
    assert finish_sql._cases(outcome, NOW, {}) == _alone(outcome)
