"""Ending attempts on PostgreSQL: a batch of outcomes, or a sweep of expired leases.

Each is one statement. Both build `held` (the jobs whose attempt ends, locked, each
with the running attempt as its job's row holds it and the core transition that ends
it) and share the rest (`_END_ATTEMPTS`): the job rows, their attempt rows, the
transitions' history, and a wake-up when a job is queued again. An attempt's row is
written here, once, when it ends: until then its job's row holds it (see
`postgres.queries`), except for an attempt that leaves its job's row behind, stored
before (an offload to a provider batch, a lane move that leaves the attempt in its
lane) and ended here in place. Batches travel as parallel arrays.

Each distinct transition of a batch is sent once (most batches have one to three) and
each job as its id, lease token, the index of its transition and its result: asyncpg
encodes and type-checks every element of an array, and an array per column of the
transition, with an element per job, cost the worker ~20 calls a job. What ends an
attempt may depend on `RunningFacts` only the database knows when it writes, so each
transition is sent as four cases, one for each, and each job takes the one that fits.

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

_TRANSITION_SQL = """state text, keeps_error boolean, error_kind text, error_message text,
    run_at bigint, finished_at bigint, attempt_change integer, attempt_outcome text,
    attempt_error_kind text, attempt_error_message text, next_attempt_at bigint,
    reason text, wait_reason text"""
_TRANSITION_COLUMNS = [column.split() for column in _TRANSITION_SQL.split(",")]
"""The columns of `_transition_row`, by name and type."""

_CASE_COLUMNS = ",\n        ".join(
    f"(${number}::{kind}[])[held.pick] AS {name}"
    for number, (name, kind) in enumerate(_TRANSITION_COLUMNS, start=3)
)
"""The columns of case `held.pick` of the arrays $3 to $15: each job picks its case by
index, which keeps `held` as many rows as jobs (joined to a table of cases, the planner
expected one row, and planned the updates after it for one: 2-3x the time)."""

_FACTS = "(attempt >= max_attempts)::integer * 2 + cancel_requested::integer"
"""The offset of a job's `RunningFacts` among the four cases of a transition: its
index in `_EVERY_FACT`."""

_EVERY_FACT = tuple(RunningFacts(s, c) for s in (False, True) for c in (False, True))
"""The cases of every transition, in the order `_FACTS` counts them."""

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
    -- Counted by generate_series, not `unnest`: a plan made for any batch (the generic
    -- plan kept after five) expects 1,000 jobs rather than 10, and finds the attempts
    -- of a batch by hash, not by an index scan per job that steps through every id.
    SELECT ($16::bigint[])[n] AS job_id, ($17::bigint[])[n] AS token,
           ($18::integer[])[n] AS first_case, ($19::text[])[n] AS result
    FROM generate_series(1, cardinality($16::bigint[])) AS n
), held AS (
    SELECT held.*, outcome.token, outcome.result,
        {_CASE_COLUMNS}
    FROM (SELECT * FROM outcome ORDER BY job_id) AS outcome
    CROSS JOIN LATERAL (
        SELECT id, {_RUNNING_ATTEMPT}, {_STORED_BEFORE},
               outcome.first_case + {_FACTS} AS pick
        FROM jobs AS job
        WHERE job.id = outcome.job_id AND job.lease_token = outcome.token
          AND (job.state = 'running') IS TRUE
        FOR UPDATE
    ) AS held
), {{end_attempts}}
SELECT finished.id, finished.lease_token, (SELECT count(*) FROM wake) AS woken FROM finished
"""
"""$1 now, $2 channel, $3 to $15 the cases (`_CASE_COLUMNS`), then per job $16 its id,
$17 its lease token, $18 the index of the first of its transition's four cases and $19
its result (an array shorter than the rest, even empty, where the last jobs have none:
past its end it reads NULL): the (id, lease token) of each job applied;
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
WITH expired AS (
    SELECT id, lease_token, 1 + {_FACTS} AS pick, {_RUNNING_ATTEMPT}
    FROM jobs AS job
    WHERE state = 'running' AND lease_expires_at <= $1
    ORDER BY lease_expires_at, id
    LIMIT $16
    FOR UPDATE SKIP LOCKED
), held AS (
    SELECT held.id, held.lease_token AS token, attempt_number, attempt_worker,
           attempt_started_at, attempt_lane, TRUE AS stored_before, NULL::text AS result,
        {_CASE_COLUMNS}
    FROM expired AS held
), {_END_ATTEMPTS.format(returning="job.*", record=RECORD_TRANSITIONS_HINTED)}
SELECT finished.*, (SELECT count(*) FROM wake) AS woken FROM finished ORDER BY id
"""
"""$1 now, $2 channel, $3 to $15 the four cases of the transition (`_CASE_COLUMNS`),
$16 limit: the jobs swept. Its caller wakes the feed's readers after the commit
(`FeedHint`)."""


