"""Many new jobs sent to PostgreSQL as one JSON document, for bulk submissions.

The submit statement reads its jobs from one array per column (`unnest`), which asyncpg
encodes element by element, checking each one's type: about 4 us a job over 14 arrays,
the largest part of the client's work for a bulk submission. A bulk submission sends
its jobs instead as one JSON array of rows, encoded in one call of the C encoder, and
the statement takes each column from the row (`jsonb_array_elements`, `->>`): the
same rows, the same statement around them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from backroom.core.job import NewJob
from backroom.store.rows import new_job_rows

ROWS_FROM = 32
"""The fewest jobs sent as one JSON document: below, the arrays cost as little."""

ROW_SOURCE = """(
    SELECT row->>0 AS tenant, row->>1 AS task, row->>2 AS queue,
           (row->>3)::integer AS priority, row->>4 AS input,
           (row->>5)::integer AS max_attempts, (row->>6)::bigint AS timeout_ms,
           (row->>7)::bigint AS run_at, row->>10 AS idempotency_key, row->>11 AS fingerprint,
           row->>12 AS metadata, row->>13 AS lane, row->>14 AS webhook_url,
           row->>15 AS traceparent, position
    FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS rows (row, position)
) AS new"""
"""The new jobs of `rows_json` ($4) as the columns the submit statement inserts (the
row's creation times, its 9th and 10th values, are the statement's $1)."""

# One encoder for every call: `json.dumps` with options builds a new one each time.
# ASCII only: the server decodes every escape back to the character.
_ROWS = json.JSONEncoder(separators=(",", ":"))


def rows_json(jobs: Sequence[NewJob], now: int) -> str:
    """The new jobs as the JSON array `ROW_SOURCE` reads: one array per job."""
    return _ROWS.encode(new_job_rows(jobs, now))
