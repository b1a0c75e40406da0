"""Provider batch rows, read the same way from every backend."""

from __future__ import annotations

from backroom.core.json_read import loads
from backroom.core.provider_batch import BatchCounts, BatchPhase, LineJob, ProviderBatch
from backroom.store.rows import Row, job_state

LINE_JOB_COLUMNS = """batch_lines.lease_token AS line_token, jobs.id, jobs.state,
    jobs.lease_token, jobs.attempt, jobs.max_attempts, jobs.tenant, jobs.lane, jobs.metadata,
    jobs.input"""
"""What `line_job_from_row` reads, from `batch_lines` joined to `jobs`."""


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


def line_job_from_row(row: Row) -> LineJob:
    """The `LineJob` of a row of `LINE_JOB_COLUMNS` (its JSON read by orjson)."""
    metadata = row["metadata"]
    return LineJob(
        id=row["id"],
        line_token=row["line_token"],
        state=job_state(row["state"]),
        lease_token=row["lease_token"],
        attempt=row["attempt"],
        max_attempts=row["max_attempts"],
        tenant=row["tenant"],
        lane=row["lane"],
        metadata={} if metadata == "{}" else loads(metadata),
        input=loads(row["input"]),
    )
