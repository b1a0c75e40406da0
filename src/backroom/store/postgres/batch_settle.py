"""The calls of a chunk of batch lines settled on PostgreSQL, in one statement.

Each call still open is closed, and the usage of those that ran is inserted for the
calls this statement closed (a call settled before keeps its usage): one UPDATE over
arrays of (job, token, time) joined to one INSERT over arrays of usage columns,
instead of a pipelined INSERT per line.
"""

from __future__ import annotations

from collections.abc import Sequence

from backroom.core.provider_batch import LineEnd
from backroom.store.postgres.database import PooledConnection
from backroom.store.usage_rows import USAGE_COLUMNS, USAGE_KEY, usage_columns

_TYPES = {
    "job_id": "bigint",
    "lease_token": "bigint",
    "attempt": "integer",
    "input_tokens": "bigint",
    "cached_tokens": "bigint",
    "cache_write_tokens": "bigint",
    "output_tokens": "bigint",
    "cost_pico_usd": "bigint",
    "at": "bigint",
    "estimated": "boolean",
}
"""The array type of each usage column that is not text."""

_USAGE_ARRAYS = ", ".join(
    f"${number}::{_TYPES.get(column, 'text')}[]"
    for number, column in enumerate(USAGE_COLUMNS, start=4)
)

_SETTLE = f"""
WITH settled AS (
    UPDATE llm_calls AS call SET state = 'settled', settled_at = claim.at
    FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS claim (job_id, token, at)
    WHERE call.job_id = claim.job_id AND call.lease_token = claim.token
      AND call.state = 'open'
    RETURNING call.job_id, call.lease_token
)
INSERT INTO llm_usage ({", ".join(USAGE_COLUMNS)})
SELECT {", ".join(f"used.{column}" for column in USAGE_COLUMNS)}
FROM unnest({_USAGE_ARRAYS}) AS used ({", ".join(USAGE_COLUMNS)})
JOIN settled ON settled.job_id = used.job_id AND settled.lease_token = used.lease_token
ON CONFLICT ({USAGE_KEY}) DO UPDATE SET
    {", ".join(f"{column} = excluded.{column}" for column in USAGE_COLUMNS[2:])}
"""


async def settle_lines(connection: PooledConnection, ends: Sequence[LineEnd], now: int) -> None:
    """Close the open calls of the ends that settle, storing the usage of those that ran."""
    settling = {(end.lease.job_id, end.lease.token): end for end in ends if end.settles}
    if not settling:
        return
    keys = list(settling)
    ats = [now if end.usage is None else end.usage.at for end in settling.values()]
    used = [end for end in settling.values() if end.usage is not None]
    columns: list[list[object]] = [[] for _ in USAGE_COLUMNS]
    for end in used:
        assert end.usage is not None
        for values, value in zip(columns, usage_columns(end.usage), strict=True):
            values.append(value)
    await connection.execute(
        _SETTLE,
        [job_id for job_id, _ in keys],
        [token for _, token in keys],
        ats,
        *columns,
    )
