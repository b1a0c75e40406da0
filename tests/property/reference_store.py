"""A reference store: jobs in a dict, changed only through `backroom.core.transitions`.

It offers the lifecycle half of the `Store` protocol, synchronously, with the same
arguments and results, so a state machine can run one random sequence of operations
on it and on a real store and compare the two after every step.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from backroom.core import transitions
from backroom.core.errors import IdempotencyConflict
from backroom.core.job import Job, JobState, Lease, NewJob, SubmitResult
from backroom.core.outcome import Outcome
from backroom.store.protocol import HeartbeatResult, RedriveFilter


def in_fair_order(jobs: Sequence[Job]) -> list[Job]:
    """Jobs of one lane in claim order: highest priority first; within a priority the
    tenants take turns (each tenant's oldest due job, then each one's next...)."""
    turns: dict[tuple[str, int], int] = defaultdict(int)
    ranked = []
    for job in sorted(jobs, key=lambda job: (job.run_at, job.id)):
        turns[job.tenant, job.priority] += 1
        ranked.append(((-job.priority, turns[job.tenant, job.priority], job.run_at, job.id), job))
    return [job for _, job in sorted(ranked, key=lambda entry: entry[0])]


class ReferenceStore:
    """The lifecycle operations of `Store`, defined by the pure core."""

    def __init__(self) -> None:
        self.jobs: dict[int, Job] = {}
        self._keys: dict[tuple[str, str], int] = {}

    def holds(self, lease: Lease) -> bool:
        """Whether `lease` is the current lease of its running job."""
        job = self.jobs.get(lease.job_id)
        return job is not None and job.state is JobState.RUNNING and job.lease_token == lease.token

    def submit(self, new: NewJob, now: int) -> SubmitResult:
        """Create a queued job, or return the one the idempotency key already names."""
        if new.idempotency_key is not None:
            known = self._keys.get((new.tenant, new.idempotency_key))
            if known is not None:
                if self.jobs[known].fingerprint != new.fingerprint:
                    raise IdempotencyConflict(new.idempotency_key, known)
                return SubmitResult(self.jobs[known], created=False)
            self._keys[new.tenant, new.idempotency_key] = len(self.jobs) + 1
        job = transitions.new_job(len(self.jobs) + 1, new, now)
        self.jobs[job.id] = job
        return SubmitResult(job, created=True)

    def claim(
        self, queues: Sequence[str], limit: int, worker_id: str, lease_ms: int, now: int
    ) -> list[Job]:
        """Claim up to `limit` due queued jobs, lane by lane (see `lanes`), fairly in each."""
        chosen: list[Job] = []
        for queue in self.lanes(queues):
            due = [
                job
                for job in self.jobs.values()
                if job.state is JobState.QUEUED and job.queue == queue and job.run_at <= now
            ]
            chosen += in_fair_order(due)[: limit - len(chosen)]
        claimed = [transitions.claim(job, now, worker_id, lease_ms) for job in chosen]
        self._save(claimed)
        return claimed

    def lanes(self, queues: Sequence[str]) -> list[str]:
        """The queues a claim serves, in turn: as listed, or else every queue with queued
        jobs, `interactive` first, `batch` last, the rest by name."""
        if queues:
            return list(queues)
        names = {job.queue for job in self.jobs.values() if job.state is JobState.QUEUED}
        return sorted(names, key=lambda name: (name != "interactive", name == "batch", name))

    def heartbeat(self, leases: Sequence[Lease], lease_ms: int, now: int) -> HeartbeatResult:
        """Extend the held leases; report the others as lost."""
        held = [lease for lease in leases if self.holds(lease)]
        extended = [transitions.heartbeat(self.jobs[lease.job_id], now, lease_ms) for lease in held]
        self._save(extended)
        return HeartbeatResult(
            lost=frozenset(lease.job_id for lease in leases if lease not in held),
            cancel_requested=frozenset(job.id for job in extended if job.cancel_requested),
        )

    def finish(self, results: Sequence[tuple[Lease, Outcome]], now: int) -> list[bool]:
        """Apply each outcome whose lease is still held, in order."""
        applied = []
        for lease, outcome in results:
            held = self.holds(lease)
            if held:
                self._save([transitions.finish(self.jobs[lease.job_id], outcome, now)])
            applied.append(held)
        return applied

    def expire_leases(self, now: int) -> list[Job]:
        """Requeue or fail every running job whose lease ran out by `now`."""
        expired = [
            transitions.expire(job, now)
            for job in self.jobs.values()
            if job.state is JobState.RUNNING
            and job.lease_expires_at is not None
            and job.lease_expires_at <= now
        ]
        self._save(expired)
        return expired

    def cancel(self, job_id: int, now: int) -> Job | None:
        """Cancel a queued job, flag a running one; a finished job is left as it is."""
        job = self.jobs.get(job_id)
        if job is None or job.state.terminal:
            return job
        self._save([transitions.cancel(job, now)])
        return self.jobs[job_id]

    def redrive(self, where: RedriveFilter, now: int) -> list[Job]:
        """Send failed jobs back to the queue: those in `where.job_ids`, or all of them."""
        chosen = [
            job
            for job in self.jobs.values()
            if job.state is JobState.FAILED and (not where.job_ids or job.id in where.job_ids)
        ]
        redriven = [transitions.redrive(job, now) for job in chosen]
        self._save(redriven)
        return redriven

    def _save(self, jobs: Sequence[Job]) -> None:
        for job in jobs:
            self.jobs[job.id] = job
