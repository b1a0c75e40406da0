"""The history a PostgreSQL statement writes along with the transitions it makes.

Every statement that moves jobs names its moves in a CTE called `moves`, with the
columns (job_id, at, from_state, to_state, reason), and appends `RECORD_TRANSITIONS`:
the one place each transition's side rows are written (an event today), so a side
effect of every transition is added here once.
"""

from __future__ import annotations

RECORD_TRANSITIONS = """recorded AS (
    INSERT INTO job_events (job_id, at, from_state, to_state, reason)
    SELECT job_id, at, from_state, to_state, reason FROM moves
)"""
"""A data-modifying CTE logging every row of `moves`; PostgreSQL runs it even though
nothing reads it."""

RECORD_TRANSITIONS_HINTED = """recorded AS (
    INSERT INTO job_events (job_id, at, from_state, to_state, reason)
    SELECT job_id, at, from_state, to_state, reason FROM moves
    WHERE set_config('backroom.feed_hint', 'after_commit', true) IS NOT NULL
)"""
"""`RECORD_TRANSITIONS` for a statement whose caller wakes the feed's readers itself
after the commit (`postgres.feed_hint`): the feed trigger stands down for its
transaction, so that it commits without NOTIFY's server-wide lock."""
