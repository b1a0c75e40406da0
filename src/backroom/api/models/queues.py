"""The wire format of the queue and lane steering routes (for the OpenAPI document).

The bodies are built by `backroom.service.queues`; these models only describe them.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class QueueDocument(BaseModel):
    """One queue: its jobs by state, how long its oldest due job has waited, its pause."""

    name: str
    queued: int = Field(description="Jobs waiting: the queue's depth.")
    running: int
    succeeded: int
    failed: int
    cancelled: int
    oldest_queued_age_seconds: float | None = Field(
        description="How long the oldest due queued job has waited (null: none is due)."
    )
    failure_rate_last_hour: float = Field(
        description="Share of the jobs that finished in the last hour that failed."
    )
    paused: bool = Field(description="A person paused the queue: no job of it starts.")
    paused_at: datetime | None = Field(description="When it was paused.")


class QueueList(BaseModel):
    """Every queue with jobs or a pause, by name."""

    queues: list[QueueDocument]


class PauseDocument(BaseModel):
    """A queue or lane after a pause or a resume."""

    kind: str = Field(description="`queue` or `lane`.")
    name: str
    paused: bool
    paused_at: datetime | None = Field(description="When it was paused (a repeat keeps it).")
    was_paused: bool | None = Field(
        None, description="After a resume: whether it was paused before."
    )
