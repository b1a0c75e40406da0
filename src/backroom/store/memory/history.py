"""Writing the core's transitions to the memory tables: the job's row, its attempt, its event.

`write_transition` is the one place the memory store applies a `Transition` (as
`core.lifecycle.apply` does to a `Job`), so a side effect of every transition is added
there, as in `sqlite/history.py:record_transitions`.
"""

from __future__ import annotations

from backroom.core.feed import PROGRESS_REASON
from backroom.core.job import JobEvent, JobState
from backroom.core.lifecycle import RunningFacts, Transition
from backroom.store.memory.tables import AttemptRow, JobRow, MemoryTables
from backroom.store.rows import dump_nullable_json, error_columns


def facts_of(row: JobRow) -> RunningFacts:
    """What ending the running job's attempt depends on, read from its row."""
    return RunningFacts(
        spent=row.attempt >= row.max_attempts, cancel_requested=row.cancel_requested
    )


def record_transition(tables: MemoryTables, job_id: int, transition: Transition) -> None:
    """Log the job's transition (its event), in its history and in the feed."""
    event = transition.event(job_id)
    tables.events.setdefault(job_id, []).append(event)
    _to_feed(tables, job_id, event)


def record_progress(tables: MemoryTables, job_id: int, now: int) -> None:
    """A progress event in the feed, for streams and webhooks (not a transition)."""
    running = JobState.RUNNING
    _to_feed(tables, job_id, JobEvent(job_id, now, running, running, PROGRESS_REASON))


def _to_feed(tables: MemoryTables, job_id: int, event: JobEvent) -> None:
    tables.last_event_id += 1
    tables.feed.append((tables.last_event_id, job_id, event))
    for listener in tables.feed_listeners:
        listener()


def _change_row(row: JobRow, transition: Transition) -> None:
    if transition.attempt_end is not None:
        # Before the due time changes: a job that starts waiting waits since it.
        waiting = row.run_at if row.waiting_since is None else row.waiting_since
        row.waiting_since = None if transition.wait is None else waiting
        row.wait_reason = transition.wait
    row.state = transition.target
    row.updated_at = transition.at
    row.result = dump_nullable_json(transition.result)
    row.finished_at = transition.finished_at
    row.attempt = 0 if transition.resets_attempts else row.attempt + transition.attempt_change
    if not transition.keeps_error:
        row.error_kind, row.error_message = error_columns(transition.error)
    if transition.run_at is not None:
        row.run_at = transition.run_at
    if transition.resets_attempts:
        row.cancel_requested = False
    if transition.lease is not None:
        row.lease_token += 1
        row.lease_expires_at = transition.lease.expires_at
        row.worker_id = transition.lease.worker_id
        row.started_at = transition.at
        row.cancel_requested = False
    if transition.attempt_end is not None:
        row.lease_expires_at = row.worker_id = None


def _close_attempt(tables: MemoryTables, job_id: int, token: int, transition: Transition) -> None:
    """Record how the attempt under lease `token` ended, as the transition says."""
    end = transition.attempt_end
    if end is None:
        return
    for attempt in reversed(tables.attempts.get(job_id, ())):
        if attempt.lease_token == token:
            attempt.finished_at = transition.at
            attempt.outcome = end.outcome
            attempt.error_kind, attempt.error_message = error_columns(end.error)
            attempt.next_attempt_at = end.next_attempt_at
            return


def write_transition(tables: MemoryTables, row: JobRow, transition: Transition) -> None:
    """Apply `transition` to the job's row (indexes following), open the attempt a
    lease starts or close the one it ends, and log the event."""
    ended_token = row.lease_token
    with tables.changing(row):
        _change_row(row, transition)
    if transition.lease is not None:
        worker_id = transition.lease.worker_id
        attempt = AttemptRow(row.id, row.attempt, row.lease_token, worker_id, transition.at)
        attempt.lane = row.lane
        tables.attempts.setdefault(row.id, []).append(attempt)
    _close_attempt(tables, row.id, ended_token, transition)
    record_transition(tables, row.id, transition)
