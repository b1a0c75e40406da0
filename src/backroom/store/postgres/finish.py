"""Ending attempts on PostgreSQL: a batch of outcomes, or a sweep of expired leases.

Each is one statement. Both build `held` (the jobs whose attempt ends, locked, each
with the running attempt as its job's row holds it and the core transition that ends
it) and share the rest (`_END_ATTEMPTS`): the job rows, their attempt rows, the
transitions' history, and a wake-up when a job is queued again. An attempt's row is
written here, once, when it ends: until then its job's row holds it (see
`postgres.queries`), except for an attempt that leaves its job's row behind, stored
before (an offload to a provider batch, a lane move that leaves the attempt in its
lane) and ended here in place. Batches travel as parallel arrays expanded by `unnest`.

What ends an attempt may depend on `RunningFacts` only the database knows when it
writes, so a transition that does is sent once per case (`when_spent`,
`when_cancel_requested`; NULL matches any) and each job joins the case that fits it.

Locks are taken in job id order, each row by its own `FOR UPDATE` in a LATERAL
subquery the planner can neither flatten nor reorder: two batches that share jobs
queue behind each other instead of deadlocking, and the cost stays linear in the batch.
The sweep skips rows another transaction holds and never waits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from backroom.core import transitions
from backroom.core.job import Job, Lease
from backroom.core.lifecycle import RunningFacts, Transition
from backroom.core.outcome import Outcome, Succeeded
from backroom.store.postgres.database import PooledConnection
from backroom.store.postgres.history import RECORD_TRANSITIONS, RECORD_TRANSITIONS_HINTED
from backroom.store.rows import dump_nullable_json, error_columns, job_from_row

_TRANSITION_COLUMNS = """state, result, keeps_error, error_kind, error_message, run_at,
    finished_at, attempt_change, attempt_outcome, attempt_error_kind,
    attempt_error_message, next_attempt_at, reason, wait_reason"""

_TRANSITION_ARRAYS = """$5::text[], $6::text[], $7::boolean[], $8::text[], $9::text[],
    $10::bigint[], $11::bigint[], $12::integer[], $13::text[], $14::text[], $15::text[],
    $16::bigint[], $17::text[], $18::text[]"""
"""The arrays of `_transition_row` columns, after four arrays of the rows' keys."""

_END_ATTEMPTS = """finished AS (
    -- The ids as an array too, in both updates, so that rows are found by key: joined to
    -- `held` alone, the planner read all of `jobs` and `attempts` on every finish.
    UPDATE jobs AS job SET
        state = held.state,
        result = held.result,
        error_kind = CASE WHEN held.keeps_error THEN job.error_kind ELSE held.error_kind END,
        error_message =
            CASE WHEN held.keeps_error THEN job.error_message ELSE held.error_message END,
        run_at = COALESCE(held.run_at, job.run_at),
        finished_at = held.finished_at,
        attempt = job.attempt + held.attempt_change,
        lease_expires_at = NULL, worker_id = NULL, updated_at = $1,
        wait_reason = held.wait_reason,
        waiting_since = CASE WHEN held.wait_reason IS NULL THEN NULL
                             ELSE COALESCE(job.waiting_since, job.run_at) END
    FROM held WHERE job.id = held.id AND job.id = ANY (ARRAY(SELECT id FROM held))
    RETURNING {returning}
), ended AS (
    -- An attempt stored before its end ends in place; the rest are written now, whole,
    -- from their jobs' rows as they were. Looked for only where `held.stored_before`
    -- says one may be: an index probe per job that finds nothing costs the finish.
    UPDATE attempts AS attempt SET
        finished_at = $1, outcome = held.attempt_outcome,
        error_kind = held.attempt_error_kind, error_message = held.attempt_error_message,
        next_attempt_at = held.next_attempt_at
    FROM held WHERE attempt.job_id = held.id AND attempt.lease_token = held.token
        AND held.stored_before
        AND attempt.job_id = ANY (ARRAY(SELECT id FROM held WHERE stored_before))
    RETURNING attempt.job_id
), stored AS (
    INSERT INTO attempts (job_id, number, lease_token, worker_id, started_at, lane,
                          finished_at, outcome, error_kind, error_message, next_attempt_at)
    SELECT id, attempt_number, token, attempt_worker, attempt_started_at, attempt_lane,
           $1, attempt_outcome, attempt_error_kind, attempt_error_message, next_attempt_at
    FROM held WHERE id <> ALL (ARRAY(SELECT job_id FROM ended))
), moves AS (
    SELECT id AS job_id, $1::bigint AS at, 'running' AS from_state, state AS to_state, reason
    FROM held
), {record}, wake AS (
    SELECT pg_notify($2, '')
    WHERE EXISTS (SELECT FROM finished WHERE state = 'queued' AND run_at <= $1)
)"""
"""$1 now, $2 channel; `held` has each job's id, lease `token`, `_RUNNING_ATTEMPT`
columns, `stored_before` and transition columns;
`{returning}` is what `finished` returns, `{record}` `RECORD_TRANSITIONS` or its
hinted form."""

