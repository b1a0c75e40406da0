"""A row of the jobs table reads as the `Job` its constructor makes of the same values
(`job_from_row` fills the frozen job's slots directly, skipping its `__init__`)."""

from __future__ import annotations

import dataclasses

import pytest

from backroom.core.job import ErrorInfo, Job, JobState, WaitReason
from backroom.store.rows import job_from_row

T0 = 1_700_000_000_000

ROW = {
    "id": 41,
    "tenant": "acme",
    "task": "summarize",
    "queue": "batch",
    "priority": 3,
    "state": "running",
    "input": '{"text": "hello"}',
    "attempt": 2,
    "max_attempts": 5,
    "timeout_ms": 9_000,
    "run_at": T0,
    "created_at": T0 - 10,
    "updated_at": T0 + 10,
    "started_at": T0 + 5,
    "finished_at": None,
    "idempotency_key": "k-1",
    "fingerprint": "f" * 64,
    "lease_token": 4,
    "lease_expires_at": T0 + 30_000,
    "worker_id": "host:1:abc",
    "result": None,
    "error_kind": "TimeoutError",
    "error_message": "slow upstream",
    "progress": 0.5,
    "partial": '"so far"',
    "cancel_requested": 0,
    "metadata": '{"source": "test"}',
    "lane": "openai/gpt-4o",
    "lane_grant": None,
    "webhook_url": "https://example.test/hook",
    "traceparent": None,
    "wait_reason": "lane",
    "waiting_since": T0 - 5,
}


def test_a_row_reads_as_the_job_its_constructor_makes() -> None:
    job = job_from_row(ROW)

    expected = Job(
        id=41,
        tenant="acme",
        task="summarize",
        queue="batch",
        priority=3,
        state=JobState.RUNNING,
        input={"text": "hello"},
        attempt=2,
        max_attempts=5,
        timeout_ms=9_000,
        run_at=T0,
        created_at=T0 - 10,
        updated_at=T0 + 10,
        started_at=T0 + 5,
        idempotency_key="k-1",
        fingerprint="f" * 64,
        lease_token=4,
        lease_expires_at=T0 + 30_000,
        worker_id="host:1:abc",
        error=ErrorInfo("TimeoutError", "slow upstream"),
        progress=0.5,
        partial="so far",
        cancel_requested=False,
        metadata={"source": "test"},
        lane="openai/gpt-4o",
        webhook_url="https://example.test/hook",
        wait_reason=WaitReason.LANE,
        waiting_since=T0 - 5,
    )
    assert job == expected and repr(job) == repr(expected)
    assert job.lease == expected.lease
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.attempt = 3  # type: ignore[misc]


def test_a_job_has_nothing_its_init_would_check() -> None:
    # job_from_row skips Job.__init__: a __post_init__ added to Job would be skipped too.
    assert not hasattr(Job, "__post_init__")
