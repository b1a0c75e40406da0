"""The wire format of the admin routes: the workers, and a tenant's caps.

The bodies are built by `backroom.service.workers` and `backroom.service.tenant_edit`;
these models describe them for the OpenAPI document (and check a change of caps).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt


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


class TenantCapsChange(BaseModel):
    """The settings of a tenant to change; a field left out stays as it is, null
    removes that cap. Amounts of money are exact: a JSON string (`"5.25"`) or number."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"max_queued": 500, "daily_budget_usd": "25"}]},
    )

    # Strict: JSON `true` or `1.5` is not a cap, though Python would take them as 1.
    max_queued: StrictInt | None = Field(
        None, ge=1, description="Cap of the tenant's queued or running jobs (null: none)."
    )
    daily_budget_usd: Decimal | None = Field(
        None, ge=0, description="LLM spend allowed per UTC day, in US dollars (null: none)."
    )
    max_job_cost_usd: Decimal | None = Field(
        None,
        ge=0,
        description="Cap of one job's LLM cost, for jobs that set none (null: none).",
    )


class TenantDocument(BaseModel):
    """A tenant's settings (money as exact decimal strings of US dollars)."""

    name: str
    admin: bool
    created_at: datetime
    max_queued: int | None
    daily_budget_usd: str | None
    max_job_cost_usd: str | None
