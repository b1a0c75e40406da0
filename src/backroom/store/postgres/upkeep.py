"""The planner's statistics of the worker's tables, where autovacuum does not keep them.

A connection keeps one plan per statement it runs often (PostgreSQL's generic plan),
costed from the table sizes in `pg_class`, and makes a new one only when a table's
statistics change. With autovacuum off nothing ever analyzes the tables: a finish
planned while `attempts` held a few hundred rows read the whole table at each batch
once it held 100,000, slower with every job done. So a worker's lease sweep also asks,
for each of `TABLES` that autovacuum leaves alone, whether it has grown to twice the
size its statistics say, and analyzes it if so: a dozen ANALYZEs as a table grows from
a thousand rows to a million, none while autovacuum does its work. Dead rows are not
removed here: operators run autovacuum, or VACUUM on a schedule (docs/operations.md).

The refresh runs beside the sweep, not inside it (`StatisticsUpkeep`): an ANALYZE of a
grown table takes milliseconds, and the worker's claim loop awaits its sweep, so a
pickup that arrived meanwhile waited for it.
"""

from __future__ import annotations

import asyncio
import logging

from backroom.core.errors import StoreError
from backroom.store.postgres.database import PostgresDatabase

log = logging.getLogger(__name__)

TABLES = ("jobs", "attempts", "job_events")
"""The tables every claim and finish reads or writes."""

GROWTH = 2
"""How many times its analyzed size a table grows before it is analyzed again."""

STALE = """
SELECT c.oid::regclass::text AS name FROM pg_class AS c
WHERE c.oid = ANY (ARRAY(SELECT to_regclass(name)::oid FROM unnest($1::text[]) AS name))
  AND (current_setting('autovacuum') = 'off'
       OR c.reloptions && ARRAY['autovacuum_enabled=false', 'autovacuum_enabled=off',
                                'autovacuum_enabled=0'])
  AND pg_has_role(c.relowner, 'USAGE')
  AND pg_relation_size(c.oid)
      > $2::bigint * GREATEST(c.relpages, 8) * current_setting('block_size')::bigint
"""
"""$1 table names (resolved through `search_path`), $2 growth: the tables to analyze,
quoted as `regclass` writes them. A table at most 8 pages is never analyzed here."""


async def refresh_statistics(database: PostgresDatabase) -> list[str]:
    """Analyze the worker's tables that autovacuum leaves alone and that have grown
    `GROWTH` times since their statistics; their names. A table another session is
    analyzing or vacuuming is skipped until the next call."""
    async with database.connection() as connection:
        names = [row["name"] for row in await connection.fetch(STALE, list(TABLES), GROWTH)]
        for name in names:
            # A utility statement takes no parameters: the name is the catalog's own,
            # quoted by `regclass`.
            await connection.execute(f"ANALYZE (SKIP_LOCKED) {name}")
    return names


async def refresh_quietly(database: PostgresDatabase) -> None:
    """`refresh_statistics`, logging a failure instead of raising it (retried next time)."""
    try:
        analyzed = await refresh_statistics(database)
    except StoreError as error:
        log.warning("could not refresh the planner's statistics: %s", error)
        return
    if analyzed:
        log.info("analyzed %s: autovacuum is off for them", ", ".join(analyzed))


class StatisticsUpkeep:
    """Runs `refresh_quietly` off its caller's path, one refresh at a time."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._database = database
        self._refresh: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin a refresh unless one is running (that one covers this call too)."""
        if self._refresh is None or self._refresh.done():
            self._refresh = asyncio.create_task(
                refresh_quietly(self._database), name="backroom-statistics"
            )

    async def close(self) -> None:
        """Wait for the refresh in flight, if any, to end (before the pool closes)."""
        if self._refresh is not None:
            await self._refresh
