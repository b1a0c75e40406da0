"""The calls of a chunk of batch lines settled on SQLite, with `executemany`.

The open calls among the chunk's are read in one statement; those are closed in one
`executemany` and the usage of those that ran stored in another (a call settled
before keeps its usage), all in the caller's write transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from backroom.core.provider_batch import LineEnd
from backroom.store.rows import dump_json
from backroom.store.sqlite.usage import record_usage_rows

_OPEN_OF = """
SELECT job_id, lease_token FROM llm_calls
WHERE state = 'open' AND (job_id, lease_token) IN (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)
)
"""

_SETTLE = """
UPDATE llm_calls SET state = 'settled', settled_at = ?
WHERE job_id = ? AND lease_token = ? AND state = 'open'
"""


def settle_lines(connection: sqlite3.Connection, ends: Sequence[LineEnd], now: int) -> None:
    """Close the open calls of the ends that settle (one `executemany`), storing the
    usage of those that ran for the calls closed here."""
    settling = {(end.lease.job_id, end.lease.token): end for end in ends if end.settles}
    if not settling:
        return
    keys = dump_json([list(key) for key in settling])
    opened = {(row[0], row[1]) for row in connection.execute(_OPEN_OF, (keys,))}
    closing = [end for key, end in settling.items() if key in opened]
    connection.executemany(
        _SETTLE,
        [
            (now if end.usage is None else end.usage.at, end.lease.job_id, end.lease.token)
            for end in closing
        ],
    )
    record_usage_rows(connection, [end.usage for end in closing if end.usage is not None])
