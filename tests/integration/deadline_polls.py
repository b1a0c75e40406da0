"""Waiting on real processes: poll a condition until it holds, with a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(predicate: Callable[[], bool], what: str, seconds: float = 60) -> None:
    """Poll `predicate` until it holds, or fail naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
