"""Submitting jobs to PostgreSQL: one multi-row insert, then a lookup for repeated keys.

The insert skips every job whose (tenant, idempotency key) is taken, by a stored job
or by an earlier one in the same batch; only those submissions need a second statement,
which reads the jobs their keys name and compares fingerprints. A submission with a cap
(`NewJob.max_active`) first takes its tenant's advisory lock, so capped submitters of
one tenant count its active jobs one at a time, and the count stays true until their
transaction commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg

from backroom.core import transitions
from backroom.core.errors import IdempotencyConflict, QueueFull, StoreError, StoreUnavailable
from backroom.core.job import Job, NewJob, SubmitResult
from backroom.core.job_batch import SubmittedJobs, has_caps, has_keys, keys_of
from backroom.store.postgres import queries
from backroom.store.postgres.database import PooledConnection
from backroom.store.postgres.history import RECORD_TRANSITIONS, RECORD_TRANSITIONS_HINTED
from backroom.store.postgres.submit_rows import ROW_SOURCE, ROWS_FROM, rows_json
from backroom.store.rows import dump_json, job_from_row

_SUBMIT = """
WITH inserted AS (
    INSERT INTO jobs (tenant, task, queue, priority, state, input, max_attempts, timeout_ms,
                      run_at, created_at, updated_at, idempotency_key, fingerprint, metadata,
                      lane, webhook_url, traceparent)
    SELECT tenant, task, queue, priority, 'queued', input, max_attempts, timeout_ms,
           run_at, $1::bigint, $1::bigint, idempotency_key, fingerprint, metadata, lane,
           webhook_url, traceparent
    FROM {source}
    -- Ids are drawn in this order, so sorting the returned rows by id restores it.
    ORDER BY position
    {on_conflict}
    RETURNING id, tenant, idempotency_key, run_at
), moves AS (
    SELECT id AS job_id, $1::bigint AS at, NULL::text AS from_state, 'queued' AS to_state,
           $3::text AS reason
    FROM inserted
), {record}{wake}
SELECT id, tenant, idempotency_key{woken}
FROM inserted ORDER BY id
"""
"""$1 now, $2 channel, $3 reason, then the new jobs (`_ARRAY_SOURCE` or `ROW_SOURCE`):
the ids and keys of those inserted. `{record}{wake}` and `{woken}` are those
of `_NOTIFYING` or `_HINTED`."""

_NOTIFYING = {
    "record": RECORD_TRANSITIONS,
    "wake": """, wake AS (
    SELECT pg_notify($2, '') WHERE EXISTS (SELECT FROM inserted WHERE run_at <= $1)
)""",
    "woken": ", (SELECT count(*) FROM wake) AS woken",
}
"""The statement notifies the workers and the feed's readers as it commits."""

_HINTED = {
    # $2 is still sent: mention it, or the server cannot tell its type.
    "record": RECORD_TRANSITIONS_HINTED,
    "wake": "",
    "woken": ", $2::text AS channel",
}
"""The statement notifies no one: its caller sends the hints once it has committed
(`postgres.wake_hint`, `postgres.feed_hint`), so it commits without NOTIFY's lock."""

_ARRAY_SOURCE = """unnest(
             $4::text[], $5::text[], $6::text[], $7::integer[], $8::text[], $9::integer[],
             $10::bigint[], $11::bigint[], $12::text[], $13::text[], $14::text[],
             $15::text[], $16::text[], $17::text[])
         WITH ORDINALITY AS new (tenant, task, queue, priority, input, max_attempts, timeout_ms,
                                 run_at, idempotency_key, fingerprint, metadata, lane,
                                 webhook_url, traceparent, position)"""
"""$4.. one array per column of the new jobs (`_submit_columns`)."""

_ON_CONFLICT = "ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING"

SUBMIT = _SUBMIT.format(source=_ARRAY_SOURCE, on_conflict=_ON_CONFLICT, **_NOTIFYING)
"""`_SUBMIT` skipping every job whose key is taken."""

SUBMIT_KEYLESS = _SUBMIT.format(source=_ARRAY_SOURCE, on_conflict="", **_NOTIFYING)
"""`_SUBMIT` for jobs without keys, which nothing can conflict with: without ON CONFLICT
each row is inserted once, not speculatively and then confirmed (a WAL record less)."""

