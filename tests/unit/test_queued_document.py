"""`queued_document` is `job_document` of the job a submission becomes, built without it."""

from __future__ import annotations

import pytest

from backroom.core.job import NewJob
from backroom.core.transitions import new_job
from backroom.service.documents import job_document, queued_document

NOW = 1_700_000_000_123


@pytest.mark.parametrize(
    "new",
    [
        NewJob(task="t", input=1, run_at=NOW),
        NewJob(
            task="report",
            input={"text": "☕"},
            run_at=NOW + 5_000,
            tenant="acme",
            queue="batch",
            priority=-3,
            max_attempts=7,
            timeout_ms=1_500,
            idempotency_key="k",
            fingerprint="f",
            metadata={"team": "a"},
            lane="openai/gpt",
            webhook_url="https://hooks.example.com/x",
            traceparent="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ),
    ],
)
def test_a_queued_document_is_the_new_jobs_document(new: NewJob) -> None:
    assert queued_document(42, new, NOW) == job_document(new_job(42, new, NOW))