_RUNNING_ATTEMPT = """job.attempt AS attempt_number, job.worker_id AS attempt_worker,
    job.started_at AS attempt_started_at, job.lane AS attempt_lane"""
"""The running attempt's columns of `held`, read from its job's row before the update."""

_STORED_BEFORE = "(job.worker_id IS NULL OR job.lane IS NOT NULL) AS stored_before"
"""Whether a finished attempt's row may be stored already: an offloaded job's (no worker
on its row) or one a lane move left behind (the job has a lane). A finish ends the
attempts of leases its caller holds, claimed under this release, or offloaded ones; a
lease sweep ends any, those a previous release claimed (and stored at the claim) too
while a rollout goes on, so it looks for every one."""

_FINISH = f"""
WITH outcome AS (
    SELECT * FROM unnest($3::bigint[], $4::bigint[], $19::boolean[], $20::boolean[],
                         {_TRANSITION_ARRAYS})
        AS outcome (job_id, token, when_spent, when_cancel_requested, {_TRANSITION_COLUMNS})
), held AS (
    SELECT job.*, outcome.* FROM (SELECT * FROM outcome ORDER BY job_id) AS outcome
    CROSS JOIN LATERAL (
        SELECT id, {_RUNNING_ATTEMPT}, {_STORED_BEFORE} FROM jobs AS job
        WHERE job.id = outcome.job_id AND job.lease_token = outcome.token
          AND (job.state = 'running') IS TRUE
          AND (outcome.when_spent IS NULL
               OR outcome.when_spent = (job.attempt >= job.max_attempts))
          AND (outcome.when_cancel_requested IS NULL
               OR outcome.when_cancel_requested = job.cancel_requested)
        FOR UPDATE
    ) AS job
), {{end_attempts}}
SELECT finished.id, finished.lease_token, (SELECT count(*) FROM wake) AS woken FROM finished
"""
"""$1 now, $2 channel, $3 job ids, $4 tokens, $5.. the transitions' columns, $19
`when_spent`, $20 `when_cancel_requested`: the (id, lease token) of each job applied;
`{end_attempts}` is `_END_ATTEMPTS`, formatted."""

_FINISHED = "job.id, job.lease_token, job.state, job.run_at"
FINISH_NOTIFYING = _FINISH.format(
    end_attempts=_END_ATTEMPTS.format(returning=_FINISHED, record=RECORD_TRANSITIONS)
)
"""The finish whose transaction wakes the feed's readers (a NOTIFY from the trigger)."""
FINISH_HINTED = _FINISH.format(
    end_attempts=_END_ATTEMPTS.format(returning=_FINISHED, record=RECORD_TRANSITIONS_HINTED)
)
"""The finish whose caller wakes the feed's readers after the commit (`FeedHint`)."""

EXPIRE_LEASES = f"""
WITH cases AS (
    SELECT * FROM unnest($3::bigint[], $4::bigint[], $19::boolean[], $20::boolean[],
                         {_TRANSITION_ARRAYS})
        AS outcome (unused_id, unused_token, when_spent, when_cancel_requested,
                    {_TRANSITION_COLUMNS})
), expired AS (
    SELECT id, lease_token, attempt >= max_attempts AS spent, cancel_requested,
           {_RUNNING_ATTEMPT}
    FROM jobs AS job
    WHERE state = 'running' AND lease_expires_at <= $1
    ORDER BY lease_expires_at, id
    LIMIT $21
    FOR UPDATE SKIP LOCKED
), held AS (
    SELECT expired.id, expired.lease_token AS token, attempt_number, attempt_worker,
           attempt_started_at, attempt_lane, TRUE AS stored_before, cases.*
    FROM expired
    JOIN cases ON cases.when_spent = expired.spent
              AND cases.when_cancel_requested = expired.cancel_requested
), {_END_ATTEMPTS.format(returning="job.*", record=RECORD_TRANSITIONS_HINTED)}
SELECT finished.*, (SELECT count(*) FROM wake) AS woken FROM finished ORDER BY id
"""
"""$1 now, $2 channel, $3.. $20 the transition of each case of `RunningFacts` (as
the finish takes them, with no job), $21 limit: the jobs swept. Its caller wakes the
feed's readers after the commit (`FeedHint`)."""


