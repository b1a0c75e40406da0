"""The exception tree of `backroom.core.errors`."""

from __future__ import annotations

import inspect

import pytest

from backroom.core import errors

DEFINED_HERE = [
    value
    for value in vars(errors).values()
    if inspect.isclass(value)
    and issubclass(value, BaseException)
    and value.__module__ == errors.__name__
]

PARENTS = [
    (errors.IllegalTransition, errors.BackroomError),
    (errors.IdempotencyConflict, errors.BackroomError),
    (errors.QueueFull, errors.BackroomError),
    (errors.JobNotFound, errors.BackroomError),
    (errors.LeaseLost, errors.BackroomError),
    (errors.Offloaded, errors.BackroomError),
    (errors.ConfigError, errors.BackroomError),
    (errors.InvalidJson, errors.BackroomError),
    (errors.InputRefused, errors.BackroomError),
    (errors.InvalidTenantName, errors.BackroomError),
    (errors.WebhookTargetRefused, errors.ConfigError),
    (errors.StoreError, errors.BackroomError),
    (errors.StoreUnavailable, errors.StoreError),
    (errors.JobError, errors.BackroomError),
    (errors.Retryable, errors.JobError),
    (errors.LaneLimited, errors.Retryable),
    (errors.Permanent, errors.JobError),
    (errors.OnceUncertain, errors.Permanent),
    (errors.BudgetRefused, errors.JobError),
    (errors.CostCapReached, errors.Permanent),
]


@pytest.mark.parametrize("error_class", DEFINED_HERE, ids=lambda cls: cls.__name__)
def test_every_exception_is_a_backroom_error(error_class: type[BaseException]) -> None:
    assert issubclass(error_class, errors.BackroomError)


@pytest.mark.parametrize("error_class", DEFINED_HERE, ids=lambda cls: cls.__name__)
def test_the_docstring_tree_names_every_exception(error_class: type[BaseException]) -> None:
    assert errors.__doc__ is not None
    assert error_class.__name__ in errors.__doc__


@pytest.mark.parametrize(("child", "parent"), PARENTS, ids=lambda cls: cls.__name__)
def test_each_exception_hangs_where_the_tree_draws_it(
    child: type[BaseException], parent: type[BaseException]
) -> None:
    assert child.__bases__ == (parent,)


def test_the_table_covers_every_exception() -> None:
    assert {child for child, _ in PARENTS} | {errors.BackroomError} == set(DEFINED_HERE)


def test_the_base_is_an_ordinary_exception() -> None:
    assert errors.BackroomError.__bases__ == (Exception,)


def test_idempotency_conflict_names_the_key_and_the_job() -> None:
    error = errors.IdempotencyConflict("k1", 7)
    assert (error.key, error.job_id) == ("k1", 7)
    assert "'k1'" in str(error)
    assert "job 7" in str(error)


def test_job_not_found_names_the_job() -> None:
    error = errors.JobNotFound(7)
    assert error.job_id == 7
    assert str(error) == "job 7 not found"


def test_retryable_carries_its_retry_after() -> None:
    assert errors.Retryable("slow down", after_ms=2500).after_ms == 2500
    assert errors.Retryable().after_ms is None
