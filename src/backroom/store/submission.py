"""Resolving a batch of submissions against stored idempotency keys and tenant caps.

Shared by the stores that resolve a batch in Python before writing it (SQLite under
its write lock, memory between awaits): each submission either names a job stored
already (or earlier in the batch) by its key, or is planned as an insert. Nothing is
written while resolving, so a conflict or a full queue leaves the store as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from backroom.core.errors import IdempotencyConflict, QueueFull
from backroom.core.job import Job, NewJob, SubmitResult
from backroom.core.job_batch import SubmittedJobs


@dataclass(frozen=True, slots=True)
class _Pick:
    """What one submission resolved to: a job already stored, or the n-th job inserted."""

    created: bool
    stored: Job | None = None
    inserted: int = -1


class SubmissionPlan:
    """One batch of submissions: `inserts` are the jobs to store, in order.

    `stored(tenant, key)` finds the job a key names in the store; `active(tenant)`
    counts the tenant's queued and running jobs there.
    """

    def __init__(
        self, stored: Callable[[str, str], Job | None], active: Callable[[str], int]
    ) -> None:
        self._stored = stored
        self._count_active = active
        self.inserts: list[NewJob] = []
        self._picks: list[_Pick] = []
        self._by_key: dict[tuple[str, str], _Pick] = {}
        self._active: dict[str, int] = {}

    def add(self, new: NewJob) -> None:
        """Resolve one submission: reuse the job its key names, or plan an insert.

        Raises `IdempotencyConflict` for a key naming another fingerprint, and
        `QueueFull` for an insert beyond its tenant's cap (checked after the key, so a
        replay is answered even at the cap).
        """
        if new.idempotency_key is None:
            self._picks.append(self._insert(new))
            return
        key = (new.tenant, new.idempotency_key)
        earlier = self._by_key.get(key) or self._found(key)
        if earlier is None:
            pick = self._insert(new)
        elif self._fingerprint(earlier) == new.fingerprint:
            pick = _Pick(created=False, stored=earlier.stored, inserted=earlier.inserted)
        else:
            # A key repeated within one batch names a job not inserted yet: there is no id.
            job_id = earlier.stored.id if earlier.stored else 0
            raise IdempotencyConflict(new.idempotency_key, job_id)
        self._by_key[key] = pick
        self._picks.append(pick)

    def results(self, inserted: Sequence[Job]) -> list[SubmitResult]:
        """Each submission's result, given the jobs `inserts` became, in order."""
        return [
            SubmitResult(pick.stored or inserted[pick.inserted], pick.created)
            for pick in self._picks
        ]

    def submitted(self, ids: Sequence[int], now: int) -> SubmittedJobs:
        """Each submission's result, given the ids `inserts` got at `now`, in order; the
        jobs are built when read."""
        return SubmittedJobs(
            self.inserts,
            now,
            [pick.stored.id if pick.stored else ids[pick.inserted] for pick in self._picks],
            [pick.created for pick in self._picks],
            sources=[pick.inserted for pick in self._picks],
            stored={n: pick.stored for n, pick in enumerate(self._picks) if pick.stored},
        )

    def _insert(self, new: NewJob) -> _Pick:
        if new.max_active is not None:
            active = self._active.get(new.tenant)
            if active is None:
                active = self._count_active(new.tenant)
            if active >= new.max_active:
                raise QueueFull(new.tenant, new.max_active)
            self._active[new.tenant] = active + 1
        self.inserts.append(new)
        return _Pick(created=True, inserted=len(self.inserts) - 1)

    def _found(self, key: tuple[str, str]) -> _Pick | None:
        job = self._stored(*key)
        return None if job is None else _Pick(created=False, stored=job)

    def _fingerprint(self, pick: _Pick) -> str | None:
        return pick.stored.fingerprint if pick.stored else self.inserts[pick.inserted].fingerprint


def plan_submissions(
    jobs: Sequence[NewJob],
    stored: Callable[[str, str], Job | None],
    active: Callable[[str], int],
) -> SubmissionPlan:
    """Resolve every submission of `jobs` (see `SubmissionPlan`)."""
    plan = SubmissionPlan(stored, active)
    for new in jobs:
        plan.add(new)
    return plan
