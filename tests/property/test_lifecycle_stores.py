"""The lifecycle state machine driving each real store, step for step with the core.

Every operation runs on the reference store and on a real store (SQLite, memory);
their results must be equal, and after every step so must every stored job. The store
is async, so each machine keeps one event loop for its lifetime and runs each call to
completion on it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import invariant
from lifecycle_machine import LifecycleMachine

from backroom.core.errors import BackroomError
from backroom.core.job import Job
from backroom.store.memory import MemoryStore, MemoryTables
from backroom.store.protocol import JobFilter, Store
from backroom.store.sqlite.store import SqliteStore

# More than a run of the machine can ever submit, so one page lists every job.
ALL_JOBS = JobFilter(limit=10_000)


def in_id_order(value: Any) -> Any:
    """A list of jobs sorted by id: stores promise no order for the jobs a call changed."""
    if isinstance(value, list) and all(isinstance(item, Job) for item in value):
        return sorted(value, key=lambda job: job.id)
    return value


class StoreLifecycleMachine(LifecycleMachine):
    """The lifecycle machine, with each operation also carried out on the store that
    `open_store` opens."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.store = self.open_store()
        self.loop.run_until_complete(self.store.migrate())

    def open_store(self) -> Store:
        """A new, empty store for one run of the machine."""
        raise NotImplementedError

    def teardown(self) -> None:
        """Close the store, then the loop."""
        try:
            self.loop.run_until_complete(self.store.close())
        finally:
            self.loop.close()

    def perform(self, operation: str, *args: Any) -> Any:
        """Carry out `operation` on both stores; they must agree, even on refusals."""
        on_store = getattr(self.store, operation)
        try:
            expected = super().perform(operation, *args)
        except BackroomError as error:
            with pytest.raises(type(error)):
                self.loop.run_until_complete(on_store(*args))
            raise
        actual = self.loop.run_until_complete(on_store(*args))
        assert in_id_order(actual) == in_id_order(expected), operation
        return expected

    @invariant()
    def store_matches_reference(self) -> None:
        """The store holds exactly the reference's jobs, field for field."""
        stored = self.loop.run_until_complete(self.store.list_jobs(ALL_JOBS))
        assert in_id_order(stored) == in_id_order(list(self.reference.jobs.values()))


class SqliteLifecycleMachine(StoreLifecycleMachine):
    """On a private in-memory SQLite database."""

    def open_store(self) -> Store:
        """A private in-memory SQLite database."""
        return SqliteStore.from_url("sqlite://:memory:")


class MemoryLifecycleMachine(StoreLifecycleMachine):
    """On the memory store, whose indexes must also agree with its rows after every step."""

    def open_store(self) -> Store:
        """A memory store on tables this machine also inspects."""
        self.tables = MemoryTables()
        return MemoryStore(self.tables)

    @invariant()
    def indexes_match_rows(self) -> None:
        """The claim, wake-up, running and per-tenant indexes say what the rows say."""
        rebuilt = MemoryTables()
        for row in self.tables.jobs.values():
            rebuilt.insert_job(dataclasses.replace(row))
        assert self.tables.claimable == rebuilt.claimable
        assert self.tables.due == rebuilt.due
        assert self.tables.running.keys() == rebuilt.running.keys()
        assert +self.tables.active == +rebuilt.active  # unary +: without zero counts
        assert self.tables.by_key == rebuilt.by_key


MACHINE_SETTINGS = settings(
    max_examples=100,
    stateful_step_count=30,
    deadline=None,
    # Timing checks would fail on a loaded machine, and a state machine filters by design
    # (rules wait for their preconditions): neither says the store is wrong.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

TestSqliteLifecycle = SqliteLifecycleMachine.TestCase
TestSqliteLifecycle.settings = MACHINE_SETTINGS
TestMemoryLifecycle = MemoryLifecycleMachine.TestCase
TestMemoryLifecycle.settings = MACHINE_SETTINGS
