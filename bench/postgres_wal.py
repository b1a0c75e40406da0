"""What a run wrote to PostgreSQL's WAL: bytes in all, and per relation and record type.

The WAL is the server's, shared by every database on it (other work on the machine
writes into it too), so besides `pg_wal_lsn_diff` over the run this reads the records
themselves with `pg_walinspect` and keeps those of one database: each row's heap
record and index insertions, named by relation, and the commit records of the
transactions that wrote them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import asyncpg

_BLOCK = re.compile(r"rel \d+/(\d+)/(\d+)")

_RECORDS = """
SELECT xid::text::bigint AS xid, resource_manager AS manager, record_type,
       record_length, fpi_length, block_ref
FROM pg_get_wal_records_info($1::text::pg_lsn, $2::text::pg_lsn)
"""


@dataclass
class WalUse:
    """WAL bytes between two positions: the server's total, and one database's share."""

    total: int = 0
    database: int = 0
    full_pages: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    count_by_kind: Counter[str] = field(default_factory=Counter)
    complete: bool = True
    """False when the records were gone before they were read: only `total` is known."""


async def wal_position(connection: asyncpg.Connection) -> str:
    """The server's WAL position flushed to disk (its records can be read)."""
    return str(await connection.fetchval("SELECT pg_current_wal_flush_lsn()::text"))


async def wal_use(connection: asyncpg.Connection, start: str, end: str) -> WalUse:
    """The WAL written from `start` to `end`, with the share of `connection`'s database.

    A record counts for the database when a block it changes is in it; a commit
    record when its transaction wrote such a record. Kinds are named
    `relation/record type` (the relation by its current name in this database).
    """
    await connection.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
    oid = str(
        await connection.fetchval("SELECT oid FROM pg_database WHERE datname = current_database()")
    )
    names = {
        str(row["relfilenode"]): row["relname"]
        for row in await connection.fetch(
            "SELECT relfilenode, relname FROM pg_class WHERE relfilenode <> 0"
        )
    }
    total = await connection.fetchval(
        "SELECT pg_wal_lsn_diff($2::text::pg_lsn, $1::text::pg_lsn)", start, end
    )
    use = WalUse(total=int(total))
    try:
        records = await connection.fetch(_RECORDS, start, end)
    except asyncpg.UndefinedFileError:  # a checkpoint recycled the run's WAL meanwhile
        use.complete = False
        return use
    ours: set[int] = set()
    commits: list[asyncpg.Record] = []
    for record in records:
        if record["manager"] == "Transaction":
            commits.append(record)
            continue
        blocks = _BLOCK.findall(record["block_ref"] or "")
        if not blocks or blocks[0][0] != oid:
            continue
        ours.add(record["xid"])
        kind = f"{names.get(blocks[0][1], 'other')}/{record['record_type']}"
        _count(use, kind, record)
    for record in commits:
        if record["xid"] in ours:
            _count(use, f"commit/{record['record_type']}", record)
    return use


def _count(use: WalUse, kind: str, record: asyncpg.Record) -> None:
    size = int(record["record_length"])
    use.database += size
    use.full_pages += int(record["fpi_length"])
    use.by_kind[kind] += size
    use.count_by_kind[kind] += 1
