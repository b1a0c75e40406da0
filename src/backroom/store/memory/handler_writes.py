"""What a running handler stores through its lease, in memory: progress and `once` records.

Every write here is fenced: it applies only while the job runs under the handler's
lease token.
"""

from __future__ import annotations

from backroom.core.errors import LeaseLost
from backroom.core.job import JSON, Lease
from backroom.store.memory.history import record_progress
from backroom.store.memory.part import MemoryPart
from backroom.store.memory.tables import MemoryTables, OnceRow
from backroom.store.protocol import OnceRecord
from backroom.store.rows import dump_json, load_json


def _set_progress(
    tables: MemoryTables, lease: Lease, fraction: float | None, partial: JSON, now: int
) -> bool:
    """Store progress and partial output (None keeps a value); False if the lease is lost."""
    row = tables.held(lease)
    if row is None:
        return False
    if partial is not None:
        row.partial = dump_json(partial)
    if fraction is not None:
        row.progress = fraction
    row.updated_at = now
    record_progress(tables, row.id, now)
    return True


def _records(tables: MemoryTables, lease: Lease) -> dict[str, OnceRow]:
    """The job's `once` records, if `lease` is still held."""
    if tables.held(lease) is None:
        raise LeaseLost(f"job {lease.job_id} is no longer held under lease {lease.token}")
    return tables.once.setdefault(lease.job_id, {})


def _once_begin(tables: MemoryTables, lease: Lease, name: str, now: int) -> OnceRecord | None:
    """Claim the job's `once` entry `name`: None if this call did, else the stored record."""
    records = _records(tables, lease)
    record = records.get(name)
    if record is None:
        records[name] = OnceRow(done=False, created_at=now)
        return None
    return OnceRecord(done=record.done, result=load_json(record.result))


def _once_end(tables: MemoryTables, lease: Lease, name: str, result: JSON, now: int) -> None:
    """Record the result of the job's `once` effect `name`."""
    records = _records(tables, lease)
    stored = dump_json(result)
    record = records.setdefault(name, OnceRow(done=True, created_at=now))
    record.done, record.result = True, stored


def _once_abort(tables: MemoryTables, lease: Lease, name: str) -> None:
    """Forget the job's unfinished `once` entry `name`, so a later call may run it again."""
    records = _records(tables, lease)
    record = records.get(name)
    if record is not None and not record.done:
        del records[name]


class MemoryHandlerWrites(MemoryPart):
    """What a running handler writes through its lease (see `HandlerWriteStore`)."""

    async def set_progress(
        self, lease: Lease, fraction: float | None, partial: JSON, now: int
    ) -> bool:
        """Store coarse progress and partial output; None leaves a value as it was."""
        return _set_progress(self._tables, lease, fraction, partial, now)

    async def once_begin(self, lease: Lease, name: str, now: int) -> OnceRecord | None:
        """Claim the `once` entry `name`: None if this caller must run the effect."""
        return _once_begin(self._tables, lease, name, now)

    async def once_end(self, lease: Lease, name: str, result: JSON, now: int) -> None:
        """Record the result of the `once` effect this lease began."""
        _once_end(self._tables, lease, name, result, now)

    async def once_abort(self, lease: Lease, name: str) -> None:
        """Forget the `once` entry this lease began: its effect raised, so it may run again."""
        _once_abort(self._tables, lease, name)
