"""The worker's log lines about leases lost and the shutdown's hand-back (the lines of
every attempt's start and end are `backroom.telemetry.job_log`'s).

Errors are logged by their kind and message only: a job's input, result and metadata
(which may hold anything a user put there) never reach the log.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from backroom.core.job import Job

log = logging.getLogger("backroom.worker")


def log_lease_lost(job: Job, when: str) -> None:
    """A line for a job whose lease this worker lost (it expired, or another took it)."""
    log.warning(
        "job %d (%s): lease lost %s; its attempt is abandoned, the job is not this "
        "worker's any more",
        job.id,
        job.task,
        when,
    )


def log_grace(running: int, grace_ms: int) -> None:
    """The line that opens the shutdown grace period."""
    log.info(
        "stopping: claiming no more jobs, waiting up to %.1f s for %d running job(s)",
        grace_ms / 1000,
        running,
    )


def log_handed_back(job_ids: Collection[int]) -> None:
    """The shutdown line: which unfinished jobs go back to the queue."""
    if job_ids:
        listed = ", ".join(str(job_id) for job_id in sorted(job_ids))
        log.warning(
            "grace period over: handing %d unfinished job(s) back to the queue: %s",
            len(job_ids),
            listed,
        )
    log.info("stopped: %d job(s) handed back to the queue", len(job_ids))
