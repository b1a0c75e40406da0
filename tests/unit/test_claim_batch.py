"""A busy worker lets freed slots gather into one claim, for at most a poll interval."""

from __future__ import annotations

import inspect

from backroom.api.server import ServeConfig
from backroom.cli.serve import serve_command
from backroom.cli.worker import worker
from backroom.runtime.claim_batch import SlotGathering
from backroom.runtime.worker_config import WorkerConfig

T0 = 1_000_000


def test_the_floor_is_a_tenth_of_the_slots_unless_set() -> None:
    assert WorkerConfig(concurrency=100).claim_floor == 10
    assert WorkerConfig(concurrency=5).claim_floor == 1
    assert WorkerConfig(concurrency=100, claim_batch=1).claim_floor == 1
    assert WorkerConfig(concurrency=4, claim_batch=50).claim_floor == 4


def test_an_idle_worker_or_enough_free_slots_claim_at_once() -> None:
    gathering = SlotGathering(WorkerConfig(concurrency=100))
    assert gathering.until(T0, 3, running=0) is None
    assert gathering.until(T0, 10, running=90) is None


def test_a_busy_worker_waits_for_the_floor_at_most_a_poll_interval() -> None:
    gathering = SlotGathering(WorkerConfig(concurrency=100, poll_interval_ms=1_000))
    assert gathering.until(T0, 2, running=98) == T0 + 1_000
    assert gathering.until(T0 + 400, 5, running=95) == T0 + 1_000  # the same deadline
    assert gathering.until(T0 + 1_000, 5, running=95) is None  # waited long enough
    assert gathering.until(T0 + 1_001, 1, running=99) == T0 + 2_001  # a new wait


def test_the_wait_ends_by_stop_at() -> None:
    config = WorkerConfig(concurrency=100, poll_interval_ms=1_000, stop_at=T0 + 300)
    assert SlotGathering(config).until(T0, 1, running=99) == T0 + 300


def test_the_library_the_worker_command_and_serve_share_one_default() -> None:
    commands = [inspect.signature(command).parameters for command in (worker, serve_command)]
    assert [parameters["concurrency"].default for parameters in commands] == [
        WorkerConfig().concurrency
    ] * 2
    assert ServeConfig().concurrency == WorkerConfig().concurrency
    assert inspect.signature(worker).parameters["claim_batch"].default is None
