"""Jobs handed to batch offload on PostgreSQL, a group in one transaction of a few
statements (see `BatchStore.batch_hand_off`).

    held      the jobs still held under their leases, locked (FOR UPDATE, by id)
    budgets   each budgeted tenant's row locked, by name, and its spend and open
              reservations read once; the group's calls are then fitted in order
    calls     the opened calls inserted (one pipelined statement)
    lines     the jobs offloaded and their lines inserted (one statement over arrays)

Locking the tenants' rows makes concurrent openings of one tenant take turns, as
`call_open` does, so a group sees the calls any other opened before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from backroom.core.provider_batch import HandOff
from backroom.core.spend import BudgetWindow, CallOpening
from backroom.store.call_rows import call_columns
from backroom.store.postgres.calls import COMMITTED, LOCK_TENANT, OPEN_CALL
from backroom.store.postgres.database import PooledConnection

_HELD = """
SELECT id, lease_token FROM jobs
WHERE (id, lease_token) IN (SELECT * FROM unnest($1::bigint[], $2::bigint[]))
  AND state = 'running'
ORDER BY id FOR UPDATE
"""

OFFLOADED_RETURNING = """jobs.id, jobs.lease_token, jobs.attempt, jobs.started_at, jobs.lane,
    before.worker_id"""
"""What `held` of an offload returns: the job's running attempt, with its worker from the
row as it was (`before`: only the lease's holder changes it)."""

STORE_OFFLOADED = """stored AS (
    -- An offloaded job's row no longer names the attempt's worker, so the attempt's row
    -- is stored now (the finish writes the others at their end, `postgres.finish`).
    INSERT INTO attempts (job_id, number, lease_token, worker_id, started_at, lane)
    SELECT id, attempt, lease_token, worker_id, started_at, lane FROM held
    WHERE worker_id IS NOT NULL
    ON CONFLICT (job_id, lease_token) DO NOTHING
)"""
"""Store the running attempts of the jobs `held` by an offload (`OFFLOADED_RETURNING`)."""

_OFFLOAD = f"""
WITH held AS (
    UPDATE jobs SET lease_expires_at = NULL, worker_id = NULL, updated_at = $1
    FROM unnest($2::bigint[], $3::bigint[], $4::text[]) AS line (job_id, token, lane),
         jobs AS before
    WHERE jobs.id = line.job_id AND jobs.lease_token = line.token AND jobs.state = 'running'
      AND before.id = jobs.id
    RETURNING {OFFLOADED_RETURNING}, line.lane AS line_lane
), {STORE_OFFLOADED}
INSERT INTO batch_lines (job_id, lease_token, lane, batch_id, handed_at)
SELECT id, lease_token, line_lane, NULL, $1 FROM held
ON CONFLICT (job_id, lease_token) DO NOTHING
"""

BudgetKey = tuple[str, BudgetWindow]


async def _committed(
    connection: PooledConnection, hand_offs: Sequence[HandOff]
) -> dict[BudgetKey, CallOpening]:
    """What each budgeted tenant has spent and holds, its row locked (by name)."""
    keys = sorted(
        {(h.intent.tenant, h.budget) for h in hand_offs if h.budget is not None},
        key=lambda key: (key[0], key[1].since),
    )
    found: dict[BudgetKey, CallOpening] = {}
    for tenant, window in keys:
        await connection.execute(LOCK_TENANT, tenant)
        row = await connection.fetchrow(
            COMMITTED, tenant, window.since, window.until, window.open_since
        )
        assert row is not None  # a select of two scalar subqueries yields a row
        found[tenant, window] = CallOpening(True, int(row["spent"]), int(row["reserved"]))
    return found


def _fitted(
    hand_offs: Sequence[HandOff], committed: dict[BudgetKey, CallOpening]
) -> list[CallOpening]:
    """Each call's opening, in order: one that fits adds its reservation to its tenant's."""
    openings: list[CallOpening] = []
    for hand_off in hand_offs:
        if hand_off.budget is None:
            openings.append(CallOpening(True))
            continue
        key = (hand_off.intent.tenant, hand_off.budget)
        before, reserved = committed[key], hand_off.intent.reserved_pico_usd
        if reserved is None or not hand_off.budget.fits(before.committed_pico_usd, reserved):
            openings.append(replace(before, opened=False))
            continue
        openings.append(before)
        committed[key] = replace(before, open_pico_usd=before.open_pico_usd + reserved)
    return openings


async def hand_off_group(
    connection: PooledConnection, hand_offs: Sequence[HandOff], now: int
) -> list[CallOpening | None]:
    """Open the group's calls and offload their jobs (in the caller's transaction)."""
    leases = [hand_off.lease for hand_off in hand_offs]
    rows = await connection.fetch(
        _HELD, [lease.job_id for lease in leases], [lease.token for lease in leases]
    )
    pairs = {(row["id"], row["lease_token"]) for row in rows}
    held = [h for h in hand_offs if (h.lease.job_id, h.lease.token) in pairs]
    fitted = _fitted(held, await _committed(connection, held))
    openings = dict(zip(map(id, held), fitted, strict=True))
    results = [openings.get(id(hand_off)) for hand_off in hand_offs]
    opened = [h for h in held if openings[id(h)].opened]
    if not opened:
        return results
    await connection.executemany(OPEN_CALL, [call_columns(h.intent) for h in opened])
    await connection.execute(
        _OFFLOAD,
        now,
        [h.lease.job_id for h in opened],
        [h.lease.token for h in opened],
        [h.lane for h in opened],
    )
    return results
