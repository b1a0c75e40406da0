"""Group commit of single submissions: concurrent `submit` calls share one store call.

Each `submit` is a transaction and a commit (an fsync on SQLite, a WAL flush and round
trips on PostgreSQL). An API server under load has many in flight at once; with
`SubmitGroups`, what gathers while earlier groups are being stored goes to the store as
one `submit_many` (one multi-row insert, one transaction), so a commit carries every
submission that arrived meanwhile (the grouping is `GroupWriter`'s; at most `parallel`
groups in flight). One caller alone waits for nothing: its group is itself.

A group either stores every submission or none (one transaction), or (PostgreSQL,
when no job of the group has a cap) stores each in one statement and answers each on
its own. When one submission of an all-or-none group is refused (its key was used with
another body, or its tenant is at its cap), the group is stored again one submission
at a time, so only that one is refused: each caller gets exactly the answer it would
have got alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from backroom.core.errors import IdempotencyConflict, QueueFull
from backroom.core.job import NewJob, SubmitResult
from backroom.store.group_writes import GroupWriter, Turn

StoreGroup = Callable[[Sequence[NewJob], int], Awaitable[Sequence[SubmitResult | Exception]]]
"""Store several jobs, in order: all or none (raising what one of them earned), or
each on its own (each one's result, or the error it alone earned)."""

StoreOne = Callable[[NewJob, int], Awaitable[SubmitResult]]
"""Store one job."""

_REFUSALS = (IdempotencyConflict, QueueFull)
"""What one submission of a group may earn on its own: the others must not share it."""

Submitted = tuple[NewJob, int]
"""A job to store, and the time it was submitted."""


class SubmitGroups:
    """Single submissions, stored a group at a time (see the module)."""

    def __init__(
        self,
        store_group: StoreGroup,
        store_one: StoreOne,
        parallel: int = 1,
        turn: Turn | None = None,
    ) -> None:
        self._store_group = store_group
        self._store_one = store_one
        self._writer: GroupWriter[Submitted, SubmitResult] = GroupWriter(
            self._store_many, parallel, turn
        )

    async def submit(self, new: NewJob, now: int) -> SubmitResult:
        """Store `new` with whatever else is waiting; its own result or error."""
        return await self._writer.add((new, now))

    async def _store_many(self, group: list[Submitted]) -> Sequence[SubmitResult | Exception]:
        if len(group) == 1:
            return [await self._alone(*group[0])]
        # The group's time is its latest submission's: no job is created before its call.
        now = max(submitted_at for _, submitted_at in group)
        try:
            return await self._store_group([new for new, _ in group], now)
        except _REFUSALS:
            return [await self._alone(new, submitted_at) for new, submitted_at in group]

    async def _alone(self, new: NewJob, now: int) -> SubmitResult | Exception:
        try:
            return await self._store_one(new, now)
        except Exception as error:
            return error
