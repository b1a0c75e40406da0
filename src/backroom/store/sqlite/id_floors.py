"""Job and event ids that are never handed out twice, even after retention.

SQLite gives a new row the largest id in its table plus one, so deleting the newest
rows would let their ids come back. Retention calls `raise_floors` before it deletes;
inserts of jobs and events take their ids from `next_id_sql`, above the table's floor.
"""

from __future__ import annotations

import sqlite3
from typing import Literal

FlooredTable = Literal["jobs", "job_events"]
"""The tables whose ids clients see (job ids; event ids in cursors and webhook ids)."""


def next_id_sql(table: FlooredTable) -> str:
    """An SQL expression for the next id of `table`, evaluated per inserted row."""
    return (
        f"(SELECT max(coalesce((SELECT max(id) FROM {table}), 0), floor) + 1 "
        f"FROM id_floors WHERE name = '{table}')"
    )


def largest_id(connection: sqlite3.Connection, table: FlooredTable) -> int:
    """The largest id `table` ever handed out (the next one is this plus one)."""
    (largest,) = connection.execute(f"SELECT {next_id_sql(table)} - 1").fetchone()
    return int(largest)


def raise_floors(connection: sqlite3.Connection) -> None:
    """Lift each floor to its table's largest id: call before deleting rows."""
    for table in ("jobs", "job_events"):
        connection.execute(
            f"UPDATE id_floors SET floor = {next_id_sql(table)} - 1 WHERE name = ?", (table,)
        )
