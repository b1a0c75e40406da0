"""Ending attempts in memory: write each outcome's transition only if its lease is held."""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core import transitions
from backroom.core.job import Lease
from backroom.core.lifecycle import Transition
from backroom.core.outcome import Outcome
from backroom.store.memory.history import facts_of, write_transition
from backroom.store.memory.tables import MemoryTables


def finish(
    tables: MemoryTables, results: Sequence[tuple[Lease, Outcome]], now: int
) -> list[Transition | None]:
    """Apply each outcome whose lease is still held: its transition, or None where not held.

    Every outcome takes its job out of `running`, so a lease named twice in one batch
    applies once.
    """
    applied: list[Transition | None] = []
    for lease, outcome in results:
        row = tables.held(lease)
        if row is None:
            applied.append(None)
            continue
        transition = transitions.finished(outcome, now, facts_of(row))
        write_transition(tables, row, transition)
        applied.append(transition)
    return applied
