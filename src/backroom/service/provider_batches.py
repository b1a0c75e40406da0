"""Provider batches as the API shows them: the open ones (admin), and a job's own."""

from __future__ import annotations

from typing import Any

from backroom.core.job import Job, JobState
from backroom.core.provider_batch import ProviderBatch
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import iso
from backroom.service.replies import Reply, problem

MAX_LISTED = 1_000


def batch_document(batch: ProviderBatch) -> dict[str, Any]:
    """A provider batch as `GET /v1/batches` lists it."""
    document = batch.document()
    assert isinstance(document, dict)
    return document | {"created_at": iso(batch.created_at), "updated_at": iso(batch.updated_at)}


def job_batch_document(batch: ProviderBatch) -> dict[str, Any]:
    """A job's `provider_batch`: `{id, status, counts}` of the batch holding it."""
    document = batch_document(batch)
    return {key: document[key] for key in ("id", "status", "counts")}


async def list_provider_batches(app: AppParts, caller: Caller) -> Reply:
    """Every provider batch not closed, oldest first (admin only: batches mix tenants)."""
    if not caller.admin:
        return problem(403, "only an admin may list provider batches: they hold every tenant's")
    batches = await app.store.provider_batches(MAX_LISTED)
    return Reply(200, {"batches": [batch_document(batch) for batch in batches]})


async def provider_batch_of(app: AppParts, job: Job) -> dict[str, Any] | None:
    """The `provider_batch` of a job offloaded to one (running with no worker), or None."""
    if job.state is not JobState.RUNNING or job.worker_id is not None:
        return None
    batch = await app.store.job_batch(job.id)
    return None if batch is None else job_batch_document(batch)
