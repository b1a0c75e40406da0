"""Submitting many jobs in few requests (`POST /v1/jobs:batch`), as a plan (see
`backroom.client.plans`) that `Client.submit_many` and `AsyncClient.submit_many` run.

Every job carries an idempotency key (a fresh one unless given), so a batch retried
after a lost answer replays the jobs the first try made instead of making them again.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from backroom.client.errors import ApiError, problem_error
from backroom.client.plans import Plan, Plans, RemoteJob, Send, Submitted
from backroom.core.job import JSON

BATCH_LIMIT = 1_000
"""The most jobs the server takes in one request: longer lists are sent in parts."""


@dataclass(frozen=True, slots=True)
class JobRequest:
    """One job for `submit_many`: the arguments of `submit`."""

    task: str
    input: JSON = None
    key: str | None = None
    queue: str | None = None
    priority: int | None = None
    max_attempts: int | None = None
    timeout_s: float | None = None
    delay_s: float | None = None
    metadata: dict[str, JSON] | None = field(default=None)
    webhook_url: str | None = None

    def body(self, key: str) -> dict[str, Any]:
        """The job as the batch request carries it, under `key`."""
        options = {
            "queue": self.queue,
            "priority": self.priority,
            "max_attempts": self.max_attempts,
            "timeout_s": self.timeout_s,
            "delay_s": self.delay_s,
            "metadata": self.metadata,
            "webhook_url": self.webhook_url,
        }
        chosen = {name: value for name, value in options.items() if value is not None}
        return {"task": self.task, "input": self.input, "idempotency_key": key, **chosen}


BatchResults = list[Submitted | ApiError]
"""Each job's outcome, in order: submitted, or the typed error of its own refusal."""


def submit_many(plans: Plans, jobs: Sequence[JobRequest]) -> Plan[BatchResults]:
    """Submit `jobs`, up to `BATCH_LIMIT` a request; each one's outcome, in order.

    A job the server refuses (its tenant at the cap, a bad field) is answered with its
    error in its place, not raised: the other jobs of the batch were submitted.
    """
    keyed = [(job, job.key or str(uuid.uuid4())) for job in jobs]
    results: BatchResults = []
    for first in range(0, len(keyed), BATCH_LIMIT):
        part = keyed[first : first + BATCH_LIMIT]
        body = {"jobs": [job.body(key) for job, key in part]}
        document, _ = yield from plans.call(Send("POST", "/v1/jobs:batch", json=body))
        for entry, (_, key) in zip(document["results"], part, strict=True):
            results.append(_outcome(entry, key))
    return results


def _outcome(entry: dict[str, Any], key: str) -> Submitted | ApiError:
    status = entry["status"]
    if status < 400:
        return Submitted(RemoteJob.from_document(entry["job"]), status == 202, key)
    return problem_error(status, entry["problem"], entry.get("retry_after_s"))
