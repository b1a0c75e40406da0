"""The lifecycle state machine against the pure core alone."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from lifecycle_machine import LifecycleMachine

TestCoreLifecycle = LifecycleMachine.TestCase
TestCoreLifecycle.settings = settings(
    max_examples=100,
    stateful_step_count=30,
    deadline=None,
    # Timing checks would fail on a loaded machine, and a state machine filters by design
    # (rules wait for their preconditions): neither says the store is wrong.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
