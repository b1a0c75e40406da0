"""The provider batch documents: `GET /v1/batches` and a job's `provider_batch`."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class BatchCountsDocument(BaseModel):
    """How many of a batch's lines the provider has answered."""

    total: int
    succeeded: int
    failed: int
    pending: int = Field(description="Lines with no result yet.")


class JobBatchDocument(BaseModel):
    """The provider batch an offloaded job waits in."""

    id: str | None = Field(description="The provider's batch id (null until it is stored).")
    status: str = Field(
        description="The provider's status (validating, in_progress, finalizing, ...), or "
        "`intent` while backroom is sending it."
    )
    counts: BatchCountsDocument


class ProviderBatchDocument(JobBatchDocument):
    """A provider batch not yet closed: its jobs wait in it, holding no worker."""

    batch: int = Field(description="backroom's own number for the batch.")
    name: str = Field(description="The name its metadata carries (`backroom_batch`).")
    provider: str
    lane: str
    phase: str = Field(description="intent (being sent), open (sent) or closed.")
    created_at: datetime
    updated_at: datetime


class ProviderBatchList(BaseModel):
    """`GET /v1/batches`: every provider batch not yet closed, oldest first."""

    batches: list[ProviderBatchDocument]
