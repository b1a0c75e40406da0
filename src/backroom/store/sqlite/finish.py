"""Ending attempts: apply a batch of outcomes, each only if its lease is still held.

This is the worker's hot path, so a whole batch costs a fixed number of statements:
one read of the leases still held (with the facts the core's transition depends on),
then one `executemany` each for the jobs, their attempt rows and their events. Under
the write lock nothing can change between the read and the writes, so the read
decides exactly which outcomes apply. A lease sweep ends attempts the same way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from backroom.core import transitions
from backroom.core.job import Lease
from backroom.core.lifecycle import RunningFacts, Transition
from backroom.core.outcome import Outcome
from backroom.store.rows import dump_json, dump_nullable_json, error_columns
from backroom.store.sqlite.history import Ended, close_attempts, record_transitions

_HELD = """
SELECT id, lease_token, attempt >= max_attempts AS spent, cancel_requested FROM jobs
WHERE state = 'running' AND id IN (SELECT value FROM json_each(?))
"""

_END_ATTEMPT = """
UPDATE jobs
SET state = :state, result = :result,
    error_kind = CASE WHEN :keeps_error THEN error_kind ELSE :error_kind END,
    error_message = CASE WHEN :keeps_error THEN error_message ELSE :error_message END,
    run_at = COALESCE(:run_at, run_at), finished_at = :finished_at,
    attempt = attempt + :attempt_change,
    lease_expires_at = NULL, worker_id = NULL, updated_at = :at,
    wait_reason = :wait,
    waiting_since = CASE WHEN :wait IS NULL THEN NULL ELSE COALESCE(waiting_since, run_at) END
WHERE id = :job_id AND lease_token = :lease_token AND state = :source
"""


def _job_parameters(job_id: int, lease_token: int, transition: Transition) -> dict[str, Any]:
    error_kind, error_message = error_columns(transition.error)
    return {
        "state": transition.target,
        "result": dump_nullable_json(transition.result),
        "keeps_error": transition.keeps_error,
        "error_kind": error_kind,
        "error_message": error_message,
        "run_at": transition.run_at,
        "finished_at": transition.finished_at,
        "attempt_change": transition.attempt_change,
        "at": transition.at,
        "wait": transition.wait,
        "job_id": job_id,
        "lease_token": lease_token,
        "source": transition.source,
    }


def end_attempts(connection: sqlite3.Connection, ended: Sequence[Ended]) -> None:
    """Write transitions that end running attempts (each named by job id and lease token)."""
    connection.executemany(_END_ATTEMPT, (_job_parameters(*end) for end in ended))
    close_attempts(connection, ended)
    record_transitions(connection, ((job_id, transition) for job_id, _, transition in ended))


def finish(
    connection: sqlite3.Connection, results: Sequence[tuple[Lease, Outcome]], now: int
) -> list[Transition | None]:
    """Apply each outcome whose lease is still held: its transition, or None where not held."""
    job_ids = dump_json([lease.job_id for lease, _ in results])
    held_by_lease = {
        (row["id"], row["lease_token"]): RunningFacts(
            bool(row["spent"]), bool(row["cancel_requested"])
        )
        for row in connection.execute(_HELD, (job_ids,))
    }
    applied: list[Transition | None] = []
    for lease, outcome in results:
        # pop: a lease named twice in one batch applies once.
        facts = held_by_lease.pop((lease.job_id, lease.token), None)
        applied.append(None if facts is None else transitions.finished(outcome, now, facts))
    end_attempts(
        connection,
        [
            (lease.job_id, lease.token, transition)
            for (lease, _), transition in zip(results, applied, strict=True)
            if transition is not None
        ],
    )
    return applied
