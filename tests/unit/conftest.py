"""Fixtures that unit tests ask for by name."""

from __future__ import annotations

import pytest

from backroom.clock import Clock
from backroom.llm.progress import DeltaCallback, StreamProgress
from backroom.llm.providers.openai import call


@pytest.fixture
def every_streamed_delta_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streamed text is passed on at every delta, not once per 250 ms of clock time.

    What a test then sees stored mid-stream does not hang on how the machine schedules
    its process: under load the deltas of a whole stream can arrive in one burst, inside
    one interval. The interval itself is tested in test_llm_progress.py.
    """

    def every_delta(clock: Clock, on_delta: DeltaCallback | None) -> StreamProgress:
        return StreamProgress(clock, on_delta, interval_ms=0)

    monkeypatch.setattr(call, "StreamProgress", every_delta)
