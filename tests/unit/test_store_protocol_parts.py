"""The `Store` protocol is its parts: each method belongs to exactly one consumer's part."""

from __future__ import annotations

import inspect

from backroom.store import protocol

PARTS = [
    protocol.JobStore,
    protocol.LeaseStore,
    protocol.HandlerWriteStore,
    protocol.TenantStore,
    protocol.LaneStore,
    protocol.UsageStore,
    protocol.CallStore,
    protocol.EventStore,
    protocol.AdminStore,
    protocol.EventFeed,
    protocol.WebhookStore,
    protocol.QueueStore,
    protocol.InsightStore,
    protocol.WorkerRegistry,
    protocol.BatchStore,
]


def methods(part: type) -> set[str]:
    """The public methods a protocol class itself declares."""
    return {name for name, _ in inspect.getmembers(part, inspect.isfunction) if name[0] != "_"}


def own_methods(part: type) -> set[str]:
    """The public methods declared in the class body of `part`, not inherited."""
    return {name for name in vars(part) if name[0] != "_" and callable(vars(part)[name])}


def test_every_method_of_the_store_is_in_exactly_one_part() -> None:
    declared = [name for part in PARTS for name in own_methods(part)]

    assert sorted(declared) == sorted(set(declared))
    assert set(declared) == methods(protocol.Store)
    assert not own_methods(protocol.Store)


def test_the_consumers_parts_are_made_of_the_stores_parts() -> None:
    everything = methods(protocol.Store)

    for consumer in (protocol.WorkerStore, protocol.ServiceStore, protocol.AttemptStore):
        assert methods(consumer) <= everything
    # A worker never submits, lists, cancels or redrives: that is the service's.
    assert not methods(protocol.WorkerStore) & own_methods(protocol.JobStore)
    assert not methods(protocol.ServiceStore) & own_methods(protocol.LeaseStore)