_SUBMIT_ROWS = _SUBMIT.format(source=ROW_SOURCE, on_conflict=_ON_CONFLICT, **_NOTIFYING)
_SUBMIT_ROWS_KEYLESS = _SUBMIT.format(source=ROW_SOURCE, on_conflict="", **_NOTIFYING)
"""`SUBMIT` and `SUBMIT_KEYLESS` reading a bulk submission's jobs from one JSON document."""

_SUBMIT_HINTED = _SUBMIT.format(source=_ARRAY_SOURCE, on_conflict=_ON_CONFLICT, **_HINTED)
_SUBMIT_HINTED_KEYLESS = _SUBMIT.format(source=_ARRAY_SOURCE, on_conflict="", **_HINTED)
_SUBMIT_ROWS_HINTED = _SUBMIT.format(source=ROW_SOURCE, on_conflict=_ON_CONFLICT, **_HINTED)
_SUBMIT_ROWS_HINTED_KEYLESS = _SUBMIT.format(source=ROW_SOURCE, on_conflict="", **_HINTED)
"""The four above, notifying no one (`_HINTED`): by (rows, keyless)."""

_STATEMENTS = {
    # (notifies, as rows, keyless)
    (True, False, False): SUBMIT,
    (True, False, True): SUBMIT_KEYLESS,
    (True, True, False): _SUBMIT_ROWS,
    (True, True, True): _SUBMIT_ROWS_KEYLESS,
    (False, False, False): _SUBMIT_HINTED,
    (False, False, True): _SUBMIT_HINTED_KEYLESS,
    (False, True, False): _SUBMIT_ROWS_HINTED,
    (False, True, True): _SUBMIT_ROWS_HINTED_KEYLESS,
}

LOCK_TENANTS = """
SELECT pg_advisory_xact_lock(hashtextextended('backroom.tenant:' || tenant, 0))
FROM unnest($1::text[]) AS tenant
"""
"""$1 tenants, sorted: each one's advisory lock until commit, taken in the order given so
that two submitters never wait for each other in a cycle."""


def _submit_columns(jobs: Sequence[NewJob]) -> list[list[Any]]:
    """The new jobs' columns, in the order `SUBMIT` expands them."""
    return [
        [new.tenant for new in jobs],
        [new.task for new in jobs],
        [new.queue for new in jobs],
        [new.priority for new in jobs],
        [dump_json(new.input) for new in jobs],
        [new.max_attempts for new in jobs],
        [new.timeout_ms for new in jobs],
        [new.run_at for new in jobs],
        [new.idempotency_key for new in jobs],
        [new.fingerprint for new in jobs],
        [dump_json(new.metadata) for new in jobs],
        [new.lane for new in jobs],
        [new.webhook_url for new in jobs],
        [new.traceparent for new in jobs],
    ]


Key = tuple[str, str]
"""A tenant and an idempotency key."""


async def submit_jobs(
    connection: PooledConnection, jobs: Sequence[NewJob], now: int, channel: str
) -> SubmittedJobs:
    """Store the new jobs; return each submission's job, created or found by its key.

    Raises `IdempotencyConflict` for a key that names a job with another fingerprint,
    and `QueueFull` for a new job whose tenant is at its cap. A caller submitting several
    jobs, or any capped one, runs this in a transaction, so then nothing stays.
    """
    capped = []
    if has_caps(jobs):
        capped = sorted({new.tenant for new in jobs if new.max_active is not None})
    active = await _lock_and_count(connection, capped) if capped else {}
    submitted, errors = await _store(connection, jobs, now, channel)
    if errors:
        raise errors[min(errors)]
    if capped:
        _check_caps(jobs, submitted.created, active)
    return submitted


async def submit_each(
    connection: PooledConnection,
    jobs: Sequence[NewJob],
    now: int,
    channel: str,
    *,
    notify: bool = True,
) -> list[SubmitResult | IdempotencyConflict | StoreUnavailable]:
    """Store the new jobs, caps not checked; each submission's result, or the error it
    alone earns (its key names a job with another fingerprint, or one that vanished).

    Outside a transaction the insert commits at once, whatever the errors: for jobs
    without a cap (`NewJob.max_active`), each submitted on its own behalf. Without
    `notify`, the statement wakes neither the workers nor the feed's readers: the caller
    hints them once it has committed.
    """
    submitted, errors = await _store(connection, jobs, now, channel, notify)
    return [errors.get(n) or submitted[n] for n in range(len(jobs))]


