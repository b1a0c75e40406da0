"""Submitting jobs to PostgreSQL: one multi-row insert, then a lookup for repeated keys.

The insert skips every job whose (tenant, idempotency key) is taken, by a stored job
or by an earlier one in the same batch; only those submissions need a second statement,
which reads the jobs their keys name and compares fingerprints.

A submission with a cap (`NewJob.max_active`) first takes its tenant's advisory lock,
so capped submitters of one tenant count its active jobs one at a time, and the count
stays true until their transaction commits.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from backroom.core.errors import IdempotencyConflict, QueueFull, StoreError, StoreUnavailable
from backroom.core.job import Job, NewJob, SubmitResult
from backroom.core.transitions import new_job
from backroom.store.postgres import queries, sql
from backroom.store.postgres.database import PooledConnection
from backroom.store.postgres.params import submit_columns
from backroom.store.rows import Reason, job_from_row

Key = tuple[str, str]
"""A tenant and an idempotency key."""


async def submit_jobs(
    connection: PooledConnection, jobs: Sequence[NewJob], now: int, channel: str
) -> list[SubmitResult]:
    """Store the new jobs; return each submission's job, created or found by its key.

    Raises `IdempotencyConflict` for a key that names a job with another fingerprint,
    and `QueueFull` for a new job whose tenant is at its cap. A caller submitting several
    jobs, or any capped one, runs this in a transaction, so then nothing stays.
    """
    capped = sorted({new.tenant for new in jobs if new.max_active is not None})
    active = await _lock_and_count(connection, capped) if capped else {}
    rows = await connection.fetch(sql.SUBMIT, now, channel, Reason.SUBMITTED, *submit_columns(jobs))
    picks = _match_inserted(jobs, rows, now)
    wanted = sorted({pick for pick in picks if isinstance(pick, tuple)})
    stored: dict[Key, Job] = {}
    if wanted:
        found = await connection.fetch(
            queries.JOBS_BY_KEY, [tenant for tenant, _ in wanted], [key for _, key in wanted]
        )
        stored = {(row["tenant"], row["idempotency_key"]): job_from_row(row) for row in found}
    results = [
        SubmitResult(pick, True) if isinstance(pick, Job) else _repeat(new, stored.get(pick))
        for new, pick in zip(jobs, picks, strict=True)
    ]
    _check_caps(jobs, results, active)
    return results


async def _lock_and_count(connection: PooledConnection, tenants: list[str]) -> dict[str, int]:
    """Lock the tenants (held until commit), then count their active jobs.

    Two statements: the count must see what the submitters we waited for committed.
    """
    await connection.execute(sql.LOCK_TENANTS, tenants)
    rows = await connection.fetch(queries.ACTIVE_BY_TENANT, tenants)
    return {row["tenant"]: row["active"] for row in rows}


def _check_caps(
    jobs: Sequence[NewJob], results: Sequence[SubmitResult], active: dict[str, int]
) -> None:
    """Raise `QueueFull` at the first created job whose tenant was already at its cap.

    A replay of a stored key is never refused; each capped job created counts against
    the caps of those after it.
    """
    for new, result in zip(jobs, results, strict=True):
        if result.created and new.max_active is not None:
            if active[new.tenant] >= new.max_active:
                raise QueueFull(new.tenant, new.max_active)
            active[new.tenant] += 1


def _match_inserted(
    jobs: Sequence[NewJob], rows: Sequence[asyncpg.Record], now: int
) -> list[Job | Key]:
    """Each submission's inserted job, or the key that names the job it repeats.

    `rows` hold the inserted jobs' ids and keys in id order, which is submission order;
    a submission inserted nothing when its key was taken, before or earlier in the
    batch. An inserted job is exactly what the core says a submission creates.
    """
    created = {(row["tenant"], row["idempotency_key"]) for row in rows}
    inserted = iter(rows)
    picks: list[Job | Key] = []
    for new in jobs:
        key = (new.tenant, new.idempotency_key)
        if new.idempotency_key is not None and key not in created:
            picks.append((new.tenant, new.idempotency_key))
            continue
        created.discard(key)
        row = next(inserted)
        if (row["tenant"], row["idempotency_key"]) != key:
            raise StoreError("PostgreSQL returned inserted jobs out of submission order")
        picks.append(new_job(row["id"], new, now))
    return picks


def _repeat(new: NewJob, stored: Job | None) -> SubmitResult:
    """The result of a submission whose key names `stored`."""
    if stored is None:
        # The job that held the key was deleted between the insert and the lookup.
        raise StoreUnavailable(f"the job for key {new.idempotency_key!r} vanished; submit again")
    if stored.fingerprint != new.fingerprint:
        raise IdempotencyConflict(new.idempotency_key or "", stored.id)
    return SubmitResult(stored, False)
