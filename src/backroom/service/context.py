"""What the operations use of an `App`: its store, clock, tasks and retry policy.

The operations take this rather than `App` itself, so that `App` can delegate to them
without the two importing each other; an `App` is one, structurally.
"""

from __future__ import annotations

from typing import Protocol

from backroom.clock import Clock
from backroom.core.retry import RetryPolicy
from backroom.store.protocol import ServiceStore
from backroom.tasks import TaskRegistry


class AppParts(Protocol):
    """The parts of an `App` an operation needs."""

    clock: Clock
    retry: RetryPolicy
    tasks: TaskRegistry

    @property
    def store(self) -> ServiceStore:
        """The opened store."""