async def _store(
    connection: PooledConnection,
    jobs: Sequence[NewJob],
    now: int,
    channel: str,
    notify: bool = True,
) -> tuple[SubmittedJobs, dict[int, IdempotencyConflict | StoreUnavailable]]:
    """Insert the new jobs (caps not checked): what each submission got, and the errors
    some earned, by position (see `submit_each` for `notify`)."""
    transition = transitions.submitted(now)
    keyless = not has_keys(jobs)
    as_rows = len(jobs) >= ROWS_FROM
    statement = _STATEMENTS[(notify, as_rows, keyless)]
    values: list[Any] = [rows_json(jobs, now)] if as_rows else _submit_columns(jobs)
    rows = await connection.fetch(statement, transition.at, channel, transition.reason, *values)
    if keyless and len(rows) == len(jobs):
        # Nothing was skipped: the rows are the jobs, in order (most bulk submissions).
        return SubmittedJobs(jobs, now, [row[0] for row in rows]), {}
    picks = _match_inserted(jobs, rows)
    wanted = sorted({pick for pick in picks if isinstance(pick, tuple)})
    stored: dict[Key, Job] = {}
    if wanted:
        found = await connection.fetch(
            queries.JOBS_BY_KEY, [tenant for tenant, _ in wanted], [key for _, key in wanted]
        )
        stored = {(row["tenant"], row["idempotency_key"]): job_from_row(row) for row in found}
    ids: list[int] = []
    replays: dict[int, Job] = {}
    errors: dict[int, IdempotencyConflict | StoreUnavailable] = {}
    for n, pick in enumerate(picks):
        if isinstance(pick, int):
            ids.append(pick)
            continue
        repeat = _repeat(jobs[n], stored.get(pick))
        ids.append(repeat.id if isinstance(repeat, Job) else 0)
        if isinstance(repeat, Job):
            replays[n] = repeat
        else:
            errors[n] = repeat
    created = [isinstance(pick, int) for pick in picks]
    return SubmittedJobs(jobs, now, ids, created, stored=replays), errors


async def _lock_and_count(connection: PooledConnection, tenants: list[str]) -> dict[str, int]:
    """Lock the tenants (held until commit), then count their active jobs.

    Two statements: the count must see what the submitters we waited for committed.
    """
    await connection.execute(LOCK_TENANTS, tenants)
    rows = await connection.fetch(queries.ACTIVE_BY_TENANT, tenants)
    return {row["tenant"]: row["active"] for row in rows}


def _check_caps(jobs: Sequence[NewJob], created: Sequence[bool], active: dict[str, int]) -> None:
    """Raise `QueueFull` at the first created job whose tenant was already at its cap.

    A replay of a stored key is never refused; each capped job created counts against
    the caps of those after it.
    """
    for new, fresh in zip(jobs, created, strict=True):
        if fresh and new.max_active is not None:
            if active[new.tenant] >= new.max_active:
                raise QueueFull(new.tenant, new.max_active)
            active[new.tenant] += 1


def _match_inserted(jobs: Sequence[NewJob], rows: Sequence[asyncpg.Record]) -> list[int | Key]:
    """Each submission's inserted job id, or the key that names the job it repeats.

    `rows` hold the inserted jobs' ids and keys in id order, which is submission order;
    a submission inserted nothing when its key was taken, before or earlier in the batch.
    """
    created = {(row["tenant"], row["idempotency_key"]) for row in rows}
    inserted = iter(rows)
    picks: list[int | Key] = []
    for tenant, job_key in keys_of(jobs):
        key = (tenant, job_key)
        if job_key is not None and key not in created:
            picks.append((tenant, job_key))
            continue
        created.discard(key)
        row = next(inserted)
        if (row["tenant"], row["idempotency_key"]) != key:
            raise StoreError("PostgreSQL returned inserted jobs out of submission order")
        picks.append(row["id"])
    return picks


def _repeat(new: NewJob, stored: Job | None) -> Job | IdempotencyConflict | StoreUnavailable:
    """The job a submission whose key names `stored` gets, or its error."""
    if stored is None:
        # The job that held the key was deleted between the insert and the lookup.
        return StoreUnavailable(f"the job for key {new.idempotency_key!r} vanished; submit again")
    if stored.fingerprint != new.fingerprint:
        return IdempotencyConflict(new.idempotency_key or "", stored.id)
    return stored