def _transition_row(transition: Transition) -> tuple[Any, ...]:
    end = transition.attempt_end
    if end is None:
        raise ValueError(f"{transition.source} -> {transition.target} ends no attempt")
    return (
        transition.target,
        dump_nullable_json(transition.result),
        transition.keeps_error,
        *error_columns(transition.error),
        transition.run_at,
        transition.finished_at,
        transition.attempt_change,
        end.outcome,
        *error_columns(end.error),
        end.next_attempt_at,
        transition.reason,
        transition.wait,
    )


_DONE = Succeeded(None)
"""A success with no result: the one computed for every success of a batch."""

_Case = tuple[RunningFacts | None, tuple[Any, ...]]
"""A case of `RunningFacts` (None: any) and the `_transition_row` of its transition."""


def _columns(
    rows: Sequence[tuple[int | None, int | None, RunningFacts | None, Transition]],
) -> list[list[Any]]:
    """Parallel arrays for the finish or `EXPIRE_LEASES`, from $3 to $20."""
    return _arrays(
        (job_id, token, facts, _transition_row(transition))
        for job_id, token, facts, transition in rows
    )


def _arrays(
    rows: Iterable[tuple[int | None, int | None, RunningFacts | None, Any]],
) -> list[list[Any]]:
    """`_columns` of rows whose transitions are already `_transition_row`s."""
    job_ids, tokens, spent, cancel_requested, values = [], [], [], [], []
    for job_id, token, facts, row in rows:
        job_ids.append(job_id)
        tokens.append(token)
        spent.append(None if facts is None else facts.spent)
        cancel_requested.append(None if facts is None else facts.cancel_requested)
        values.append(row)
    return [
        job_ids,
        tokens,
        *(list(column) for column in zip(*values, strict=True)),
        spent,
        cancel_requested,
    ]


def _cases(outcome: Outcome, now: int, known: dict[Outcome, list[_Case]]) -> list[_Case]:
    """The cases of `outcome`'s transition at `now`, worked out once for equal outcomes
    in `known` (a batch's successes: once for all of them, each with its own result)."""
    if isinstance(outcome, Succeeded) and outcome.result is not None:
        # A success's transition differs from another's by its result alone (column 1).
        result = dump_nullable_json(outcome.result)
        return [(facts, (row[0], result, *row[2:])) for facts, row in _cases(_DONE, now, known)]
    try:
        cases = known.get(outcome)
    except TypeError:  # it holds a dict or a list: worked out for it alone
        return _worked_out(outcome, now)
    if cases is None:
        cases = known[outcome] = _worked_out(outcome, now)
    return cases


def _worked_out(outcome: Outcome, now: int) -> list[_Case]:
    return [(facts, _transition_row(t)) for facts, t in transitions.finish_cases(outcome, now)]


async def finish(
    connection: PooledConnection,
    results: Sequence[tuple[Lease, Outcome]],
    now: int,
    channel: str,
    *,
    hinted: bool = False,
) -> list[bool]:
    """Apply each outcome whose lease is still held; True where it was applied.

    `hinted`: the caller wakes the feed's readers after the commit (`FeedHint`).
    """
    # A lease named twice in one batch applies once: only its first outcome is sent.
    first_outcomes: dict[tuple[int, int], Outcome] = {}
    for lease, outcome in results:
        first_outcomes.setdefault((lease.job_id, lease.token), outcome)
    if not first_outcomes:
        return []
    known: dict[Outcome, list[_Case]] = {}
    rows = [
        (job_id, token, facts, row)
        for (job_id, token), outcome in first_outcomes.items()
        for facts, row in _cases(outcome, now, known)
    ]
    done = {
        (row["id"], row["lease_token"])
        for row in await connection.fetch(
            FINISH_HINTED if hinted else FINISH_NOTIFYING, now, channel, *_arrays(rows)
        )
    }
    flags = []
    for lease, _ in results:
        key = (lease.job_id, lease.token)
        flags.append(key in done)
        done.discard(key)
    return flags


async def expire_leases(
    connection: PooledConnection, now: int, limit: int, channel: str
) -> list[Job]:
    """Requeue (or fail, or cancel) up to `limit` jobs whose lease ran out."""
    cases = [(None, None, facts, transition) for facts, transition in transitions.expire_cases(now)]
    rows = await connection.fetch(EXPIRE_LEASES, now, channel, *_columns(cases), limit)
    return [job_from_row(row) for row in rows]
