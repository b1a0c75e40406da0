"""Claiming due jobs in memory, in the SQLite store's claim order.

Queue by queue in the order the worker lists them (all queues: `interactive` first,
`batch` last), passing over paused queues; within a queue each tenant offers its first
due jobs (at most the claim's limit) outside closed or paused lanes, by priority, due
time and id; these are ranked by priority (highest first), then round robin among
tenants, then due time, then id, and no more of a lane's jobs are taken than the lane
has room for. A claim adds one to each job's fencing token.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Collection, Iterator, Sequence

from backroom.core import transitions
from backroom.core.job import Job
from backroom.store.claim_order import in_claim_order, queue_precedence
from backroom.store.memory.history import write_transition
from backroom.store.memory.lanes import lane_rooms
from backroom.store.memory.tables import ClaimKey, JobRow, MemoryTables, paused
from backroom.store.records import PauseKind
from backroom.store.rows import job_from_row

Tasks = Collection[str] | None
"""The tasks a claim may take (None: any)."""


def queue_order(tables: MemoryTables, queues: Sequence[str]) -> list[str]:
    """The queues to claim from, in order: as listed, or every queue with queued jobs,
    `interactive` first and `batch` last; never a paused one."""
    stopped = paused(tables, PauseKind.QUEUE)
    if queues:
        return [queue for queue in queues if queue not in stopped]
    return queue_precedence(queue for queue in tables.claimable if queue not in stopped)


def _due(keys: list[ClaimKey], now: int) -> Iterator[ClaimKey]:
    """The due keys of one tenant, in order; the not-yet-due rest of a priority is skipped."""
    position = 0
    while position < len(keys):
        key = keys[position]
        if key[1] <= now:
            yield key
            position += 1
        else:  # every later key of this priority is due later still
            position = bisect.bisect_left(keys, (key[0] + 1,), position)


def _candidates(
    tables: MemoryTables, queue: str, limit: int, closed: set[str], now: int, tasks: Tasks
) -> list[JobRow]:
    """Each tenant's first `limit` due jobs of `queue` and `tasks` outside the closed lanes."""
    found: list[JobRow] = []
    for keys in tables.claimable.get(queue, {}).values():
        offered = 0
        for key in _due(keys, now):
            row = tables.jobs[key[2]]
            if (row.lane is not None and row.lane in closed) or (
                tasks is not None and row.task not in tasks
            ):
                continue
            found.append(row)
            offered += 1
            if offered == limit:
                break
    return found


def _pick(tables: MemoryTables, queue: str, limit: int, now: int, tasks: Tasks) -> list[JobRow]:
    """The jobs one queue gives a claim of at most `limit` jobs, in claim order."""
    rooms = lane_rooms(tables, now, limit)
    closed = {lane for lane, room in rooms.items() if room == 0} | paused(tables, PauseKind.LANE)
    taken: Counter[str | None] = Counter()
    picked: list[JobRow] = []
    for row in in_claim_order(_candidates(tables, queue, limit, closed, now, tasks)):
        taken[row.lane] += 1
        if row.lane in rooms and taken[row.lane] > rooms[row.lane]:
            continue
        picked.append(row)
        if len(picked) == limit:
            break
    # The SQLite store orders what it took by the turns among those jobs alone.
    return in_claim_order(picked)


def claim(
    tables: MemoryTables,
    queues: Sequence[str],
    limit: int,
    worker_id: str,
    lease_ms: int,
    now: int,
    tasks: Tasks = None,
) -> list[Job]:
    """Take up to `limit` due queued jobs of `tasks` (None: any) from `queues` under fresh
    leases, in claim order."""
    transition = transitions.claimed(now, worker_id, lease_ms)
    claimed: list[JobRow] = []
    for queue in queue_order(tables, queues):
        picked = _pick(tables, queue, limit - len(claimed), now, tasks)
        for row in picked:
            row.lane_grant = None  # a new attempt holds no grant in its lane yet
            write_transition(tables, row, transition)
        claimed += picked
        if len(claimed) == limit:
            break
    return [job_from_row(row) for row in claimed]
