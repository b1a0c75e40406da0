"""The memory store's batch offload tables: provider batches and offloaded jobs' lines."""

from __future__ import annotations

from dataclasses import dataclass, field

from backroom.core.provider_batch import ProviderBatch


@dataclass(slots=True)
class BatchLineRow:
    """One offloaded claim's line; `batch_id` None while it waits for a batch."""

    job_id: int
    lease_token: int
    lane: str
    handed_at: int
    batch_id: int | None = None


@dataclass
class BatchTables:
    """Provider batches by id (as frozen values, replaced on change) and lines by claim."""

    batches: dict[int, ProviderBatch] = field(default_factory=dict)
    last_batch_id: int = 0
    lines: dict[tuple[int, int], BatchLineRow] = field(default_factory=dict)