def _transition_row(transition: Transition) -> tuple[Any, ...]:
    """The `_CASE_COLUMNS` of a transition; a success's result goes with its job."""
    end = transition.attempt_end
    if end is None:
        raise ValueError(f"{transition.source} -> {transition.target} ends no attempt")
    return (
        transition.target,
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


def _four_cases(cases: Sequence[tuple[RunningFacts | None, Transition]]) -> list[tuple[Any, ...]]:
    """The `_transition_row` of each case in `_EVERY_FACT`'s order (None: every case)."""
    rows = {facts: _transition_row(transition) for facts, transition in cases}
    return [rows[facts] if facts in rows else rows[None] for facts in _EVERY_FACT]


_DONE = Succeeded(None)
"""A success with no result: the transition of every success, whatever its result."""


class _Cases:
    """The cases of a batch's distinct outcomes, each worked out once, as `_CASE_COLUMNS`
    takes them: `first(outcome)` is the index of the first of its four."""

    def __init__(self, now: int) -> None:
        self._now = now
        self._first: dict[Outcome, int] = {}
        self.rows: list[tuple[Any, ...]] = []

    def first(self, outcome: Outcome) -> int:
        """The index of `outcome`'s first case, adding its cases if they are new."""
        if isinstance(outcome, Succeeded):
            outcome = _DONE  # its result goes with its job
        try:
            known = self._first.get(outcome)
        except TypeError:  # it holds a dict or a list: worked out for it alone
            return self._add(outcome)
        if known is None:
            known = self._first[outcome] = self._add(outcome)
        return known

    def _add(self, outcome: Outcome) -> int:
        first = len(self.rows) + 1  # PostgreSQL counts from 1
        self.rows += _four_cases(transitions.finish_cases(outcome, self._now))
        return first

    def arrays(self) -> list[list[Any]]:
        """`_CASE_COLUMNS`' arrays, $3 to $15."""
        return [list(column) for column in zip(*self.rows, strict=True)]


def finish_arguments(outcomes: Iterable[tuple[tuple[int, int], Outcome]], now: int) -> list[Any]:
    """The finish's arguments from $3 on, for the outcomes of distinct (job id, lease
    token) pairs."""
    cases = _Cases(now)
    job_ids, tokens, first_cases, results = [], [], [], []
    sent = 0  # how many of `results` are sent: up to the last that is not None
    for (job_id, token), outcome in outcomes:
        job_ids.append(job_id)
        tokens.append(token)
        first_cases.append(cases.first(outcome))
        result = outcome.result if isinstance(outcome, Succeeded) else None
        results.append(None if result is None else dump_nullable_json(result))
        if result is not None:
            sent = len(results)
    del results[sent:]
    return [*cases.arrays(), job_ids, tokens, first_cases, results]


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
    arguments = finish_arguments(first_outcomes.items(), now)
    done = {
        (row["id"], row["lease_token"])
        for row in await connection.fetch(
            FINISH_HINTED if hinted else FINISH_NOTIFYING, now, channel, *arguments
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
    cases = zip(*_four_cases(transitions.expire_cases(now)), strict=True)
    rows = await connection.fetch(EXPIRE_LEASES, now, channel, *map(list, cases), limit)
    return [job_from_row(row) for row in rows]
