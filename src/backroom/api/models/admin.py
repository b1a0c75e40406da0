"""The wire format of the admin routes: the workers, and a tenant's caps.

The bodies are built by `backroom.service.workers` and `backroom.service.tenant_edit`;
these models describe them for the OpenAPI document.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class RunningJob(BaseModel):
    """A job a worker holds the lease of."""

    id: int
    task: str
    queue: str
    tenant: str


class WorkerDocument(BaseModel):
    """One worker process, as its heartbeats keep it in the registry."""

    id: str = Field(description="The worker id: the owner its leases name.")
    state: Literal["alive", "lost", "stopped", "unregistered"] = Field(
        description="alive: beating; lost: silent for 3 heartbeat intervals; stopped: shut "
        "down gracefully; unregistered: seen only through the leases of its jobs."
    )
    hostname: str | None
    pid: int | None
    queues: list[str] | None = Field(description="The queues it claims from (empty: every one).")
    concurrency: int | None = Field(description="How many jobs it runs at once.")
    heartbeat_interval_seconds: float | None
    started_at: datetime | None
    heartbeat_at: datetime | None = Field(description="Its last heartbeat.")
    stopped_at: datetime | None
    running: list[RunningJob] = Field(description="The running jobs whose lease it holds.")


class WorkerList(BaseModel):
    """Every registered worker, by id."""

    workers: list[WorkerDocument]
