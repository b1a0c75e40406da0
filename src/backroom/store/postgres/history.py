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
