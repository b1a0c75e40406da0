"""Provider batch rows, read the same way from every backend."""

from __future__ import annotations

from backroom.core.provider_batch import BatchCounts, BatchPhase, ProviderBatch
from backroom.store.rows import Row


def provider_batch_from_row(row: Row) -> ProviderBatch:
    """The `ProviderBatch` a row of `provider_batches` holds."""
    return ProviderBatch(
        id=int(row["id"]),
        name=row["name"],
        provider=row["provider"],
        lane=row["lane"],
        phase=BatchPhase(row["phase"]),
        provider_batch_id=row["provider_batch_id"],
        provider_status=row["provider_status"],
        counts=BatchCounts(int(row["total"]), int(row["succeeded"]), int(row["failed"])),
        polls=int(row["polls"]),
        created_at=int(row["created_at"]),
        updated_at=int(row["updated_at"]),
        due_at=int(row["due_at"]),
    )
